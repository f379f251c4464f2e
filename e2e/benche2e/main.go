//go:build linux && benche2e

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/nearestrank"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

type options struct {
	layout
	endpoints  int
	changes    int
	rpcLatency time.Duration
	hnsOutage  time.Duration
	// restartLoses is what the second HNS restart drops (sim.RestartLosses);
	// "" runs no second restart.
	restartLoses string
	dir          string
	proxyEnv     string
	profileDir   string
	// coldProfileSeconds: a CPU profile of hnsproxy's first seconds.
	coldProfileSeconds int
	// mode is the node's network: l2bridge, or overlay with a remote
	// subnet route to every other node's pod CIDR.
	mode string
	// repairPeriod is hnsproxy's --drift-repair-period; repairChanges the
	// changes to measure while a repair lists (0: no repair phase).
	repairPeriod  time.Duration
	repairChanges int
	// cpuPods are the pods the CPU phase flips (two changes each);
	// cpuRPCLatency is hnssim's latency per hcn RPC meanwhile.
	cpuPods       int
	cpuRPCLatency time.Duration
	// mixGroups are the groups the mix phase scales up and down, and the
	// Services it creates and deletes (0: no mix phase).
	mixGroups int
	// minSyncPeriod is hnsproxy's --min-sync-period (the rig's 0s: a
	// sync for every change, as fast as it can).
	minSyncPeriod time.Duration
	// profile is the Windows build hnssim behaves like.
	profile string
}

