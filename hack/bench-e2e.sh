#!/usr/bin/env bash
# The real hnsproxy process at scale (`make bench-e2e`; not part of `make
# test`): a real kube-apiserver, etcd and kube-controller-manager (its
# EndpointSlice controller only), BENCH_SERVICES Services over
# BENCH_ENDPOINTS endpoints, and the Linux hnsproxy binary against hnssim
# with BENCH_RPC_LATENCY per hcn RPC (e2e/benche2e, build tag benche2e).
# Progress goes to stderr; the JSON report is the last stdout line and is
# kept in _output/bench/bench-e2e-<services>.json.
# Env: BENCH_SERVICES (10000), BENCH_ENDPOINTS (100000), BENCH_CHANGES (100:
#      each one pod unready then ready again), BENCH_RPC_LATENCY (200us),
#      BENCH_PROXY_ENV (one NAME=VALUE for hnsproxy, e.g. GOMEMLIMIT=200MiB;
#      hnsproxy always runs with GODEBUG=gctrace=1, which a GODEBUG here keeps),
#      BENCH_MODE (l2bridge, or overlay: a remote subnet route per remote
#      node), BENCH_REPAIR_PERIOD (hnsproxy's --drift-repair-period, 1m),
#      BENCH_REPAIR_CHANGES (50: changes measured while a drift repair lists
#      HNS; 0 for none, and then no repair runs), BENCH_CPU_PODS (100: pods
#      the CPU phase flips, pricing each change in hnsproxy's process CPU;
#      0 for none), BENCH_CPU_RPC_LATENCY (0s: hnssim's latency per hcn RPC
#      during the CPU phase), BENCH_MIX_GROUPS (50: after the CPU phase,
#      Service groups scaled 10 -> 50 -> 10 pods and Services created and
#      deleted, each change priced in hnsproxy's CPU per Service or
#      EndpointSlice written; 0 for none), BENCH_MIN_SYNC_PERIOD
#      (hnsproxy's --min-sync-period, 0s: a sync for every change; 1s is
#      kube-proxy's default), BENCH_HEAP_PROFILES (a folder: hnsproxy runs with --profiling and its
#      heap profile at the end is saved there; during each full sync and the
#      HNS restart that drops objects its RSS and heap goal are logged every
#      second and the profile at the highest goal is saved too, and heap
#      profiles at the start and end of the HNS restart, allocs-restart-*.pprof, and of the CPU phase, a CPU
#      profile of its first 20 s, cpu-changes.pprof, and heap profiles at
#      its start and end, allocs-changes-*.pprof), BENCH_COLD_CPU_PROFILE_SECONDS
#      (with it: a CPU profile of hnsproxy's first seconds, cpu-cold.pprof),
#      BENCH_PROFILE (ws2025: the Windows build hnssim behaves like; ws2022
#      cannot modify a load balancer), BENCH_NODES (0: one remote node per
#      200 pods; up to 16,383, pod CIDRs from 100.64.0.0/10 past 255),
#      BENCH_KEEP_DIR (set: keep the run's folder, with hnsproxy's and the
#      other processes' logs, instead of deleting it), BENCH_HNS_RESTART_LOSES
#      (remote-endpoints: what a second HNS restart drops, as
#      docs/simulator.md's restart variants name it; empty for no second
#      restart), CONTROLPLANE_BIN_DIR.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"

echo "bench-e2e: building (or reusing) kube-apiserver, etcd and kube-controller-manager" >&2
CONTROLPLANE_BIN_DIR="$(CONTROLLER_MANAGER=1 hack/build-controlplane.sh)"
export CONTROLPLANE_BIN_DIR

services="${BENCH_SERVICES:-10000}"
mode="${BENCH_MODE:-l2bridge}"
profile="${BENCH_PROFILE:-ws2025}"
nodes="${BENCH_NODES:-0}"
# The report's name: services, mode, and what differs from the defaults.
name="${services}-${mode}"
[[ "${profile}" == ws2025 ]] || name+="-${profile}"
[[ "${nodes}" == 0 ]] || name+="-${nodes}nodes"
[[ "${BENCH_MIN_SYNC_PERIOD:-0s}" == 0s ]] || name+="-min-sync-${BENCH_MIN_SYNC_PERIOD}"
name+="${BENCH_PROXY_ENV:+-${BENCH_PROXY_ENV}}"
out=_output/bench
mkdir -p "${out}"
bench="${out}/benche2e"
go build -tags benche2e -o "${bench}" ./e2e/benche2e
# A short folder: unix socket paths are limited to 108 bytes.
dir="$(mktemp -d /tmp/benche2e.XXXXXX)"
if [[ -n "${BENCH_KEEP_DIR:-}" ]]; then
  trap 'echo "bench-e2e: kept ${dir} (the processes'"'"' logs, hnsproxy'"'"'s state file)" >&2' EXIT
else
  trap 'rm -rf "${dir}"' EXIT
fi
"${bench}" -dir "${dir}" -services "${services}" -endpoints "${BENCH_ENDPOINTS:-100000}" \
  -changes "${BENCH_CHANGES:-100}" -mode "${mode}" -profile "${profile}" -nodes "${nodes}" -repair-period "${BENCH_REPAIR_PERIOD:-1m}" \
  -repair-changes "${BENCH_REPAIR_CHANGES:-50}" -cpu-pods "${BENCH_CPU_PODS:-100}" -cpu-rpc-latency "${BENCH_CPU_RPC_LATENCY:-0s}" -mix-groups "${BENCH_MIX_GROUPS:-50}" -min-sync-period "${BENCH_MIN_SYNC_PERIOD:-0s}" -rpc-latency "${BENCH_RPC_LATENCY:-200us}" \
  -proxy-env "${BENCH_PROXY_ENV:-}" -hns-restart-loses "${BENCH_HNS_RESTART_LOSES-remote-endpoints}" -heap-profiles "${BENCH_HEAP_PROFILES:-}" \
  -cold-cpu-profile-seconds "${BENCH_COLD_CPU_PROFILE_SECONDS:-0}" | tee "${out}/bench-e2e-${name}.json"
