#!/usr/bin/env bash
# Installs the Debian packages the tests use: Wine and mingw-w64 (Windows test
# binaries and the bcryptprimitives shim), a C compiler (the race detector
# needs cgo), and make, which .ci/run needs before `make test` can run this
# script. Prometheus is not one of them: Debian's is 2.42, and the tests run
# the release go.mod requires, built by hack/build-prometheus.sh.
# Idempotent; skips apt when everything is present.
set -euo pipefail
need=()
command -v wine >/dev/null 2>&1 || need+=(wine wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need+=(gcc-mingw-w64-x86-64-win32)
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v make >/dev/null 2>&1 || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
echo "install-deps: ok ($(wine --version 2>/dev/null || echo 'no wine'), $(x86_64-w64-mingw32-gcc --version 2>/dev/null | head -1 || echo 'no mingw-w64'))"
