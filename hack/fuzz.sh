#!/usr/bin/env bash
# Runs every Go fuzz target in the module briefly: CI's short form of the
# long runs docs/reliability.md reports. Targets are found, not listed, so a
# new Fuzz function is fuzzed without touching this script. A crasher fails
# the run and is written to the package's testdata/fuzz/<Target>/; commit it
# with the fix, as a regression input that plain `go test` replays.
#
# Usage: hack/fuzz.sh [name-regexp]          e.g. hack/fuzz.sh 'FuzzCompute|FuzzServer'
# Env:   FUZZTIME per target (default 10s; "10m" for a long run),
#        FUZZPARALLEL fuzzing workers per target (default 1: the machine is shared)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

FUZZTIME="${FUZZTIME:-10s}"
FUZZPARALLEL="${FUZZPARALLEL:-1}"
filter="${1:-.*}"

# "package-dir target" for every `func FuzzXxx(f *testing.F)` in tracked test files.
targets="$(git ls-files '*_test.go' | xargs grep -HoE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' |
	sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#' | sort -u | grep -E " (${filter})\$" || true)"
if [[ -z "${targets}" ]]; then
	echo "fuzz: no target matches ${filter}" >&2
	exit 1
fi

start=${SECONDS}
while read -r dir target; do
	echo "fuzz: ${target} in ./${dir} for ${FUZZTIME}"
	go test "./${dir}" -run '^$' -fuzz "^${target}\$" -fuzztime "${FUZZTIME}" -parallel "${FUZZPARALLEL}"
done <<<"${targets}"
echo "fuzz: $(wc -l <<<"${targets}") targets passed in $((SECONDS - start))s"
