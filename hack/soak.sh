#!/usr/bin/env bash
# make soak: the fault soak (hack/soak). Runs the hnsproxy, hnssim and hnscni
# binaries `make build` put in bin/ against a real kube-apiserver and etcd,
# with HNS faults and restarts, apiserver restarts and hnsproxy SIGKILLs,
# then checks every node's HNS against the API objects. The last stdout line
# is the JSON report; the exit status is non-zero on any loss, leak or crash.
#
# Env: SOAK_DURATION (default 3m; CI uses 45s), SOAK_SEED (default 1),
#      SOAK_CONVERGE_TIMEOUT (default 5m), CONTROLPLANE_BIN_DIR.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

echo "==> Building (or reusing) kube-apiserver and etcd" >&2
CONTROLPLANE_BIN_DIR="$(hack/build-controlplane.sh)"
export CONTROLPLANE_BIN_DIR

# The node binaries are bin/'s; host-local (the IPAM plugin hnscni calls)
# joins them in a folder of their own.
TOOLS="${ROOT}/_output/soak/bin"
mkdir -p "${TOOLS}"
for b in hnssim hnscni hnsproxy; do
	ln -sf "${ROOT}/bin/${b}" "${TOOLS}/${b}"
done
echo "==> Building host-local and the soak driver" >&2
go build -o "${TOOLS}/" github.com/containernetworking/plugins/plugins/ipam/host-local
go build -o "${ROOT}/_output/soak/soak" ./hack/soak
export HNSPROXY_TOOLS_DIR="${TOOLS}"
exec "${ROOT}/_output/soak/soak" "$@"