// report is the bench's result; durations in seconds, memory in MiB.
type report struct {
	Services             int     `json:"services"`
	Endpoints            int     `json:"endpoints"`
	Pods                 int     `json:"pods"`
	RemoteNodes          int     `json:"remoteNodes"`
	RPCLatency           string  `json:"rpcLatency"`
	Profile              string  `json:"profile"`
	Mode                 string  `json:"mode"`
	RepairPeriod         string  `json:"repairPeriod"`
	MinSyncPeriod        string  `json:"minSyncPeriod"`
	CPUs                 int     `json:"cpus"`
	ProxyEnv             string  `json:"proxyEnv,omitempty"`
	LoadSeconds          float64 `json:"loadSeconds"`
	FirstFullSyncSeconds float64 `json:"firstFullSyncSeconds"`
	// FirstFullSyncCPUSeconds and NodeRebootFullSyncCPUSeconds are
	// hnsproxy's process CPU (user and system) from its start to the full
	// sync: its cold start against the real apiserver, decoding included.
	FirstFullSyncCPUSeconds      float64 `json:"firstFullSyncCPUSeconds"`
	NodeRebootFullSyncCPUSeconds float64 `json:"nodeRebootFullSyncCPUSeconds"`
	RSSAfterSyncMiB              float64 `json:"rssAfterSyncMiB"`
	RSSAfterChangesMiB           float64 `json:"rssAfterChangesMiB"`
	RSSEndMiB                    float64 `json:"rssEndMiB"`
	RSSPeakMiB                   float64 `json:"rssPeakMiB"`
	// HeapGoalMiB is go_memstats_next_gc_bytes after the reboot resync.
	HeapGoalMiB float64 `json:"heapGoalMiB"`
	// Changes and their quantiles leave out the changes made while a
	// drift repair ran: those are the Repair* figures.
	Changes               int     `json:"changes"`
	ProgrammingP50Seconds float64 `json:"programmingP50Seconds"`
	ProgrammingP99Seconds float64 `json:"programmingP99Seconds"`
	ProgrammingMaxSeconds float64 `json:"programmingMaxSeconds"`
	// The split: status write to the bench's watch seeing every slice of
	// the group written (the control plane), and from there to HNS
	// (hnsproxy, and the probe's resolution), over SplitChanges changes.
	SplitChanges           int     `json:"splitChanges"`
	SlicesP50Seconds       float64 `json:"slicesP50Seconds"`
	SlicesP99Seconds       float64 `json:"slicesP99Seconds"`
	ProxyP50Seconds        float64 `json:"proxyP50Seconds"`
	ProxyP99Seconds        float64 `json:"proxyP99Seconds"`
	MetricObservations     float64 `json:"metricObservations"`
	MetricP50BucketSeconds string  `json:"metricP50BucketSeconds"`
	MetricP99BucketSeconds string  `json:"metricP99BucketSeconds"`
	// Changes made while a drift repair ran (its listing, without
	// hnsproxy's sync lock, and its judging, with it, until the next sync
	// ended): from both phases; RepairListings repairs started meanwhile.
	RepairListings              int     `json:"repairListings"`
	RepairChanges               int     `json:"repairChanges"`
	RepairProgrammingP50Seconds float64 `json:"repairProgrammingP50Seconds"`
	RepairProgrammingP99Seconds float64 `json:"repairProgrammingP99Seconds"`
	RepairProgrammingMaxSeconds float64 `json:"repairProgrammingMaxSeconds"`
	RepairProxyP50Seconds       float64 `json:"repairProxyP50Seconds"`
	RepairProxyP99Seconds       float64 `json:"repairProxyP99Seconds"`
	// The CPU phase: hnsproxy's process CPU per change (a pod's
	// readiness flip rewrites group-size EndpointSlices and as many load
	// balancers), its CPU clock read around each change, less what it uses
	// idle; nothing asks hnsproxy anything meanwhile. Per slice is the
	// unit of issue 17's target. The runtime's figures are the phase's,
	// from a scrape before it and one after.
	CPUChanges         int     `json:"cpuChanges"`
	CPUStopped         string  `json:"cpuStopped,omitempty"`
	CPUIdleMsPerSecond float64 `json:"cpuIdleMsPerSecond"`
	CPUPerChangeP50Ms  float64 `json:"cpuPerChangeP50Ms"`
	CPUPerChangeP99Ms  float64 `json:"cpuPerChangeP99Ms"`
	CPUPerChangeMaxMs  float64 `json:"cpuPerChangeMaxMs"`
	CPUPerChangeMeanMs float64 `json:"cpuPerChangeMeanMs"`
	CPUPerSliceP99Ms   float64 `json:"cpuPerSliceP99Ms"`
	// CPUPerChangeMs is every change's CPU in the order made: whether
	// the tail is a collection (neighbours) or spread out.
	CPUPerChangeMs []float64 `json:"cpuPerChangeMs,omitempty"`
	// Mix is the mix phase's figures by kind (mixphase.go), priced as
	// the CPU phase prices a flip, per Service or EndpointSlice written;
	// MixDiscarded counts changes a drift repair overlapped, not priced.
	Mix                  map[string]mixKind `json:"mix,omitempty"`
	MixDiscarded         int                `json:"mixDiscarded,omitempty"`
	MixCollections       float64            `json:"mixCollections,omitempty"`
	MixCollectorCPUMs    float64            `json:"mixCollectorCPUMs,omitempty"`
	MixAllocKiBPerChange float64            `json:"mixAllocKiBPerChange,omitempty"`
	// CPUHNSWritesPerChange are hnsproxy's HNS writes per change. When
	// all are load balancer updates, load balancer creates and deletes
	// (where HNS cannot modify) and remote endpoint creates and deletes,
	// CPUTransportUsPerUpdate, CPUTransportUsPerLBWrite and
	// CPUTransportUsPerEndpointWrite are what the client half of hnssim's
	// transport costs one of each (a probe process of its own making the
	// same calls), and
	// CPUPerSliceP99LessTransportMs the per-slice p99 less what a change's
	// writes cost on average: hnsproxy with a free HNS client, against
	// CPUPerSliceP99Ms with this one.
	CPUHNSWritesPerChange          float64 `json:"cpuHNSWritesPerChange"`
	CPUTransportUsPerUpdate        float64 `json:"cpuTransportUsPerUpdate,omitempty"`
	CPUTransportUsPerLBWrite       float64 `json:"cpuTransportUsPerLBWrite,omitempty"`
	CPUTransportUsPerEndpointWrite float64 `json:"cpuTransportUsPerEndpointWrite,omitempty"`
	CPUPerSliceP99LessTransportMs  float64 `json:"cpuPerSliceP99LessTransportMs,omitempty"`
	CPURPCLatency                  string  `json:"cpuRPCLatency,omitempty"`
	CPUPhaseSyncsPerChange         float64 `json:"cpuPhaseSyncsPerChange"`
	// CPUPhaseFullSyncs are the full syncs (every Service recomputed: a
	// Node or configuration change; a periodic sync is none) that ran
	// during the phase, each charged to the change it ran beside.
	CPUPhaseFullSyncs         float64 `json:"cpuPhaseFullSyncs"`
	CPUPhaseCollections       float64 `json:"cpuPhaseCollections"`
	CPUPhaseCollectorCPUMs    float64 `json:"cpuPhaseCollectorCPUMs"`
	CPUPhaseAllocKiBPerChange float64 `json:"cpuPhaseAllocKiBPerChange"`
	// CPUChangesPerCollection is how many such changes allocate what
	// takes the heap from its live size to the collector's goal.
	CPUChangesPerCollection   float64 `json:"cpuChangesPerCollection"`
	HNSRestartRecoverySeconds float64 `json:"hnsRestartRecoverySeconds"`
	// HNSRestartLoses is what the second restart dropped; the recovery
	// runs from HNS's return until every Service is programmed again, and
	// its CPU is hnsproxy's over that time.
	HNSRestartLoses                   string  `json:"hnsRestartLoses,omitempty"`
	HNSLossyRestartRecoverySeconds    float64 `json:"hnsLossyRestartRecoverySeconds,omitempty"`
	HNSLossyRestartRecoveryCPUSeconds float64 `json:"hnsLossyRestartRecoveryCPUSeconds,omitempty"`
	// HNSLossyRestartChangeSeconds is the latency of a change made in the
	// recovery, HNSLossyRestartChangeMadeAtSeconds after HNS's return.
	HNSLossyRestartChangeMadeAtSeconds float64 `json:"hnsLossyRestartChangeMadeAtSeconds,omitempty"`
	HNSLossyRestartChangeSeconds       float64 `json:"hnsLossyRestartChangeSeconds,omitempty"`
	// HNSLossyRestartOutageChangeSeconds is when the change made during
	// the outage (a Pod unready) showed in HNS, from HNS's return.
	HNSLossyRestartOutageChangeSeconds float64 `json:"hnsLossyRestartOutageChangeSeconds,omitempty"`
	// HNSLossyRestartReturnChangeSeconds is the latency of the change made
	// as HNS returned (a Pod ready again whose Services' load balancers the
	// restart dropped), HNSLossyRestartReturnChangeMadeAtSeconds after it.
	HNSLossyRestartReturnChangeMadeAtSeconds float64 `json:"hnsLossyRestartReturnChangeMadeAtSeconds,omitempty"`
	HNSLossyRestartReturnChangeSeconds       float64 `json:"hnsLossyRestartReturnChangeSeconds,omitempty"`
	// The repair's work after that restart, as hnsproxy's log says it was
	// done: in how many Syncs (a chunk each) and seconds from the first.
	HNSLossyRestartRepairSyncs       int     `json:"hnsLossyRestartRepairSyncs,omitempty"`
	HNSLossyRestartRepairWorkSeconds float64 `json:"hnsLossyRestartRepairWorkSeconds,omitempty"`
	NodeRebootFullSyncSeconds        float64 `json:"nodeRebootFullSyncSeconds"`
	// HNSAfterReboot counts the calls the fresh HNS saw since the reboot.
	HNSAfterReboot sim.Counters `json:"hnsAfterReboot"`
}

