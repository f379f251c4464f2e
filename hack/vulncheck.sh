#!/usr/bin/env bash
# Known vulnerabilities the shipped code reaches: govulncheck over every
# package, built for Linux and for Windows (hnsproxy, hnscni and
# hnsproxy-diag run there, and some of Go's fixes are Windows-only), against
# the Go vulnerability database. Fails when code of this module calls a
# vulnerable function of a module it requires or of the standard library of
# the Go that builds it (go.mod's go line; hack/go-toolchain.sh); a
# vulnerable package imported but not called is listed and does not fail.
#
# The database is golang.org/x/vulndb's reports at the version
# hack/install-tools.sh pins for indexdb (the module holds both the tool and
# the data), indexed into _output/vulndb/<version>: vuln.go.dev cannot be
# reached from CI, and a pinned database keeps a commit's verdict the same on
# every run. Moving that pin is how newer reports come in.
#
# Usage: hack/vulncheck.sh                          # the pinned database
#        VULNDB=https://vuln.go.dev hack/vulncheck.sh   # the live one, where reachable
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"
cd "${ROOT}"
TOOLS="$(hack/install-tools.sh)"

log() { printf 'vulncheck: %s\n' "$*" >&2; }

db="${VULNDB:-}"
if [[ -z "${db}" ]]; then
	# `go version -m` reads the module version indexdb was built from.
	version="$(go version -m "${TOOLS}/indexdb" | awk '$1 == "mod" {print $3; exit}')"
	out="${ROOT}/_output/vulndb/${version}"
	if [[ ! -f "${out}/index/db.json" ]]; then
		log "indexing golang.org/x/vulndb@${version}"
		src="$(GOFLAGS= go mod download -json "golang.org/x/vulndb@${version}" |
			sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
		if [[ -z "${src}" || ! -d "${src}/data/osv" ]]; then
			log "the module cache has no reports for golang.org/x/vulndb@${version}"
			exit 1
		fi
		rm -rf "${out}.tmp"
		"${TOOLS}/indexdb" -vulns "${src}/data/osv" -out "${out}.tmp"
		rm -rf "${out}"
		mv "${out}.tmp" "${out}"
	fi
	db="file://${out}"
fi

log "$(go version), database ${db}"
status=0
for goos in linux windows; do
	log "GOOS=${goos} govulncheck ./..."
	GOOS="${goos}" "${TOOLS}/govulncheck" -db "${db}" ./... || status=$?
done
if [[ "${status}" != 0 ]]; then
	log "code of this module reaches a known vulnerability (above): move the module, or go.mod's go line for the standard library, to the fixed version it names"
	exit 1
fi
