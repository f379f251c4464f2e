#!/usr/bin/env bash
# Prepares the private Wine prefix the Windows tests and the e2e Windows lane
# run in (_output/wineprefix, or $HNSPROXY_WINEPREFIX; never ~/.wine): builds
# hack/wine's DLLs with mingw-w64 into _output/wine, creates the prefix on
# first use and installs the DLLs into its system32. hack/wine-test.sh and
# the e2e framework run it; its stdout is the environment to run Wine with,
# KEY=VALUE lines: WINE (the wine64 loader), WINEPREFIX, WINEDEBUG, WINEARCH,
# WINELOADER, WINEDLLOVERRIDES. With --os-build MAJOR.MINOR.BUILD.UBR it also sets
# the Windows version HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion
# reports (CurrentMajorVersionNumber, CurrentMinorVersionNumber,
# CurrentBuildNumber, CurrentBuild, UBR), as a Windows Server build would.
#
# Without wine or mingw-w64 it fails when CI is set and exits 3 otherwise (the
# caller decides how loudly to skip). Run headless: no X, no Mono/Gecko.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/_output/wine
export WINEPREFIX=${HNSPROXY_WINEPREFIX:-$root/_output/wineprefix}

winemissing() {
  if [ -n "${CI:-}" ] && [ "${CI:-}" != false ] && [ "${CI:-}" != 0 ]; then
    echo "wine: FAIL: $1 is not installed (CI must run the Windows tests; see hack/install-deps.sh)" >&2
    exit 1
  fi
  echo "wine: $1 is not installed (hack/install-deps.sh installs it)" >&2
  exit 3
}

# Debian's `wine` wrapper prefers a 32-bit loader that a 64-bit-only install lacks.
wine=""
for w in wine64 /usr/lib/wine/wine64 /usr/lib/x86_64-linux-gnu/wine/wine64 wine; do
  if command -v "$w" >/dev/null 2>&1; then wine=$(command -v "$w"); break; fi
done
[ -n "$wine" ] || winemissing wine
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || winemissing "x86_64-w64-mingw32-gcc (gcc-mingw-w64-x86-64-win32)"
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
  echo "wine: building $name.dll" >&2
  x86_64-w64-mingw32-gcc -shared -O2 -s -static-libgcc -Wall -o "$dll" "$src" "${def[@]}" "$@"
}
build_dll bcryptprimitives -lbcrypt        # ProcessPrng for the Go runtime
build_dll computenetwork -lole32 -lws2_32  # HNS API: fake (fakehns.h) or bridge to hnssim (hnsbridge.h)
build_dll vmcompute -lole32 -lws2_32       # HNSCall (HNS version), the same two modes

if [ ! -f "$WINEPREFIX/system.reg" ] || [ ! -d "$WINEPREFIX/drive_c/windows/system32" ]; then
  echo "wine: creating the Wine prefix $WINEPREFIX (first run only)" >&2
  rm -rf "$WINEPREFIX"
  timeout 300 "$wine" wineboot --init >"$out/wineboot.log" 2>&1 || {
    cat "$out/wineboot.log" >&2; echo "wine: FAIL: wineboot failed" >&2; exit 1; }
  [ -z "$wineserver" ] || timeout 120 "$wineserver" -w || true
fi
sys32=$WINEPREFIX/drive_c/windows/system32
for name in bcryptprimitives computenetwork vmcompute; do
  cmp -s "$out/$name.dll" "$sys32/$name.dll" || cp "$out/$name.dll" "$sys32/$name.dll"
done

if [ "${1:-}" = --os-build ]; then
  IFS=. read -r major minor build ubr <<<"${2:-}"
  for v in "$major" "$minor" "$build" "$ubr"; do
    [[ $v =~ ^[0-9]+$ ]] || { echo "wine: --os-build ${2:-}: want MAJOR.MINOR.BUILD.UBR" >&2; exit 2; }
  done
  reg=$out/os-build.reg
  # regedit reads the file as UTF-16 when it has a BOM; ASCII REGEDIT4 is simpler.
  printf '%s\r\n' REGEDIT4 "" '[HKEY_LOCAL_MACHINE\SOFTWARE\Microsoft\Windows NT\CurrentVersion]' \
    "\"CurrentMajorVersionNumber\"=dword:$(printf %08x "$major")" \
    "\"CurrentMinorVersionNumber\"=dword:$(printf %08x "$minor")" \
    "\"CurrentBuildNumber\"=\"$build\"" "\"CurrentBuild\"=\"$build\"" \
    "\"UBR\"=dword:$(printf %08x "$ubr")" "" >"$reg"
  timeout 120 "$wine" regedit /S "Z:${reg//\//\\}" >/dev/null 2>&1 || {
    echo "wine: FAIL: regedit could not set the Windows version" >&2; exit 1; }
  [ -z "$wineserver" ] || timeout 60 "$wineserver" -w || true
fi

for v in WINEPREFIX WINEDEBUG WINEARCH WINELOADER WINEDLLOVERRIDES; do echo "$v=${!v}"; done
echo "WINE=$wine"