const (
	// changesProfileSeconds is how much of the CPU phase a profile covers.
	changesProfileSeconds = 20
	// repairFresh: the CPU phase starts within this of a repair's end.
	repairFresh = 5 * time.Second
	nodeName    = "bench-node"
	syncWait    = 30 * time.Minute // a deadline for a stuck run, not a target
	applyWait   = 2 * time.Minute
	// listingWait bounds an HNS listing the mix phase waits out: two
	// listings of hnsproxy's --hns-list-timeout (2m) and the judging.
	listingWait = 5 * time.Minute
	// recoveryChangeLag is how long after the drift repair that found
	// objects gone the recovery's change is made: the next Sync, which
	// makes them again, has started by then.
	recoveryChangeLag = 2 * time.Second
)

func main() {
	var o options
	flag.IntVar(&o.services, "services", 10000, "Services")
	flag.IntVar(&o.endpoints, "endpoints", 100000, "endpoints over all Services (a multiple of -services)")
	flag.IntVar(&o.groupSize, "group-size", 10, "Services selecting the same Pods")
	flag.IntVar(&o.changes, "changes", 100, "readiness changes measured (each pod goes unready, then ready again: two changes)")
	flag.DurationVar(&o.rpcLatency, "rpc-latency", 200*time.Microsecond, "hnssim's latency per hcn RPC")
	flag.DurationVar(&o.hnsOutage, "hns-outage", 10*time.Second, "how long the simulated HNS restart refuses calls")
	flag.StringVar(&o.restartLoses, "hns-restart-loses", string(sim.RestartLosesRemoteEndpoints), "what a second HNS restart drops (docs/simulator.md, \"What a restart drops\"); empty for no second restart")
	flag.StringVar(&o.proxyEnv, "proxy-env", "", "one NAME=VALUE added to hnsproxy's environment (GOMEMLIMIT=200MiB, say); hnsproxy always runs with GODEBUG=gctrace=1, which a GODEBUG here keeps")
	flag.StringVar(&o.profile, "profile", sim.ProfileWS2025, "the Windows build hnssim behaves like (ws2019, ws2022, ws2025, and the variants of docs/simulator.md)")
	flag.IntVar(&o.nodes, "nodes", 0, "remote nodes the pods run on (0: one per 200 pods; overlay: a remote subnet route each); more than 255 take their pod CIDRs from 100.64.0.0/10")
	flag.StringVar(&o.mode, "mode", framework.NetworkL2Bridge, "the node's network: l2bridge or overlay (a remote subnet route per remote node)")
	flag.DurationVar(&o.repairPeriod, "repair-period", time.Minute, "hnsproxy's --drift-repair-period")
	flag.IntVar(&o.repairChanges, "repair-changes", 50, "changes measured while a drift repair runs, each repair given an out-of-band deletion to find (0: none, and no repair runs)")
	flag.DurationVar(&o.cpuRPCLatency, "cpu-rpc-latency", 0, "hnssim's latency per hcn RPC during the CPU phase and its transport probe: 0, as the in-process harness prices CPU (a simulated wait is a sleep whose park and wake-up the waiting goroutine pays; an hcn call blocks its thread in the kernel instead)")
	flag.IntVar(&o.cpuPods, "cpu-pods", 100, "pods the CPU phase flips, unready then ready, pricing each change in hnsproxy's process CPU with nothing else asking it anything (0: no CPU phase)")
	flag.DurationVar(&o.minSyncPeriod, "min-sync-period", 0, "hnsproxy's --min-sync-period: 0 syncs on every change as fast as it can (the e2e rig's); kube-proxy's default is 1s, which gathers a change's slices into fewer syncs")
	flag.IntVar(&o.mixGroups, "mix-groups", 0, "after the CPU phase, the mix phase: this many Service groups scaled to 50 pods and back, and as many Services created and deleted, each change priced in hnsproxy's process CPU per Service or EndpointSlice written (0: none)")
	flag.StringVar(&o.profileDir, "heap-profiles", "", "if set, run hnsproxy with --profiling and save its heap profile here at the end (after every RSS reading: the profile collects garbage first), and during each full sync log its memory every second and save the profile at the highest heap goal; and a CPU profile of the CPU phase's first seconds, cpu-changes.pprof (sampling costs those changes a little)")
	flag.IntVar(&o.coldProfileSeconds, "cold-cpu-profile-seconds", 0, "with -heap-profiles, also save a CPU profile of hnsproxy's first seconds (its cold start) there as cpu-cold.pprof")
	flag.StringVar(&o.dir, "dir", "", "working folder (keep it short: unix sockets); default a temporary one")
	probeSocket := flag.String("transport-probe-socket", "", "run only the transport probe against this hnssim socket (the bench runs itself so)")
	probeN := flag.Int("transport-probe-calls", probeCalls, "the transport probe's calls")
	probeModify := flag.Bool("transport-probe-modify", true, "the transport probe prices load balancer updates (HNS modifies)")
	flag.Parse()
	if *probeSocket != "" {
		if err := runTransportProbe(*probeSocket, *probeN, *probeModify); err != nil {
			fmt.Fprintln(os.Stderr, "benche2e:", err)
			os.Exit(1)
		}
		return
	}
	if err := o.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "benche2e:", err)
		os.Exit(2)
	}
	r, err := run(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benche2e:", err)
		os.Exit(1)
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

func (o *options) validate() error {
	if o.services <= 0 || o.groupSize <= 0 || o.services%o.groupSize != 0 {
		return fmt.Errorf("-services %d must be a positive multiple of -group-size %d", o.services, o.groupSize)
	}
	if o.endpoints <= 0 || o.endpoints%o.services != 0 {
		return fmt.Errorf("-endpoints %d must be a positive multiple of -services %d", o.endpoints, o.services)
	}
	o.podsPerGroup = o.endpoints / o.services
	if o.cpuPods < 0 {
		return fmt.Errorf("-cpu-pods %d: want 0 (no CPU phase) or more", o.cpuPods)
	}
	if o.cpuRPCLatency < 0 || o.cpuRPCLatency > remote.MaxFaultLatency {
		return fmt.Errorf("-cpu-rpc-latency %v: want 0 to %v", o.cpuRPCLatency, remote.MaxFaultLatency)
	}
	if o.mode != framework.NetworkL2Bridge && o.mode != framework.NetworkOverlay {
		return fmt.Errorf("-mode %q: want %s or %s", o.mode, framework.NetworkL2Bridge, framework.NetworkOverlay)
	}
	if o.repairChanges > 0 && (o.repairPeriod <= 0 || o.layout.groups() < 2) {
		return fmt.Errorf("-repair-changes needs a -repair-period and two Service groups or more")
	}
	if o.nodes < 0 || o.remoteNodes() > largePlanNodes {
		return fmt.Errorf("-nodes %d: want 0 (one per %d pods) to %d", o.nodes, podsPerRemoteNode, largePlanNodes)
	}
	if o.minSyncPeriod < 0 {
		return fmt.Errorf("-min-sync-period %v: want 0 or more", o.minSyncPeriod)
	}
	if o.mixGroups < 0 || o.mixGroups > o.groups() {
		return fmt.Errorf("-mix-groups %d: want 0 to the %d Service groups", o.mixGroups, o.groups())
	}
	pods := o.pods()
	if o.mixGroups > 0 {
		pods += o.extraPods()
	}
	if perNode := (pods + o.remoteNodes() - 1) / o.remoteNodes(); perNode > maxPodsPerNode {
		return fmt.Errorf("-nodes %d: %d pods a node, want at most %d", o.remoteNodes(), perNode, maxPodsPerNode)
	}
	if _, err := sim.ProfileByName(o.profile); err != nil {
		return fmt.Errorf("-profile: %w", err)
	}
	return nil
}

// setLatency sets hnssim's latency per hcn RPC.
func setLatency(ctx context.Context, node *framework.Node, d time.Duration) error {
	lat := remote.Duration(d)
	return node.Sim.SetFaults(ctx, remote.FaultsRequest{Latency: &lat})
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benche2e %s: %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, o options) (r report, err error) {
	r = report{Services: o.services, Endpoints: o.endpoints, Pods: o.pods(), RemoteNodes: o.remoteNodes(),
		RPCLatency: o.rpcLatency.String(), Profile: o.profile, CPUs: runtime.NumCPU(), ProxyEnv: o.proxyEnv,
		Mode: o.mode, RepairPeriod: o.repairPeriod.String(), MinSyncPeriod: o.minSyncPeriod.String()}
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "benche2e"); err != nil {
			return r, err
		}
	}
	cp, err := framework.Start(ctx, filepath.Join(o.dir, "cp"), framework.Options{})
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()
	// The controller's client defaults (20 QPS) would take minutes to
	// write 10,000 slices; a real control plane raises them too.
	kcm, err := cp.StartControllerManager(ctx, []string{"endpointslice-controller"},
		"--kube-api-qps=500", "--kube-api-burst=1000", "--concurrent-service-endpoint-syncs=10")
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, kcm.Stop()) }()
	cfg, err := cp.AdminConfig()
	if err != nil {
		return r, err
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return r, err
	}

	logf("loading %d Services, %d endpoints (%d Pods on %d nodes)", o.services, o.endpoints, o.pods(), o.remoteNodes())
	start := time.Now()
	if err := load(ctx, admin, o.layout); err != nil {
		return r, fmt.Errorf("loading: %w", err)
	}
	if err := waitSlices(ctx, admin, o.endpoints, syncWait); err != nil {
		return r, err
	}
	r.LoadSeconds = time.Since(start).Seconds()
	logf("EndpointSlices complete after %.1fs", r.LoadSeconds)
	vips, err := clusterIPs(ctx, admin, o.services)
	if err != nil {
		return r, err
	}
	want := map[string]int{}
	for _, vip := range vips {
		want[vip] = o.podsPerGroup
	}

	// hnsproxy and hnssim are built first, so the sync is timed alone.
	if _, err := framework.Tools(); err != nil {
		return r, err
	}
	start = time.Now()
	cluster, err := framework.StartCluster(ctx, cp, framework.ClusterSpec{
		NetworkType:       o.mode,
		ClusterCIDR:       o.clusterCIDR(),
		Nodes:             []framework.NodeSpec{{Name: nodeName, Profile: o.profile, NodeIP: "10.0.0.1", PodCIDR: o.podCIDR(0)}},
		DriftRepairPeriod: o.driftRepairPeriod(),
		HNSSimArgs:        append([]string{"--latency", o.rpcLatency.String()}, o.remoteSubnetArgs()...),
		ProxyArgs:         o.proxyArgs(),
		ProxyLaunch: func(rig framework.ProxyRig) ([]string, []string, error) {
			return rig.Args, proxyEnvironment(o.proxyEnv), nil
		},
	}, filepath.Join(o.dir, "n"))
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, cluster.Stop()) }()
	node := cluster.Node(nodeName)
	rss := watchRSS(node.Proxy.PID, node.Proxy.MetricsURL)
	coldProfile := o.cpuProfile(ctx, node, "cold", o.coldProfileSeconds)
	stopHeapPeak := o.heapPeak(ctx, node, "cold")
	if r.FirstFullSyncSeconds, r.RSSAfterSyncMiB, r.FirstFullSyncCPUSeconds, err = fullSync(ctx, node, want, start); err != nil {
		return r, err
	}
	if err := stopHeapPeak(); err != nil {
		return r, err
	}
	logf("first full sync after %.1fs, %.2fs of hnsproxy CPU", r.FirstFullSyncSeconds, r.FirstFullSyncCPUSeconds)
	if err := <-coldProfile; err != nil {
		return r, err
	}

	rss.setPhase("changes")
	before, err := scrapeBuckets(node.Proxy.MetricsURL(), programmingMetric)
	if err != nil {
		return r, err
	}
	view := newHNSView(node.Sim.Client)
	// The view learns which load balancer serves each VIP from one dump of
	// HNS (0.3 s at 10,000 Services): taken here, it is not charged to the
	// first change.
	if _, err := view.refresh(ctx); err != nil {
		return r, err
	}
	watch, err := watchSlices(ctx, admin)
	if err != nil {
		return r, err
	}
	m := &measure{ctx: ctx, admin: admin, view: view, slices: watch, repairs: watchRepairs(ctx, node), l: o.layout, vips: vips,
		modifies: o.modifies(), minSyncPeriod: o.minSyncPeriod}
	for k := range o.changes {
		for _, ready := range []bool{false, true} {
			if err := m.change(pick(o.layout, k), ready); err != nil {
				return r, err
			}
		}
	}
	after, err := scrapeBuckets(node.Proxy.MetricsURL(), programmingMetric)
	if err != nil {
		return r, err
	}
	rss.setPhase("repair phase")
	if err := m.repairPhase(node, o.repairChanges, o.changes, o.repairPeriod); err != nil {
		return r, err
	}
	if o.cpuPods > 0 && o.repairChanges > 0 {
		// Start just after a repair ended: the next is a repair period
		// away, and the phase stops if it comes sooner.
		if err := m.repairs.waitRepairEnded(ctx, repairFresh, o.repairPeriod+applyWait); err != nil {
			return r, fmt.Errorf("before the CPU phase: %w", err)
		}
	}
	if err := m.repairs.close(); err != nil {
		return r, fmt.Errorf("following drift repairs: %w", err)
	}
	if o.cpuPods > 0 {
		rss.setQuietPhase("CPU phase")
		if err := o.allocsProfile(ctx, node, "changes-start", false); err != nil {
			return r, err
		}
		if err := setLatency(ctx, node, o.cpuRPCLatency); err != nil {
			return r, err
		}
		profile := o.cpuProfile(ctx, node, "changes", changesProfileSeconds)
		cpu, err := m.cpuPhase(node, o.cpuPods, o.changes+m.used)
		if err != nil {
			return r, err
		}
		if err := setLatency(ctx, node, o.rpcLatency); err != nil {
			return r, err
		}
		r.CPURPCLatency = o.cpuRPCLatency.String()
		if err := <-profile; err != nil {
			return r, err
		}
		if err := o.allocsProfile(ctx, node, "changes-end", false); err != nil {
			return r, err
		}
		cpu.fill(&r, o.groupSize)
		logf("CPU phase: %d changes, hnsproxy CPU per change p50 %.2fms p99 %.2fms max %.2fms (per slice p99 %.3fms; %.3fms less hnssim's client at %.0fus an update); %.1f syncs a change; %.0f collections%s",
			r.CPUChanges, r.CPUPerChangeP50Ms, r.CPUPerChangeP99Ms, r.CPUPerChangeMaxMs, r.CPUPerSliceP99Ms, r.CPUPerSliceP99LessTransportMs, r.CPUTransportUsPerUpdate, r.CPUPhaseSyncsPerChange, r.CPUPhaseCollections, stoppedNote(r.CPUStopped))
	}
	if o.mixGroups > 0 {
		if err := m.runMix(node, o, &r); err != nil {
			return r, err
		}
	}
	m.report(&r)
	var p50, p99 float64
	p50, r.MetricObservations = quantileBound(before, after, 0.50)
	p99, _ = quantileBound(before, after, 0.99)
	r.MetricP50BucketSeconds, r.MetricP99BucketSeconds = fmt.Sprint(p50), fmt.Sprint(p99)
	logf("%d changes: p50 %.3fs p99 %.3fs; %d during %d drift repairs: p50 %.3fs p99 %.3fs", r.Changes, r.ProgrammingP50Seconds, r.ProgrammingP99Seconds,
		r.RepairChanges, r.RepairListings, r.RepairProgrammingP50Seconds, r.RepairProgrammingP99Seconds)
	if r.RSSAfterChangesMiB, err = rssMiB(node.Proxy.PID()); err != nil {
		return r, err
	}

	// HNS restart: HNS refuses every call for the outage; a change made
	// in it is programmed once HNS is back. Recovery runs from its end.
	lat0 := remote.Duration(o.rpcLatency)
	rss.setPhase("HNS restart")
	// What the outage and the recovery allocate: the difference of these
	// two (go tool pprof -sample_index=alloc_space -base ...). A profile
	// counts allocations up to the last collection: none is forced here,
	// so the heap's course through the outage is left as it was, and the
	// one after it is collected first.
	if err := o.allocsProfile(ctx, node, "restart-start", false); err != nil {
		return r, err
	}
	if err := node.Sim.SetFaults(ctx, remote.FaultsRequest{Restart: remote.Duration(o.hnsOutage), Latency: &lat0}); err != nil {
		return r, err
	}
	back := time.Now().Add(o.hnsOutage)
	n := pick(o.layout, o.changes+m.used)
	if _, err := change(ctx, admin, view, watch, o.layout, vips, n, false, o.hnsOutage+applyWait); err != nil {
		return r, fmt.Errorf("change during an HNS restart: %w", err)
	}
	r.HNSRestartRecoverySeconds = time.Since(back).Seconds()
	logf("HNS restart: programmed %.2fs after HNS came back", r.HNSRestartRecoverySeconds)
	if err := o.allocsProfile(ctx, node, "restart-end", true); err != nil {
		return r, err
	}
	if _, err := change(ctx, admin, view, watch, o.layout, vips, n, true, applyWait); err != nil {
		return r, err
	}
	if o.restartLoses != "" {
		if err := lossyRestart(ctx, o, node, &r, func(k int, ready bool, timeout time.Duration) (timing, error) {
			// A view of its own: two changes are awaited at once.
			return change(ctx, admin, newHNSView(node.Sim.Client), watch, o.layout, vips, pick(o.layout, o.changes+m.used+k), ready, timeout)
		}, want, rss); err != nil {
			return r, err
		}
	}

	// Node reboot: HNS empty, hnsproxy started again with its state file.
	if err := node.Proxy.Stop(); err != nil {
		return r, err
	}
	rss.setPhase("node reboot")
	if err := cluster.ReplaceHNS(ctx, node); err != nil {
		return r, err
	}
	start = time.Now()
	if err := node.Proxy.Start(ctx); err != nil {
		return r, err
	}
	stopHeapPeak = o.heapPeak(ctx, node, "reboot")
	if r.NodeRebootFullSyncSeconds, r.RSSEndMiB, r.NodeRebootFullSyncCPUSeconds, err = fullSync(ctx, node, want, start); err != nil {
		return r, err
	}
	if err := stopHeapPeak(); err != nil {
		return r, err
	}
	logf("node reboot: full sync after %.1fs, %.2fs of hnsproxy CPU", r.NodeRebootFullSyncSeconds, r.NodeRebootFullSyncCPUSeconds)
	r.RSSPeakMiB = rss.peakMiB()
	if r.HeapGoalMiB, err = heapGoalMiB(node.Proxy.MetricsURL()); err != nil {
		return r, err
	}
	if err := o.heapProfile(ctx, node, "end"); err != nil {
		return r, err
	}
	r.HNSAfterReboot, err = node.Sim.Stats(ctx)
	return r, err
}

