#!/usr/bin/env bash
# Runs a real control plane (etcd + kube-apiserver, 127.0.0.1 only, RBAC on)
# in a directory, for the demo and for poking at by hand. The e2e tests use
# the same code (e2e/framework) from Go.
#
# Usage: hack/controlplane.sh start DIR               # build/reuse binaries, start, wait for /readyz, print exports
#        hack/controlplane.sh env DIR                 # print exports: eval "$(hack/controlplane.sh env DIR)"
#        hack/controlplane.sh restart-apiserver DIR   # stop and start kube-apiserver (etcd keeps the data)
#        hack/controlplane.sh stop DIR                # stop both by PID
#
# Exports: CONTROLPLANE_DIR, KUBECONFIG (admin, system:masters),
# KUBE_PROXY_KUBECONFIG (user system:kube-proxy), KUBE_APISERVER_URL,
# ETCD_URL, SERVICE_CIDRS. DIR holds keys, tokens, kubeconfigs, etcd data
# and the *.log files of both servers.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"

if [[ $# -ne 2 ]]; then
  sed -n 's/^# \{0,1\}//; 2,17p' "${BASH_SOURCE[0]}" >&2
  exit 2
fi
verb="$1"
[[ "${verb}" == start ]] && mkdir -p "$2"
dir="$(cd "$2" && pwd)"

args=()
if [[ "${verb}" == start ]]; then
  args+=(--bin-dir "$("${ROOT}/hack/build-controlplane.sh")")
fi
cd "${ROOT}"
exec go run ./e2e/framework/cmd/controlplane "${args[@]}" "${verb}" "${dir}"
