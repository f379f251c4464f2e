#!/usr/bin/env bash
# Runs the Windows-only Go tests (every package with a *_windows_test.go file,
# e.g. hnslb/hcnclient's hcn JSON-equality and error-mapping tests) on Linux
# under Wine, and fails unless at least one test ran and none failed or
# skipped: only a test that calls skipUnderWine (it tests what Wine does not
# implement) may skip, and the ok line names it as not run.
#
# Go >= 1.24 Windows binaries import ProcessPrng from bcryptprimitives.dll,
# which Wine 8 lacks; hack/wine/bcryptprimitives.c is a shim that provides it.
# Wine has no HNS either: hack/wine/computenetwork.c and vmcompute.c are a
# scriptable fake of HNS's client DLLs, so hcn's real code paths run. All are
# built with mingw-w64 and installed into a private Wine prefix under _output/
# (never the user's ~/.wine). Headless: no X, no Mono/Gecko, no network.
# A second pass runs hnslb/hcnclient's TestBridge* with the DLLs in bridge
# mode against a real hnssim (`serve --bridge`, loopback only).
#
# A third pass runs hnslb/hcnclient's benchmarks (what a call costs the
# client and hcn's code, bench_windows_test.go) with the fake DLLs quiet, a
# few iterations each, so they keep working; `hack/wine-test.sh --bench`
# runs only them, for BENCHTIME (default 1s) each, and keeps the results in
# _output/bench/hcnclient.txt (`make bench` does).
#
# Without wine or mingw-w64 this fails when CI is set, and skips loudly otherwise.
# Extra arguments go to the test binaries, e.g. hack/wine-test.sh -test.run=JSON.
set -euo pipefail
bench_only=""
if [ "${1:-}" = --bench ]; then
  bench_only=1
  shift
fi
cd "$(dirname "$0")/.."
# shellcheck source=hack/go-toolchain.sh
. hack/go-toolchain.sh
root=$PWD
out=$root/_output/wine
export WINEPREFIX=${HNSPROXY_WINEPREFIX:-$root/_output/wineprefix}

# hack/wine-prefix.sh builds the DLLs, prepares the prefix and prints the
# environment to run Wine with.
set +e
env_lines=$(hack/wine-prefix.sh)
rc=$?
set -e
if [ "$rc" -eq 3 ]; then
  echo "wine-test: SKIP: the Windows-only tests did NOT run (wine or mingw-w64 missing; hack/install-deps.sh installs them)" >&2
  exit 0
fi
[ "$rc" -eq 0 ] || { echo "wine-test: FAIL: hack/wine-prefix.sh failed" >&2; exit 1; }
while IFS='=' read -r key value; do export "$key=$value"; done <<<"$env_lines"
wine=$WINE
wineserver=$(command -v wineserver || command -v /usr/lib/wine/wineserver64 || true)
unset DISPLAY WAYLAND_DISPLAY

pkgs=$(find . -name '*_windows_test.go' -not -path './_output/*' -not -path './.cache/*' -exec dirname {} \; | sort -u)
[ -n "$pkgs" ] || { echo "wine-test: FAIL: no package has *_windows_test.go files" >&2; exit 1; }