// lossyRestart restarts HNS dropping what o.restartLoses names (which a
// real restart drops is not known) with a change made in the outage, so
// that hnsproxy meets the restart, as the first restart does; flip(k, ...)
// changes the k-th pod after those the other phases used, and the change
// is taken back once HNS shows it. A second change, of another group, is
// made recoveryChangeLag after hnsproxy's log shows the drift repair that
// found the dropped objects gone, while they are being made again: its
// latency says how long a change waits behind that work. Recovery runs
// from HNS's return until every Service is programmed as in want again;
// the second change is taken back within it.
func lossyRestart(ctx context.Context, o options, node *framework.Node, r *report, flip func(k int, ready bool, timeout time.Duration) (timing, error), want map[string]int, rss *rssWatch) error {
	rss.setPhase("HNS restart that drops objects")
	stopHeapPeak := o.heapPeak(ctx, node, "lossy")
	defer func() {
		if err := stopHeapPeak(); err != nil {
			logf("heap profile of the restart that drops objects: %v", err)
		}
	}()
	lat := remote.Duration(o.rpcLatency)
	pid := node.Proxy.PID()
	cpuBefore, err := framework.ProcessCPU(pid)
	if err != nil {
		return err
	}
	plog := &proxyLog{path: node.Proxy.LogPath()}
	log0, err := plog.read()
	if err != nil {
		return err
	}
	if err := node.Sim.SetFaults(ctx, remote.FaultsRequest{Restart: remote.Duration(o.hnsOutage), RestartLoses: o.restartLoses, Latency: &lat}); err != nil {
		return err
	}
	back := time.Now().Add(o.hnsOutage)
	outage, err := flip(1, false, o.hnsOutage+syncWait)
	if err != nil {
		return fmt.Errorf("change during an HNS restart that drops objects: %w", err)
	}
	r.HNSLossyRestartOutageChangeSeconds = outage.at.Add(outage.total).Sub(back).Seconds()
	// The Pod goes ready again as HNS returns, its Services' load
	// balancers gone: a change the recovery may hold. It is awaited
	// beside the rest, so that the change made once the repair found
	// what is gone is made then, whatever holds this one.
	type flipped struct {
		t   timing
		err error
	}
	returned := make(chan flipped, 1)
	go func() {
		t, err := flip(1, true, syncWait)
		returned <- flipped{t, err}
	}()
	if _, err := plog.awaitDriftFound(ctx, log0, 20*time.Millisecond, syncWait); err != nil {
		<-returned
		return err
	}
	time.Sleep(recoveryChangeLag)
	during, err := flip(2, false, syncWait)
	first := <-returned
	if err != nil {
		return fmt.Errorf("change during the recovery from an HNS restart that dropped objects: %w", err)
	}
	if first.err != nil {
		return fmt.Errorf("change as HNS returned from a restart that dropped objects: %w", first.err)
	}
	if _, err := flip(2, true, syncWait); err != nil {
		return err
	}
	r.HNSLossyRestartReturnChangeMadeAtSeconds = first.t.at.Sub(back).Seconds()
	r.HNSLossyRestartReturnChangeSeconds = first.t.total.Seconds()
	r.HNSLossyRestartChangeMadeAtSeconds = during.at.Sub(back).Seconds()
	r.HNSLossyRestartChangeSeconds = during.total.Seconds()
	logf("HNS restart dropping %s: a change made during the outage shown %.1fs after HNS came back; one made %.1fs after programmed after %.1fs; one made %.1fs after, in the recovery, after %.1fs", o.restartLoses,
		r.HNSLossyRestartOutageChangeSeconds, r.HNSLossyRestartReturnChangeMadeAtSeconds, r.HNSLossyRestartReturnChangeSeconds, r.HNSLossyRestartChangeMadeAtSeconds, r.HNSLossyRestartChangeSeconds)
	seconds, _, cpuAfter, err := fullSync(ctx, node, want, back)
	if err != nil {
		return fmt.Errorf("after an HNS restart that dropped %s: %w", o.restartLoses, err)
	}
	r.HNSRestartLoses = o.restartLoses
	r.HNSLossyRestartRecoverySeconds = seconds
	r.HNSLossyRestartRecoveryCPUSeconds = cpuAfter - cpuBefore.Seconds()
	logf("HNS restart dropping %s: every Service programmed %.1fs after HNS came back, %.2fs of hnsproxy CPU", o.restartLoses, seconds, r.HNSLossyRestartRecoveryCPUSeconds)
	work, err := plog.awaitWorkDone(ctx, log0, 100*time.Millisecond, syncWait)
	if err != nil {
		return err
	}
	r.HNSLossyRestartRepairSyncs, r.HNSLossyRestartRepairWorkSeconds = work.lastWorkSyncs, work.lastWorkSeconds
	logf("HNS restart dropping %s: the repair's work done in %d syncs over %.1fs", o.restartLoses, work.lastWorkSyncs, work.lastWorkSeconds)
	return nil
}

