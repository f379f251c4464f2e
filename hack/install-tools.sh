#!/usr/bin/env bash
# Installs the Go tools `make lint` runs, at pinned versions, into
# _output/tools from the Go module proxy, so a fresh machine and CI lint with
# the same versions. Idempotent: a tool already installed at its pinned
# version is skipped. Prints the tools directory on stdout.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"
TOOLS="${ROOT}/_output/tools"

# "binary package@version", one per tool.
pinned=(
	"staticcheck honnef.co/go/tools/cmd/staticcheck@v0.8.2"
	"deadcode golang.org/x/tools/cmd/deadcode@v0.52.0"
	"govulncheck golang.org/x/vuln/cmd/govulncheck@v1.9.0"
	# The Go vulnerability database's reports and the tool that indexes them
	# (hack/vulncheck.sh): moving this version brings newer reports.
	"indexdb golang.org/x/vulndb/cmd/indexdb@v0.0.0-20261105234957-e22db6528018"
)

mkdir -p "${TOOLS}"
for entry in "${pinned[@]}"; do
	read -r bin pkg <<<"${entry}"
	want="${pkg##*@}"
	# `go version -m` reads the module version the binary was built from.
	have="$(go version -m "${TOOLS}/${bin}" 2>/dev/null | awk '$1 == "mod" {print $3; exit}' || true)"
	if [[ "${have}" != "${want}" ]]; then
		echo "install-tools: ${pkg}" >&2
		# GOFLAGS is cleared: the project's -buildvcs=false and any -mod flag
		# are for the module, not for installing tools outside it.
		GOFLAGS= GOBIN="${TOOLS}" go install "${pkg}"
	fi
done
echo "${TOOLS}"
