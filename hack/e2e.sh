#!/usr/bin/env bash
# Runs the end-to-end suite (build tag e2e) against a real kube-apiserver and
# etcd. The control plane is built first, in the open, so its progress shows;
# a cold build takes minutes, later runs reuse _output/controlplane/bin.
#
# Usage: hack/e2e.sh [go test flags...]     e.g. hack/e2e.sh -run TestControlPlane
# Env:   E2E_TIMEOUT (default 60m), CONTROLPLANE_BIN_DIR
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

echo "e2e: building (or reusing) kube-apiserver and etcd"
CONTROLPLANE_BIN_DIR="$(hack/build-controlplane.sh)"
export CONTROLPLANE_BIN_DIR

echo "e2e: go test -tags e2e ./e2e/..."
exec go test -tags e2e -count=1 -v -timeout "${E2E_TIMEOUT:-60m}" "$@" ./e2e/...
