#!/usr/bin/env bash
# Benchmarks and the scale harness (`make bench`; not part of `make test`).
# Runs the desired-state and reconciler benchmarks with allocations, then
# the scale harness at 1,000 and 10,000 Services. JSON results go to
# _output/bench/. Environment: BENCHTIME (default 0.5s), CHANGES (1000),
# HNS_LATENCY (0s), SIZES ("1000 10000").
set -euo pipefail
cd "$(dirname "$0")/.."
out=_output/bench
mkdir -p "$out"

echo "== go test -bench (desired state, reconciler)"
go test -run '^$' -bench . -benchmem -benchtime="${BENCHTIME:-0.5s}" \
  ./proxier/desired/ ./reconciler/ | tee "$out/benchmarks.txt"

echo "== scale harness"
scale="$(hack/build.sh scale)/scale"
status=0
for n in ${SIZES:-1000 10000}; do
  echo "-- $n services"
  if ! "$scale" -services "$n" -endpoints-per-service 10 -nodes 100 \
      -changes "${CHANGES:-1000}" -hns-latency "${HNS_LATENCY:-0s}" \
      -cpuprofile "$out/scale-$n.cpu.pprof" >"$out/scale-$n.stdout"; then
    status=1
  fi
  tail -n 1 "$out/scale-$n.stdout" | tee "$out/scale-$n.json"
done
echo "-- 1000 services with 1ms HNS latency per call (wall time)"
if ! "$scale" -services 1000 -changes 200 -hns-latency 1ms >"$out/scale-1000-latency1ms.stdout"; then
  status=1
fi
tail -n 1 "$out/scale-1000-latency1ms.stdout" | tee "$out/scale-1000-latency1ms.json"
echo "profiles: go tool pprof -top $scale $out/scale-<n>.cpu.pprof"
exit $status
