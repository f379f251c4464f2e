#!/usr/bin/env bash
# Runs the end-to-end suite (build tag e2e) against a real kube-apiserver and
# etcd. The control plane is built first, in the open, so its progress shows;
# a cold build takes minutes, later runs reuse _output/controlplane/bin.
#
# Usage: hack/e2e.sh [go test flags...]     e.g. hack/e2e.sh -run TestControlPlane
# Env:   E2E_TIMEOUT (default 60m), CONTROLPLANE_BIN_DIR; with CI set any
#        skipped test fails the run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"

echo "e2e: building (or reusing) kube-apiserver and etcd"
CONTROLPLANE_BIN_DIR="$(hack/build-controlplane.sh)"
export CONTROLPLANE_BIN_DIR

# With CI set a skipped test fails the run: the suite's skips (the Windows
# lane without Wine) are for laptops, and a skip in CI is a test not run.
log="$(mktemp)"
trap 'rm -f "${log}"' EXIT
echo "e2e: go test -tags e2e ./e2e/..."
rc=0
go test -tags e2e -count=1 -v -timeout "${E2E_TIMEOUT:-60m}" "$@" ./e2e/... 2>&1 | tee "${log}" || rc=$?
if [[ -n "${CI:-}" && "${CI}" != 0 && "${CI}" != false ]] && grep -E -- '^ *--- SKIP: ' "${log}" >&2; then
	echo "e2e: FAIL: the tests above skipped, and CI is set: CI must run every test" >&2
	exit 1
fi
exit "${rc}"
