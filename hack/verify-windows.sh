#!/usr/bin/env bash
# Builds, vets and test-compiles every package for Windows, so the hcn adapter
# and everything that links it stay buildable from Linux, and checks that the
# Windows release binaries leave the HNS simulator (sim, sim/remote) out.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=hack/go-toolchain.sh
. hack/go-toolchain.sh
export GOOS=windows GOARCH=amd64 CGO_ENABLED=0
echo "windows: no simulator in the release binaries"
sim=$(go list -deps ./cmd/hnsproxy ./cmd/hnscni ./cmd/hnsproxy-diag | grep -E '^github\.com/hnsproxy/hnsproxy/sim(/|$)' || true)
if [ -n "$sim" ]; then
  echo "windows: FAIL: the Windows hnsproxy, hnscni or hnsproxy-diag links the simulator (split it off with a !windows build constraint):" >&2
  echo "$sim" >&2
  exit 1
fi
echo "windows: go build ./..."
go build ./...
echo "windows: go vet ./..."
go vet ./...
echo "windows: go test -c (every package with tests)"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
for pkg in $(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...); do
  go test -c -o "$out/$(basename "$pkg").test.exe" "$pkg"
done
echo "windows: ok"
