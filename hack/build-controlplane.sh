#!/usr/bin/env bash
# Builds a real kube-apiserver and etcd from the Go module proxy for the e2e
# suite and the demo, and caches them under _output/controlplane/bin/.
#
# The versions are pinned by the nested module hack/controlplane (go.mod and
# go.sum are committed). The build is skipped while both binaries exist and
# the stamp file is newer than that go.mod and go.sum.
#
# Usage: hack/build-controlplane.sh          # build or reuse; prints the bin dir last
#        FORCE=1 hack/build-controlplane.sh  # rebuild even if cached
# Env:   CONTROLPLANE_BIN_DIR overrides the output folder; CONTROLLER_MANAGER=1
#        also builds kube-controller-manager (`make bench-e2e`), which then
#        counts towards the cache check.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"
MOD="${ROOT}/hack/controlplane"
OUT="${CONTROLPLANE_BIN_DIR:-${ROOT}/_output/controlplane/bin}"
STAMP="${OUT}/.stamp"
GO="${GO:-go}"

log() { printf 'build-controlplane: %s\n' "$*" >&2; }

BINS=(kube-apiserver etcd)
if [[ -n "${CONTROLLER_MANAGER:-}" ]]; then
  BINS+=(kube-controller-manager)
fi

stamp_fresh() { [[ "${STAMP}" -nt "${MOD}/go.mod" && "${STAMP}" -nt "${MOD}/go.sum" ]]; }

# shellcheck source=hack/cached-build.sh
. "${ROOT}/hack/cached-build.sh"
reuse_or_lock

cd "${MOD}"
export GOWORK=off GOFLAGS="${GOFLAGS:-} -mod=readonly"
KUBE_PKG=k8s.io/kubernetes/cmd/kube-apiserver
KCM_PKG=k8s.io/kubernetes/cmd/kube-controller-manager
ETCD_PKG=go.etcd.io/etcd/server/v3
KUBE_VERSION="$("${GO}" list -m -f '{{.Version}}' k8s.io/kubernetes)"
ETCD_VERSION="$("${GO}" list -m -f '{{.Version}}' "${ETCD_PKG}")"

# Stamp the apiserver with its real version, as the release build does, so
# /version and the compatibility-version logic see v1.x.y, not v0.0.0-master.
minor="${KUBE_VERSION#v1.}"
minor="${minor%%.*}"
ldflags="-s -w"
for kv in gitVersion="${KUBE_VERSION}" gitMajor=1 gitMinor="${minor}" gitTreeState=clean \
  buildDate="$(date -u +%Y-%m-%dT%H:%M:%SZ)"; do
  ldflags+=" -X k8s.io/component-base/version.${kv}"
done

log "downloading modules (kube-apiserver ${KUBE_VERSION}, etcd ${ETCD_VERSION})"
"${GO}" mod download
pkgs=("${KUBE_PKG}" "${ETCD_PKG}")
if [[ -n "${CONTROLLER_MANAGER:-}" ]]; then
  pkgs+=("${KCM_PKG}")
fi
total="$("${GO}" list -deps "${pkgs[@]}" | wc -l)"
log "building ${total} packages; a cold build takes several minutes (warm: seconds)"

tmp="${OUT}/.tmp"
rm -rf "${tmp}"
mkdir -p "${tmp}"

# `go build -v` names each package as it is compiled (cached ones are not
# named), so a count of its lines is an honest progress meter; a heartbeat
# covers the long link steps where nothing is printed.
start_heartbeat

build() { # build OUTPUT PKG
  "${GO}" build -v -ldflags "${ldflags}" -o "$1" "$2" 2>&1
}
build_all() {
  build "${tmp}/kube-apiserver" "${KUBE_PKG}" && build "${tmp}/etcd" "${ETCD_PKG}" &&
    if [[ -n "${CONTROLLER_MANAGER:-}" ]]; then build "${tmp}/kube-controller-manager" "${KCM_PKG}"; fi
}
if ! build_all |
  awk -v total="${total}" -v start="$(date +%s)" '
    /^#|: / { print; fflush(); next }        # compiler errors pass through
    { n++ }
    n % 100 == 0 {
      printf "build-controlplane: compiled %d packages (of at most %d), %ds\n", n, total, systime() - start > "/dev/stderr"
      fflush("/dev/stderr")
    }
    END { printf "build-controlplane: compiled %d packages\n", n > "/dev/stderr" }' >&2; then
  log "build failed; the go command's messages are above"
  exit 1
fi

for bin in "${BINS[@]}"; do
  mv -f "${tmp}/${bin}" "${OUT}/"
done
rmdir "${tmp}"
echo "${BINS[*]}: kubernetes ${KUBE_VERSION}, etcd ${ETCD_VERSION}, built $(date -u +%FT%TZ) in $((SECONDS - build_start))s" >"${STAMP}"
log "built in $((SECONDS - build_start))s: ${BINS[*]} in ${OUT}"
echo "${OUT}"
