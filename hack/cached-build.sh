# Sourced by the build scripts whose binaries are cached under _output
# (build-controlplane.sh, build-prometheus.sh); not run on its own. The caller
# sets OUT (the folder), STAMP (the file a build writes last, saying what it
# built) and BINS (the binaries' names), and defines log (a progress line on
# stderr) and stamp_fresh (true while STAMP describes what the caller would
# build now).

# cached: FORCE is unset, the stamp is fresh and every binary is there.
cached() {
  [[ -z "${FORCE:-}" && -f "${STAMP}" ]] && stamp_fresh || return 1
  local bin
  for bin in "${BINS[@]}"; do
    [[ -x "${OUT}/${bin}" ]] || return 1
  done
}

# reuse_or_lock serialises builds into OUT (the demo, the unit tests and the
# e2e suite may start one together): it takes OUT's lock for the rest of the
# script, and if the binaries are cached, by now perhaps by the build it
# waited for, prints OUT and ends the script.
reuse_or_lock() {
  mkdir -p "${OUT}"
  exec 9>"${OUT}/.lock"
  flock 9
  if cached; then
    log "using cached binaries in ${OUT} ($(tail -1 "${STAMP}"))"
    echo "${OUT}"
    exit 0
  fi
}

# start_heartbeat logs every 30 s until the script ends, so a long compile
# or link that prints nothing still shows it is alive; build_start is when.
start_heartbeat() {
  build_start=${SECONDS}
  ( while sleep 30; do log "still building... $((SECONDS - build_start))s"; done ) &
  heartbeat=$!
  trap 'kill "${heartbeat}" 2>/dev/null || true' EXIT
}
