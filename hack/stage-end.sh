#!/usr/bin/env bash
# Ends a stage of `make test` under CI: prints the disk's use and the size of
# the stage's build cache, and with "drop" removes that cache when it is one
# of the per-stage caches the Makefile gives under CI (_output/gocache/*).
# A full disk once failed a CI run that passed everywhere else; these lines
# say which stage grew it, and the drops keep the run's peak to one stage's
# cache (docs/e2e.md, "CI's disk").
#
# Usage: hack/stage-end.sh STAGE [drop]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"
stage="$1"
drop="${2:-}"
cache="$(go env GOCACHE)"
size="$(du -sh "${cache}" 2>/dev/null | cut -f1 || true)"
echo "stage ${stage}: build cache ${cache} holds ${size:-nothing}"
if [[ "${drop}" == drop && "${cache}" == "${ROOT}/_output/gocache/"* ]]; then
	rm -rf "${cache}"
	echo "stage ${stage}: removed its build cache"
fi
df -h "${ROOT}" "${TMPDIR:-/tmp}" | awk -v s="${stage}" 'NR == 1 || !seen[$1]++ { print "stage " s ": " $0 }'
