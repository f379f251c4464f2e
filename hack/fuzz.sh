#!/usr/bin/env bash
# Runs every Go fuzz target in the module briefly: CI's short form of the
# long runs docs/reliability.md reports. Targets are found, not listed, so a
# new Fuzz function is fuzzed without touching this script. A crasher fails
# the run and is written to the package's testdata/fuzz/<Target>/; commit it
# with the fix, as a regression input that plain `go test` replays.
#
# Usage: hack/fuzz.sh [name-regexp]          e.g. hack/fuzz.sh 'FuzzCompute|FuzzServer'
# Env:   FUZZTIME per target (default 10s; "10m" for a long run),
#        FUZZRETRY the budget of the one rerun after Go's shutdown race
#        (default 5000x: a count of executions, which sets no deadline),
#        FUZZPARALLEL fuzzing workers per target (default 1: the machine is shared)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

FUZZTIME="${FUZZTIME:-10s}"
FUZZRETRY="${FUZZRETRY:-5000x}"
FUZZPARALLEL="${FUZZPARALLEL:-1}"
filter="${1:-.*}"

# "package-dir target" for every `func FuzzXxx(f *testing.F)` in tracked test files.
targets="$(git ls-files '*_test.go' | xargs grep -HoE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' |
	sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#' | sort -u | grep -E " (${filter})\$" || true)"
if [[ -z "${targets}" ]]; then
	echo "fuzz: no target matches ${filter}" >&2
	exit 1
fi

# fuzz_once runs one target for a -fuzztime budget; on failure it prints the
# output and returns 1, or 2 when the only complaint is Go 1.26's
# fuzz-coordinator shutdown race: a bare "context deadline exceeded" at the
# -fuzztime boundary with no failing input written (go.dev/issue/75804,
# fixed in Go 1.27).
fuzz_once() {
	local dir="$1" target="$2" budget="$3" out corpus before after
	corpus="${dir}/testdata/fuzz/${target}"
	before="$(ls "${corpus}" 2>/dev/null | wc -l)"
	if out="$(go test "./${dir}" -run '^$' -fuzz "^${target}\$" -fuzztime "${budget}" -parallel "${FUZZPARALLEL}" 2>&1)"; then
		printf '%s\n' "${out}" | tail -n 2
		return 0
	fi
	printf '%s\n' "${out}"
	after="$(ls "${corpus}" 2>/dev/null | wc -l)"
	if [[ "${after}" == "${before}" ]] && grep -q '^    context deadline exceeded$' <<<"${out}" && ! grep -q 'Failing input' <<<"${out}"; then
		return 2
	fi
	return 1
}

start=${SECONDS}
while read -r dir target; do
	echo "fuzz: ${target} in ./${dir} for ${FUZZTIME}"
	rc=0
	fuzz_once "${dir}" "${target}" "${FUZZTIME}" || rc=$?
	if [[ ${rc} -eq 2 ]]; then
		# Retried once, loudly, for a count of executions: the race lives on
		# the duration's deadline, which a count does not set (CI once hit it
		# twice in a row on FuzzPluginInput, the worker busy minimizing a new
		# input when the deadline came). A second failure of any kind fails
		# the run.
		echo "fuzz: WARNING: ${target} hit Go's fuzz shutdown race (go.dev/issue/75804, no failing input); running it again for ${FUZZRETRY}" >&2
		rc=0
		fuzz_once "${dir}" "${target}" "${FUZZRETRY}" || rc=$?
	fi
	if [[ ${rc} -ne 0 ]]; then
		echo "fuzz: ${target} failed" >&2
		exit 1
	fi
done <<<"${targets}"
echo "fuzz: $(wc -l <<<"${targets}") targets passed in $((SECONDS - start))s"
