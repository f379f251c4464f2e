#!/usr/bin/env bash
# Shows that the e2e Windows lane catches a broken hcn adapter: each patch in
# hack/winlane-mutants/ plants one bug in hnslb/hcnclient (the Windows-only
# client over hcsshim's hcn); the script applies it to a copy of HEAD (git
# archive, in a temp folder: the checkout is never touched), runs the lane
# there and requires a lane test to FAIL. It prints each mutant's verdict with
# the failing test lines, and exits 1 if the lane passed with a bug, failed
# without a test failing (a build error proves nothing), or a patch no longer
# applies. Not part of `make test`: each mutant costs a lane run (minutes).
#
# Usage: hack/winlane-mutants.sh [NAME...]   NAME of hack/winlane-mutants/NAME.patch; default all
# Env:   CONTROLPLANE_BIN_DIR (as for hack/e2e.sh), WINLANE_MUTANT_RUN (go test -run;
#        default TestWindowsLane$), KEEP=1 keeps the copies.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=hack/go-toolchain.sh
. hack/go-toolchain.sh
root=$PWD
logs=$root/_output/winlane-mutants
# The copies reuse this checkout's control plane build (hack/e2e.sh).
export CONTROLPLANE_BIN_DIR=${CONTROLPLANE_BIN_DIR:-$root/_output/controlplane/bin}
mkdir -p "$logs"

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for p in hack/winlane-mutants/*.patch; do names+=("$(basename "$p" .patch)"); done
fi

bad=0
for name in "${names[@]}"; do
  patch=$root/hack/winlane-mutants/$name.patch
  [ -f "$patch" ] || { echo "winlane-mutants: no $patch" >&2; exit 2; }
  copy=$(mktemp -d /tmp/winlane-mutant.XXXXXX)
  git archive HEAD | tar -x -C "$copy"
  if ! (cd "$copy" && git apply "$patch"); then
    echo "winlane-mutants: $name: FAIL: the patch no longer applies to HEAD; update it"
    bad=1
  else
    log=$logs/$name.log
    echo "winlane-mutants: $name: running the lane (log: $log)"
    if (cd "$copy" && hack/e2e.sh -run "${WINLANE_MUTANT_RUN:-TestWindowsLane\$}") >"$log" 2>&1; then
      echo "winlane-mutants: $name: FAIL: the lane PASSED with the bug"
      bad=1
    elif grep -qE -- '--- FAIL: TestWindowsLane' "$log"; then
      echo "winlane-mutants: $name: caught; the lane failed:"
      # The failing tests, then the first complaint with its got/want lines.
      { grep -E -- '--- FAIL' "$log"
        awk 'seen && /^ *(===|---) / { exit } /_test\.go:[0-9]+:/ && !/ under Wine$/ { if (seen++) exit } seen' "$log" | head -12
      } | sed 's/^/  /'
    else
      echo "winlane-mutants: $name: FAIL: the run failed, but no lane test did (see the log)"
      bad=1
    fi
  fi
  [ "${KEEP:-}" = 1 ] || rm -rf "$copy"
done
exit $bad