// modifies reports whether hnssim's profile updates a load balancer in
// place (hnsproxy's --hns-modify-load-balancer is auto in the bench).
func (o options) modifies() bool {
	p, err := sim.ProfileByName(o.profile)
	return err == nil && hnslb.FeaturesFor(p.Version).ModifyLoadBalancer
}

// driftRepairPeriod is hnsproxy's: an hour when no repair phase runs, so
// none runs during the measurements.
func (o options) driftRepairPeriod() time.Duration {
	if o.repairChanges == 0 {
		return time.Hour
	}
	return o.repairPeriod
}

// remoteSubnetArgs give hnssim, on overlay, a route to each remote node's
// pod CIDR through its node IP, as Flannel's VXLAN backend sets them.
func (o options) remoteSubnetArgs() []string {
	if o.mode != framework.NetworkOverlay {
		return nil
	}
	var args []string
	for i := range o.remoteNodes() {
		args = append(args, "--remote-subnet", o.remotePodCIDR(i)+"="+remoteNodeIP(i))
	}
	return args
}

// proxyArgs are the flags added to the rig's: --profiling when heap
// profiles are asked for. The rig's periodic syncs (30 s) stay: a sync
// starts each drift repair that is due, and the repair phase waits for
// them. They recompute only what changed; the CPU phase counts the full
// syncs that land in it (cpuPhaseFullSyncs).
func (o options) proxyArgs() []string {
	var args []string
	if o.profileDir != "" {
		args = append(args, "--profiling")
	}
	if o.minSyncPeriod > 0 { // after the rig's 0s, so it wins
		args = append(args, "--min-sync-period="+o.minSyncPeriod.String())
	}
	return args
}

