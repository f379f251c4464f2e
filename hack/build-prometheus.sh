#!/usr/bin/env bash
# Builds prometheus and promtool for the tests (the metrics package's promtool
# checks, the e2e suite's real scrapes) and caches them under
# _output/prometheus/bin/.
#
# The version is the one go.mod already requires for the PromQL parser the
# unit tests use (github.com/prometheus/prometheus v0.3XX.Y is Prometheus
# 3.XX.Y), so the parser, promtool and the server are one release, and one
# that operators run: Debian 12's package is 2.42. They are built from that
# module's own source and go.sum, as Prometheus builds its releases (its
# go.mod has exclude directives, so `go install pkg@version` refuses it), in
# the module cache, read-only; without the web UI's assets, which the tests
# do not use.
#
# Usage: hack/build-prometheus.sh          # build or reuse; prints the bin dir last
#        FORCE=1 hack/build-prometheus.sh  # rebuild even if cached
# Env:   PROMETHEUS_BIN_DIR overrides the output folder.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"
OUT="${PROMETHEUS_BIN_DIR:-${ROOT}/_output/prometheus/bin}"
STAMP="${OUT}/.stamp"
GO="${GO:-go}"
MODULE=github.com/prometheus/prometheus
BINS=(prometheus promtool)

log() { printf 'build-prometheus: %s\n' "$*" >&2; }

cd "${ROOT}"
export GOWORK=off
MOD_VERSION="$(GOFLAGS=-mod=readonly "${GO}" list -m -f '{{.Version}}' "${MODULE}")"

# The stamp's first line is the module version it was built from.
stamp_fresh() { [[ "$(head -1 "${STAMP}")" == "${MOD_VERSION}" ]]; }

# shellcheck source=hack/cached-build.sh
. "${ROOT}/hack/cached-build.sh"
reuse_or_lock

log "downloading ${MODULE}@${MOD_VERSION}"
SRC="$("${GO}" mod download -json "${MODULE}@${MOD_VERSION}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ -z "${SRC}" || ! -f "${SRC}/VERSION" ]]; then
  log "the module cache has no source for ${MODULE}@${MOD_VERSION}"
  exit 1
fi
RELEASE="$(tr -d '[:space:]' <"${SRC}/VERSION")"

# Stamp the release as Prometheus's own build does, so --version and
# /api/v1/status/buildinfo say which Prometheus the tests ran against.
ldflags="-s -w"
for kv in Version="${RELEASE}" Revision="${MOD_VERSION}" Branch=module BuildUser=hnsproxy \
  BuildDate="$(date -u +%Y%m%d-%H:%M:%S)"; do
  ldflags+=" -X github.com/prometheus/common/version.${kv}"
done

tmp="${OUT}/.tmp"
rm -rf "${tmp}"
mkdir -p "${tmp}"
start_heartbeat

log "building Prometheus ${RELEASE}; a cold build takes five to seven minutes (warm: seconds)"
(
  cd "${SRC}"
  export GOFLAGS=-mod=readonly
  for bin in "${BINS[@]}"; do
    # errexit does not hold in a subshell left of ||: each failure ends it.
    "${GO}" build -ldflags "${ldflags}" -o "${tmp}/${bin}" "./cmd/${bin}" || exit 1
  done
) || { log "build failed; the go command's messages are above"; exit 1; }

for bin in "${BINS[@]}"; do
  mv -f "${tmp}/${bin}" "${OUT}/"
done
rmdir "${tmp}"
printf '%s\n%s\n' "${MOD_VERSION}" "${BINS[*]}: Prometheus ${RELEASE} (${MODULE} ${MOD_VERSION}), built $(date -u +%FT%TZ) in $((SECONDS - build_start))s" >"${STAMP}"
log "built in $((SECONDS - build_start))s: ${BINS[*]} in ${OUT}"
echo "${OUT}"
