#!/usr/bin/env bash
# make demo: a real kube-apiserver and etcd, two simulated Windows nodes
# (hnssim + hnsproxy each, pods wired by hnscni), a few Services, and what
# hnsproxy programmed into HNS. Runs until Ctrl-C; DEMO_ONESHOT=1 prints and
# exits (CI). Everything lives in demo/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"
echo "==> Building the demo and the node binaries" >&2
# One build for all; the demo takes the node binaries from HNSPROXY_TOOLS_DIR.
BIN="$(hack/build.sh demo hnssim hnscni hnsproxy hnsproxy-diag host-local)"
export HNSPROXY_TOOLS_DIR="${HNSPROXY_TOOLS_DIR:-${BIN}}"
exec "${BIN}/demo" "$@"
