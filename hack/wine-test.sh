#!/usr/bin/env bash
# Runs the Windows-only Go tests (every package with a *_windows_test.go file,
# e.g. hnslb/hcnclient's hcn JSON-equality and error-mapping tests) on Linux
# under Wine, and fails unless at least one test ran and none failed.
#
# Go >= 1.24 Windows binaries import ProcessPrng from bcryptprimitives.dll,
# which Wine 8 lacks; hack/wine/bcryptprimitives.c is a shim that provides it.
# Wine has no HNS either: hack/wine/computenetwork.c and vmcompute.c are a
# scriptable fake of HNS's client DLLs, so hcn's real code paths run. All are
# built with mingw-w64 and installed into a private Wine prefix under _output/
# (never the user's ~/.wine). Headless: no X, no Mono/Gecko, no network.
#
# Without wine or mingw-w64 this fails when CI is set, and skips loudly otherwise.
# Extra arguments go to the test binaries, e.g. hack/wine-test.sh -test.run=JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/_output/wine
export WINEPREFIX=${HNSPROXY_WINEPREFIX:-$root/_output/wineprefix}

missing() {
  if [ -n "${CI:-}" ] && [ "${CI:-}" != false ] && [ "${CI:-}" != 0 ]; then
    echo "wine-test: FAIL: $1 is not installed (CI must run the Windows tests; see hack/install-deps.sh)" >&2
    exit 1
  fi
  echo "wine-test: SKIP: $1 is not installed; the Windows-only tests did NOT run (hack/install-deps.sh installs it)" >&2
  exit 0
}

# Debian's `wine` wrapper prefers a 32-bit loader that a 64-bit-only install lacks.
wine=""
for w in wine64 /usr/lib/wine/wine64 /usr/lib/x86_64-linux-gnu/wine/wine64 wine; do
  if command -v "$w" >/dev/null 2>&1; then wine=$(command -v "$w"); break; fi
done
[ -n "$wine" ] || missing wine
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing "x86_64-w64-mingw32-gcc (gcc-mingw-w64-x86-64-win32)"
wineserver=$(command -v wineserver || command -v /usr/lib/wine/wineserver64 || true)

unset DISPLAY WAYLAND_DISPLAY
export WINEDEBUG=-all WINEARCH=win64 WINELOADER=$wine
# mscoree/mshtml disabled: wineboot would otherwise offer to download Mono and
# Gecko. Our DLLs load first (Wine 8 has no builtin ones of these names).
export WINEDLLOVERRIDES="mscoree,mshtml=;bcryptprimitives,computenetwork,vmcompute=n,b"

mkdir -p "$out"
# build_dll NAME LIBS...: hack/wine/NAME.c (+ NAME.def if present) -> $out/NAME.dll
build_dll() {
  local name=$1; shift
  local dll=$out/$name.dll src=hack/wine/$name.c def=()
  [ -f "hack/wine/$name.def" ] && def=("hack/wine/$name.def")
  if [ -f "$dll" ] && [ -z "$(find hack/wine -newer "$dll" -print -quit)" ]; then return; fi
  echo "wine-test: building $name.dll"
  x86_64-w64-mingw32-gcc -shared -O2 -s -static-libgcc -Wall -o "$dll" "$src" "${def[@]}" "$@"
}
build_dll bcryptprimitives -lbcrypt # ProcessPrng for the Go runtime
build_dll computenetwork -lole32    # fake HNS API (hack/wine/fakehns.h)
build_dll vmcompute -lole32         # fake HNSCall (HNS version)

if [ ! -f "$WINEPREFIX/system.reg" ] || [ ! -d "$WINEPREFIX/drive_c/windows/system32" ]; then
  echo "wine-test: creating the Wine prefix $WINEPREFIX (first run only)"
  rm -rf "$WINEPREFIX"
  timeout 300 "$wine" wineboot --init >"$out/wineboot.log" 2>&1 || {
    cat "$out/wineboot.log" >&2; echo "wine-test: FAIL: wineboot failed" >&2; exit 1; }
  [ -z "$wineserver" ] || timeout 120 "$wineserver" -w || true
fi
sys32=$WINEPREFIX/drive_c/windows/system32
for name in bcryptprimitives computenetwork vmcompute; do
  cmp -s "$out/$name.dll" "$sys32/$name.dll" || cp "$out/$name.dll" "$sys32/$name.dll"
done

pkgs=$(find . -name '*_windows_test.go' -not -path './_output/*' -not -path './.cache/*' -exec dirname {} \; | sort -u)
[ -n "$pkgs" ] || { echo "wine-test: FAIL: no package has *_windows_test.go files" >&2; exit 1; }

status=0
for pkg in $pkgs; do
  name=$(echo "${pkg#./}" | tr / _)
  exe=$out/$name.test.exe
  log=$out/$name.log
  echo "wine-test: $pkg: building the Windows test binary"
  GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -c -o "$exe" "$pkg"
  # Wine runs the Windows-only tests; the portable ones run natively on Linux
  # (Wine's file deletion differs enough to fail t.TempDir cleanups there).
  only=$(grep -ho '^func Test[A-Za-z0-9_]*' "$pkg"/*_windows_test.go | sed 's/^func //' | paste -sd'|')
  echo "wine-test: $pkg: running under $("$wine" --version 2>/dev/null || echo wine)"
  set +e
  (cd "$pkg" && timeout 600 "$wine" "$exe" -test.v -test.count=1 -test.timeout=5m -test.run="^($only)\$" "$@") 2>&1 | tr -d '\r' | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  passed=$(grep -c -- '^--- PASS: ' "$log" || true)
  failed=$(grep -c -- '--- FAIL: ' "$log" || true)
  if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ] || ! grep -qx PASS "$log"; then
    echo "wine-test: $pkg: FAIL (exit $rc, $passed passed, $failed failed)" >&2
    status=1
  else
    echo "wine-test: $pkg: ok ($passed tests passed under Wine)"
  fi
done
# Let the Wine server exit so no process outlives the script.
[ -z "$wineserver" ] || timeout 60 "$wineserver" -w || true
exit $status
