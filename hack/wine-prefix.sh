#!/usr/bin/env bash
# Prepares a private Wine prefix (never ~/.wine) for the Windows tests and the
# e2e Windows lane: builds hack/wine's DLLs with mingw-w64 into _output/wine,
# creates the prefix on first use and installs the DLLs into its system32.
# hack/wine-test.sh and the e2e framework run it; its stdout is the
# environment to run Wine with, KEY=VALUE lines: WINE (the wine64 loader),
# WINEPREFIX, WINEDEBUG, WINEARCH, WINELOADER, WINEDLLOVERRIDES.
#
#   hack/wine-prefix.sh [--prefix DIR] [--os-build MAJOR.MINOR.BUILD.UBR]
#
# --os-build sets the Windows version HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion
# reports (CurrentMajorVersionNumber, CurrentMinorVersionNumber,
# CurrentBuildNumber, CurrentBuild, UBR), as a Windows Server build would.
# The prefix is DIR with --prefix; else, with --os-build, one per build,
# _output/wineprefix-BUILD (so processes playing different builds never
# rewrite each other's registry); else $HNSPROXY_WINEPREFIX or
# _output/wineprefix. Concurrent runs wait for each other (flock).
#
# Without wine or mingw-w64 it fails when CI is set and exits 3 otherwise (the
# caller decides how loudly to skip). Run headless: no X, no Mono/Gecko.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/_output/wine

prefix="" os_build=""
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) prefix=${2:?--prefix DIR}; shift 2 ;;
    --os-build) os_build=${2:?--os-build MAJOR.MINOR.BUILD.UBR}; shift 2 ;;
    *) echo "wine: unknown argument $1 (want --prefix DIR, --os-build MAJOR.MINOR.BUILD.UBR)" >&2; exit 2 ;;
  esac
done
if [ -n "$os_build" ]; then
  IFS=. read -r major minor build ubr extra <<<"$os_build"
  for v in "$major" "$minor" "$build" "$ubr"; do
    [[ $v =~ ^[0-9]+$ ]] || { echo "wine: --os-build $os_build: want MAJOR.MINOR.BUILD.UBR" >&2; exit 2; }
  done
  [ -z "$extra" ] || { echo "wine: --os-build $os_build: want MAJOR.MINOR.BUILD.UBR" >&2; exit 2; }
fi
if [ -n "$prefix" ]; then
  WINEPREFIX=$prefix
elif [ -n "$os_build" ]; then
  WINEPREFIX=$root/_output/wineprefix-$os_build
else
  WINEPREFIX=${HNSPROXY_WINEPREFIX:-$root/_output/wineprefix}
fi
export WINEPREFIX

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
# One preparation at a time: the DLL builds and a prefix's creation are not
# safe to run twice at once.
exec 9>"$out/prepare.lock"
flock 9
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
  timeout 300 "$wine" wineboot --init >"$out/wineboot.log" 2>&1 9>&- || {
    cat "$out/wineboot.log" >&2; echo "wine: FAIL: wineboot failed" >&2; exit 1; }
  [ -z "$wineserver" ] || timeout 120 "$wineserver" -w 9>&- || true
fi
sys32=$WINEPREFIX/drive_c/windows/system32
for name in bcryptprimitives computenetwork vmcompute; do
  cmp -s "$out/$name.dll" "$sys32/$name.dll" || cp "$out/$name.dll" "$sys32/$name.dll"
done

# The build is written once per prefix (a stamp records it): rewriting the
# registry of a prefix whose programs run would change what they read.
stamp=$WINEPREFIX/hnsproxy-os-build
if [ -n "$os_build" ] && [ "$(cat "$stamp" 2>/dev/null)" != "$os_build" ]; then
  reg=$WINEPREFIX/os-build.reg
  # regedit reads the file as UTF-16 when it has a BOM; ASCII REGEDIT4 is simpler.
  printf '%s\r\n' REGEDIT4 "" '[HKEY_LOCAL_MACHINE\SOFTWARE\Microsoft\Windows NT\CurrentVersion]' \
    "\"CurrentMajorVersionNumber\"=dword:$(printf %08x "$major")" \
    "\"CurrentMinorVersionNumber\"=dword:$(printf %08x "$minor")" \
    "\"CurrentBuildNumber\"=\"$build\"" "\"CurrentBuild\"=\"$build\"" \
    "\"UBR\"=dword:$(printf %08x "$ubr")" "" >"$reg"
  timeout 120 "$wine" regedit /S "Z:${reg//\//\\}" >/dev/null 2>&1 9>&- || {
    echo "wine: FAIL: regedit could not set the Windows version" >&2; exit 1; }
  [ -z "$wineserver" ] || timeout 60 "$wineserver" -w 9>&- || true
  echo "$os_build" >"$stamp"
fi

for v in WINEPREFIX WINEDEBUG WINEARCH WINELOADER WINEDLLOVERRIDES; do echo "$v=${!v}"; done
echo "WINE=$wine"