// cpuProfile starts, when asked for (a folder, and seconds > 0), a CPU
// profile of hnsproxy's next seconds, saved as cpu-<label>.pprof; the
// channel yields its outcome.
func (o options) cpuProfile(ctx context.Context, node *framework.Node, label string, seconds int) <-chan error {
	done := make(chan error, 1)
	if o.profileDir == "" || seconds <= 0 {
		done <- nil
		return done
	}
	go func() {
		done <- saveCPUProfile(ctx, node.Proxy.MetricsURL(), o.profileDir, label, seconds)
	}()
	return done
}

// heapProfile saves hnsproxy's heap profile when asked for.
func (o options) heapProfile(ctx context.Context, node *framework.Node, label string) error {
	if o.profileDir == "" {
		return nil
	}
	return saveHeapProfile(ctx, node.Proxy.MetricsURL(), o.profileDir, label)
}

// allocsProfile saves hnsproxy's allocation profile when asked for.
func (o options) allocsProfile(ctx context.Context, node *framework.Node, label string, collect bool) error {
	if o.profileDir == "" {
		return nil
	}
	query := "heap" // its alloc_space is the allocs profile's; only heap takes gc=1
	if collect {
		query += "?gc=1"
	}
	return saveProfile(ctx, node.Proxy.MetricsURL(), query, filepath.Join(o.profileDir, "allocs-"+label+".pprof"))
}

