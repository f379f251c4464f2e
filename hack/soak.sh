#!/usr/bin/env bash
# make soak: the fault soak (hack/soak). Runs the hnsproxy, hnssim and hnscni
# binaries hack/build.sh puts in _output/bin against a real kube-apiserver and etcd,
# with HNS faults and restarts, apiserver restarts and hnsproxy SIGKILLs,
# then checks every node's HNS against the API objects. The last stdout line
# is the JSON report; the exit status is non-zero on any loss, leak or crash.
#
# Env: SOAK_DURATION (default 3m; CI uses 45s), SOAK_SEED (default 1),
#      SOAK_NETWORK (l2bridge, the default, or overlay),
#      SOAK_PROFILES (the nodes' hnssim profiles, default ws2022,ws2025),
#      SOAK_CONVERGE_TIMEOUT (default 5m), CONTROLPLANE_BIN_DIR,
#      SOAK_KEEP_DIR (set: keep the logs of a run that passed too).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"

echo "==> Building (or reusing) kube-apiserver and etcd" >&2
CONTROLPLANE_BIN_DIR="$(hack/build-controlplane.sh)"
export CONTROLPLANE_BIN_DIR

echo "==> Building the node binaries, host-local and the soak driver" >&2
BIN="$(hack/build.sh hnssim hnscni hnsproxy host-local soak)"
export HNSPROXY_TOOLS_DIR="${BIN}"
exec "${BIN}/soak" "$@"
