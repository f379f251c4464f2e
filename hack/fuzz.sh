#!/usr/bin/env bash
# Runs every Go fuzz target in the module briefly: CI's short form of the
# long runs docs/reliability.md reports. Targets are found, not listed, so a
# new Fuzz function is fuzzed without touching this script. A crasher fails
# the run and is written to the package's testdata/fuzz/<Target>/; commit it
# with the fix, as a regression input that plain `go test` replays.
#
# Each target is fuzzed twice: guided by coverage (`go test -fuzz`), then
# blind, by its test binary built without coverage instrumentation, which
# mutates at random. The blind pass finds what guidance walks past: in a
# minute each it found three inputs that hours of guided runs had not.
#
# Usage: hack/fuzz.sh [name-regexp]          e.g. hack/fuzz.sh 'FuzzCompute|FuzzServer'
# Env:   FUZZTIME per target (default 10s; "10m" for a long run),
#        FUZZBLIND per target for the blind pass (default 5s; 0 skips it),
#        FUZZRETRY the budget of the one rerun after Go's shutdown race
#        (default: as many executions as the failed run made, at least 20;
#        a count sets no deadline, and one sized by the run keeps a slow
#        target's rerun as short as its first),
#        FUZZCACHE the root of the guided pass's corpus cache, laid out as
#        go's own (<root>/<import path>/<target>) (default: a fresh directory,
#        so a run starts from the tracked corpus alone and its baseline does
#        not grow with what earlier runs on the machine found; set it to
#        "$(go env GOCACHE)/fuzz", go's own, for long runs that build on
#        each other and on `go test -fuzz` by hand),
#        FUZZPARALLEL fuzzing workers per target (default 1: the machine is shared)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"

FUZZTIME="${FUZZTIME:-10s}"
FUZZBLIND="${FUZZBLIND:-5s}"
FUZZRETRY="${FUZZRETRY:-}"
FUZZPARALLEL="${FUZZPARALLEL:-1}"
filter="${1:-.*}"

# "package-dir target" for every `func FuzzXxx(f *testing.F)` in tracked test files.
targets="$(git ls-files '*_test.go' | xargs grep -HoE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' |
	sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#' | sort -u | grep -E " (${filter})\$" || true)"
if [[ -z "${targets}" ]]; then
	echo "fuzz: no target matches ${filter}" >&2
	exit 1
fi

blind_dir="$(mktemp -d)"
trap 'rm -rf "${blind_dir}"' EXIT
FUZZCACHE="${FUZZCACHE:-${blind_dir}/guided-cache}"
module="$(go list -m)"

# fuzz_once runs one target, guided or blind, for a -fuzztime budget, its
# output left in out; on
# failure it prints the output and returns 1, or 2 when the only complaint
# is Go 1.26's fuzz-coordinator shutdown race: a bare "context deadline
# exceeded" at the -fuzztime boundary with no failing input written
# (go.dev/issue/75804, fixed in Go 1.27).
fuzz_once() {
	local mode="$1" dir="$2" target="$3" budget="$4" corpus before after bin ok=0
	corpus="${dir}/testdata/fuzz/${target}"
	before="$(ls "${corpus}" 2>/dev/null | wc -l)"
	if [[ "${mode}" == guided ]]; then
		# go test passes its own cache as <GOCACHE>/fuzz/<import path>; the
		# later flag wins, laid out the same, so FUZZCACHE can name go's.
		out="$(go test "./${dir}" -run '^$' -fuzz "^${target}\$" -fuzztime "${budget}" -parallel "${FUZZPARALLEL}" \
			-args -test.fuzzcachedir "${FUZZCACHE}/${module}/${dir}" 2>&1)" || ok=$?
	else
		bin="${blind_dir}/${dir//\//_}.test"
		if [[ ! -x "${bin}" ]]; then
			go test -c -o "${bin}" "./${dir}"
		fi
		# The binary runs in its package's directory, as go test runs it, so
		# that a failing input lands in the package's testdata.
		out="$(cd "${dir}" && "${bin}" -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "${budget}" \
			-test.parallel "${FUZZPARALLEL}" -test.fuzzcachedir "${blind_dir}/cache" 2>&1)" || ok=$?
	fi
	if [[ ${ok} -eq 0 ]]; then
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

# fuzz_target runs fuzz_once, and once more for a count of executions after
# the shutdown race: the race lives on the duration's deadline, which a
# count does not set (CI once hit it twice in a row on FuzzPluginInput, the
# worker busy minimizing a new input when the deadline came). A second
# failure of any kind fails the run.
fuzz_target() {
	local mode="$1" dir="$2" target="$3" budget="$4" rc=0 retry execs
	echo "fuzz: ${target} in ./${dir}, ${mode}, for ${budget}"
	fuzz_once "${mode}" "${dir}" "${target}" "${budget}" || rc=$?
	if [[ ${rc} -eq 2 ]]; then
		# A fixed count once ran a target of one execution a second for ten
		# minutes, and could have for 83: the rerun is sized by the run.
		execs="$(grep -oE 'execs: [0-9]+' <<<"${out}" | tail -n 1 | grep -oE '[0-9]+' || true)"
		retry="${FUZZRETRY:-$(( ${execs:-0} > 20 ? ${execs:-0} : 20 ))x}"
		echo "fuzz: WARNING: ${target} hit Go's fuzz shutdown race (go.dev/issue/75804, no failing input); running it again for ${retry}" >&2
		rc=0
		fuzz_once "${mode}" "${dir}" "${target}" "${retry}" || rc=$?
	fi
	if [[ ${rc} -ne 0 ]]; then
		echo "fuzz: ${target} failed (${mode})" >&2
		exit 1
	fi
}

start=${SECONDS}
while read -r dir target; do
	fuzz_target guided "${dir}" "${target}" "${FUZZTIME}"
	if [[ "${FUZZBLIND}" != 0 ]]; then
		fuzz_target blind "${dir}" "${target}" "${FUZZBLIND}"
	fi
done <<<"${targets}"
echo "fuzz: $(wc -l <<<"${targets}") targets passed in $((SECONDS - start))s"