// pick is the pod the k-th change flips: each group in turn, a different
// pod of it each round.
func pick(l layout, k int) int {
	g := k % l.groups()
	return g*l.podsPerGroup + (k/l.groups())%l.podsPerGroup
}

// timing is one change's latency from when it was made (at): until HNS
// shows it, and until the bench's own watch saw the controller's
// EndpointSlice writes (zero when it did not see every one).
type timing struct {
	at            time.Time
	total, slices time.Duration
}

// change flips pod n's readiness and times it until every Service of its
// group balances to it (ready) or no longer does (unready) in HNS.
func change(ctx context.Context, admin kubernetes.Interface, view *hnsView, watch *sliceWatch, l layout, vips []string, n int, ready bool, timeout time.Duration) (timing, error) {
	_, ip := l.podPlace(n)
	names, group := l.group(n/l.podsPerGroup, vips)
	start := time.Now()
	if err := setReady(ctx, admin, l, n, ready); err != nil {
		return timing{}, err
	}
	seen, err := view.waitFor(ctx, group, timeout, func(ips []string) bool {
		return slices.Contains(ips, ip) == ready
	})
	if err != nil {
		return timing{}, fmt.Errorf("pod %d (%s) ready=%v: %w", n, ip, ready, err)
	}
	t := timing{at: start, total: seen.Sub(start)}
	if sliced, ok := watch.latest(names, start); ok {
		t.slices = sliced.Sub(start)
	}
	return t, nil
}

