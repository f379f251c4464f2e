#!/usr/bin/env bash
# make demo: a real kube-apiserver and etcd, two simulated Windows nodes
# (hnssim + hnsproxy each, pods wired by hnscni), a few Services, and what
# hnsproxy programmed into HNS. Runs until Ctrl-C; DEMO_ONESHOT=1 prints and
# exits (CI). Everything lives in e2e/framework/cmd/demo.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
echo "==> Building the demo program" >&2
mkdir -p _output/bin
go build -o _output/bin/demo ./e2e/framework/cmd/demo
exec _output/bin/demo "$@"
