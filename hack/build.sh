#!/usr/bin/env bash
# The one way to build hnsproxy's binaries (make build, make demo, the soak,
# the CNI tests and the e2e framework all come here), so each is stamped with
# the same version and lands in the same place.
#
# Usage: hack/build.sh [name...]   names: hnsproxy hnsproxy-diag hnssim hnscni host-local demo soak scale
#                                  (default: all of them)
# Output: _output/bin for this machine's GOOS/GOARCH, _output/bin/GOOS-GOARCH
#         otherwise (Windows names end in .exe); the folder is the last stdout line.
# Env:    VERSION (default from git describe), RELEASE=1 (-trimpath, stripped).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"

# package NAME: the Go package a binary name stands for.
package() {
	case "$1" in
	hnsproxy | hnsproxy-diag | hnssim | hnscni) echo "./cmd/$1" ;;
	demo) echo "./demo" ;;
	soak | scale) echo "./hack/$1" ;;
	# The reference IPAM plugin hnscni delegates to, at the version go.mod pins.
	host-local) echo "github.com/containernetworking/plugins/plugins/ipam/host-local" ;;
	*) echo "build: unknown binary $1 (want hnsproxy hnsproxy-diag hnssim hnscni host-local demo soak scale)" >&2; return 1 ;;
	esac
}

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(hnsproxy hnsproxy-diag hnssim hnscni host-local demo soak scale)
pkgs=()
for n in "${names[@]}"; do pkgs+=("$(package "$n")"); done

if [ -z "${VERSION:-}" ]; then
	VERSION=$(git describe --tags --always --dirty 2>/dev/null | sed 's/^\([0-9a-f]\{7,\}\)/v0.0.0-\1/' || true)
	VERSION=${VERSION:-v0.0.0-dev}
fi
# --version and hnsproxy_build_info read it. component-base's version is
# left unstamped: it is a Kubernetes release's, which hnsproxy is not.
ldflags="-X github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app.gitVersion=${VERSION}"
flags=(-v) # names each package as it compiles: progress when cold, silence when cached
if [ "${RELEASE:-}" = 1 ]; then
	flags+=(-trimpath)
	ldflags="-s -w ${ldflags}"
fi
# The version comes from ldflags; VCS stamping fails in some worktrees and CI checkouts.
case " ${GOFLAGS:-} " in *" -buildvcs="*) ;; *) export GOFLAGS="${GOFLAGS:-} -buildvcs=false" ;; esac

out="${ROOT}/_output/bin"
goos=$(go env GOOS) goarch=$(go env GOARCH)
if [ "${goos}/${goarch}" != "$(go env GOHOSTOS)/$(go env GOHOSTARCH)" ]; then
	out="${out}/${goos}-${goarch}"
fi
mkdir -p "${out}"
echo "build: ${names[*]} (${VERSION}, ${goos}/${goarch}) into ${out}" >&2
go build "${flags[@]}" -ldflags "${ldflags}" -o "${out}/" "${pkgs[@]}" >&2
echo "${out}"