// fullSync waits until the node's HNS balances every Service to all its
// endpoints and returns the seconds since start, and hnsproxy's RSS and the
// CPU seconds it has used since it started, then.
func fullSync(ctx context.Context, node *framework.Node, want map[string]int, start time.Time) (seconds, rss, cpu float64, err error) {
	view := newHNSView(node.Sim.Client)
	err = framework.Poll(ctx, syncWait, time.Second, func(ctx context.Context) error {
		n, err := view.synced(ctx, want)
		if err != nil {
			return err
		}
		if n != len(want) {
			return fmt.Errorf("%d of %d Services programmed", n, len(want))
		}
		return nil
	})
	if err != nil {
		return 0, 0, 0, err
	}
	seconds = time.Since(start).Seconds()
	pid := node.Proxy.PID()
	used, err := framework.ProcessCPU(pid)
	if err != nil {
		return 0, 0, 0, err
	}
	rss, err = rssMiB(pid)
	return seconds, rss, used.Seconds(), err
}

// clusterIPs are the Services' ClusterIPs by Service number.
func clusterIPs(ctx context.Context, admin kubernetes.Interface, services int) ([]string, error) {
	list, err := admin.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	ips := make([]string, services)
	for _, s := range list.Items {
		var i int
		if _, err := fmt.Sscanf(s.Name, "s-%d", &i); err != nil || i < 0 || i >= services {
			continue
		}
		ips[i] = s.Spec.ClusterIP
	}
	if i := slices.Index(ips, ""); i >= 0 {
		return nil, fmt.Errorf("service %s has no ClusterIP", serviceName(i))
	}
	return ips, nil
}

// quantile of d (nearest rank, q in 0..1), in seconds.
func quantile(d []time.Duration, q float64) float64 {
	return nearestrank.Percentile(d, q*100).Seconds()
}