status=0
# The benchmark pass: hnslb/hcnclient's benchmarks against the quiet fake DLLs.
bench_pass() {
  local benchtime=$1 exe=$out/hnslb_hcnclient.bench.exe log=$out/bench.log rc name
  echo "wine-test: bench: building the hnslb/hcnclient test binary"
  GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -c -o "$exe" ./hnslb/hcnclient
  set +e
  (cd hnslb/hcnclient && HNSPROXY_FAKE_QUIET=1 timeout 600 "$wine" "$exe" -test.run='^$' -test.bench=. \
    -test.benchtime="$benchtime" -test.count="${BENCHCOUNT:-1}") 2>&1 | tr -d '\r' | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  for name in $(grep -ho '^func Benchmark[A-Za-z0-9_]*' hnslb/hcnclient/*_windows_test.go | sed 's/^func //'); do
    grep -q "^$name[/-]" "$log" || { echo "wine-test: bench: FAIL: $name did not run" >&2; rc=1; }
  done
  if [ "$rc" -ne 0 ] || ! grep -qx PASS "$log"; then
    echo "wine-test: bench: FAIL (exit $rc)" >&2
    return 1
  fi
  echo "wine-test: bench: ok (hnslb/hcnclient's benchmarks under Wine, the fake DLLs quiet)"
}
if [ -n "$bench_only" ]; then
  mkdir -p "$root/_output/bench"
  bench_pass "${BENCHTIME:-1s}" || status=1
  cp "$out/bench.log" "$root/_output/bench/hcnclient.txt"
  [ -z "$wineserver" ] || timeout 60 "$wineserver" -w || true
  exit $status
fi
for pkg in $pkgs; do
  name=$(echo "${pkg#./}" | tr / _)
  exe=$out/$name.test.exe
  log=$out/$name.log
  echo "wine-test: $pkg: building the Windows test binary"
  GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -c -o "$exe" "$pkg"
  # Wine runs the Windows-only tests; the portable ones run natively on Linux
  # (Wine's file deletion differs enough to fail t.TempDir cleanups there).
  # TestBridge* run in a second pass, against hnssim (below).
  only=$(grep -ho '^func Test[A-Za-z0-9_]*' "$pkg"/*_windows_test.go | sed 's/^func //' | grep -v '^TestBridge' | paste -sd'|')
  echo "wine-test: $pkg: running under $("$wine" --version 2>/dev/null || echo wine)"
  set +e
  (cd "$pkg" && timeout 600 "$wine" "$exe" -test.v -test.count=1 -test.timeout=5m -test.run="^($only)\$" "$@") 2>&1 | tr -d '\r' | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  passed=$(grep -c -- '^--- PASS: ' "$log" || true)
  failed=$(grep -c -- '--- FAIL: ' "$log" || true)
  # A test may skip under Wine only by calling skipUnderWine (Wine lacks
  # what it tests); any other skip, a subtest's too, is a test CI did not
  # run, e.g. every fake-HNS test when the fake DLLs did not load.
  needs_windows=$(awk '/^func /{name=""} /^func Test/{name=$2; sub(/\(.*/, "", name)} /skipUnderWine\(/{if (name != "") print name}' "$pkg"/*_windows_test.go | sort -u)
  skipped=$(sed -n 's/^ *--- SKIP: \([^ ]*\).*/\1/p' "$log" | sort -u)
  unexpected=$(comm -23 <(echo "$skipped") <(echo "$needs_windows") | paste -sd' ')
  wine_skipped=$(comm -12 <(echo "$skipped") <(echo "$needs_windows") | paste -sd' ')
  if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ] || [ -n "$unexpected" ] || ! grep -qx PASS "$log"; then
    echo "wine-test: $pkg: FAIL (exit $rc, $passed passed, $failed failed${unexpected:+, skipped: $unexpected})" >&2
    status=1
  else
    echo "wine-test: $pkg: ok ($passed tests passed under Wine${wine_skipped:+; need a real Windows host, NOT run: $wine_skipped})"
  fi
done
# The bridge pass: hnslb/hcnclient through hcn and the bridge DLLs against a
# real hnssim (TestBridge*, hnslb/hcnclient/bridge_windows_test.go).
bridge_pass() {
  local exe=$out/hnslb_hcnclient.test.exe log=$out/bridge.log simlog=$out/hnssim-bridge.log dir sim port rc
  dir=$(mktemp -d)
  echo "wine-test: bridge: building hnssim"
  go build -o "$dir/hnssim" ./cmd/hnssim
  "$dir/hnssim" serve --socket "$dir/hns.sock" --profile ws2025 --bridge 127.0.0.1:0 \
    --network-name cbr0 --network-type l2bridge --subnet 10.244.1.0/24 --node-ip 10.0.0.11 \
    --error-rate GetNamespace=1 --bridge-down-codes 0x6ba,0x6b5 >"$simlog" 2>&1 &
  sim=$!
  for _ in $(seq 300); do grep -q "HCN bridge on" "$simlog" && break; sleep 0.1; done
  # hnssim names the port it bound in its start-up line.
  port=$(sed -n 's/.*HCN bridge on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$simlog")
  [ -n "$port" ] || { echo "wine-test: bridge: FAIL: hnssim did not start:" >&2; cat "$simlog" >&2; kill "$sim" 2>/dev/null; return 1; }
  set +e
  (cd hnslb/hcnclient && HNSPROXY_HNS_BRIDGE=127.0.0.1:$port timeout 300 "$wine" "$exe" -test.v -test.count=1 -test.run='^TestBridge' "$@") 2>&1 | tr -d '\r' | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  kill "$sim"; wait "$sim" || true
  rm -rf "$dir"
  if [ "$rc" -ne 0 ] || ! grep -q -- '^--- PASS: TestBridge' "$log" || grep -q -- '--- FAIL' "$log" || grep -q -- '--- SKIP' "$log"; then
    echo "wine-test: bridge: FAIL (exit $rc; hnssim log $simlog)" >&2
    return 1
  fi
  echo "wine-test: bridge: ok (hcnclient through hcn and the bridge DLLs against hnssim)"
}
bridge_pass "$@" || status=1
bench_pass 20x || status=1
# Let the Wine server exit so no process outlives the script.
[ -z "$wineserver" ] || timeout 60 "$wineserver" -w || true
exit $status
