#!/usr/bin/env bash
# Benchmarks and the scale harness (`make bench`; not part of `make test`).
# Runs the desired-state and reconciler benchmarks with allocations, then
# the scale harness at 1,000 and 10,000 Services on l2bridge and overlay,
# and at 5,000 nodes on overlay (ws2025, no HNS latency: the CPU figures),
# each change mix once on ws2022 (no modify: an update is a delete and a
# create), at 10,000 Services with 0.2 ms per hcn RPC (the wall-time
# model), and at 10,000 Services with 200 ms of idle time before each change
# (what a lone change costs on a quiet node); and under Wine, the hcn
# client's CPU per HNS call (hack/wine-test.sh --bench). JSON results and CPU profiles go to _output/bench/. Environment:
# BENCHTIME (default 0.5s), CHANGES (1000), SIZES ("1000 10000"),
# MODES ("l2bridge overlay"), RPC_LATENCY (0.2ms).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=hack/go-toolchain.sh
. hack/go-toolchain.sh
out=_output/bench
mkdir -p "$out"

echo "== go test -bench (desired state, reconciler)"
go test -run '^$' -bench . -benchmem -benchtime="${BENCHTIME:-0.5s}" \
  ./proxier/desired/ ./reconciler/ | tee "$out/benchmarks.txt"

echo "== hcn client (under Wine: the client's and hcn's CPU per HNS call)"
if ! hack/wine-test.sh --bench; then
  echo "bench: the hcn client's benchmarks did not run (hack/install-deps.sh installs wine and mingw-w64)" >&2
  status_wine=1
fi

echo "== scale harness"
scale="$(hack/build.sh scale)/scale"
status=${status_wine:-0}
# run NAME ARGS...: one harness run; its JSON line goes to $out/NAME.json.
run() {
  local name="$1"
  shift
  echo "-- $name: $*"
  if ! "$scale" "$@" >"$out/$name.stdout"; then
    status=1
  fi
  tail -n 1 "$out/$name.stdout" | tee "$out/$name.json"
}
for mode in ${MODES:-l2bridge overlay}; do
  for n in ${SIZES:-1000 10000}; do
    run "scale-$mode-$n" -mode "$mode" -services "$n" -changes "${CHANGES:-1000}" \
      -cpuprofile "$out/scale-$mode-$n.cpu.pprof" -cpuprofile-phase cold
  done
done
run scale-overlay-10000-nodes5000 -mode overlay -services 10000 -nodes 5000 -changes "${CHANGES:-1000}"
run scale-l2bridge-10000-ws2022 -profile ws2022 -services 10000 -changes "${CHANGES:-1000}"
run scale-l2bridge-10000-ws2019 -profile ws2019 -services 10000 -changes "${CHANGES:-1000}"
run scale-l2bridge-10000-latency -services 10000 -changes 200 -hns-latency "${RPC_LATENCY:-0.2ms}"
run scale-l2bridge-10000-after-idle -services 10000 -changes 100 -pause 200ms -new-local-pods 0 -replacements 0 \
  -service-churn 0 -scales 30 -drains 0 -drift 0 -changes-during-repair 0
echo "profiles: go tool pprof -top $scale $out/scale-<mode>-<n>.cpu.pprof (the cold start)"
exit $status
