#!/usr/bin/env bash
# Builds, vets and test-compiles every package for Windows, so the hcn adapter
# and everything that links it stay buildable from Linux.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOOS=windows GOARCH=amd64 CGO_ENABLED=0
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
