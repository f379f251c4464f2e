// Command scale drives the real proxier (informer handlers, change tracker,
// sync loop, desired-state mapping and reconciler) against the in-process
// HNS simulator at cluster scale, on l2bridge or overlay and any HNS
// profile, and reports HNS calls, CPU, wall time and memory for a cold
// start, each kind of change (readiness flips, new local pods, pods
// replaced, Services created and deleted, scaling, node drains), a periodic
// sync with nothing changed, a drift repair and a restart, checking HNS
// against its own model and each phase's writes against the minimum. Kubernetes objects
// come from client-go's fake clientset through real informers. Progress
// goes to stderr; the last line of stdout is one JSON object.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"

	"github.com/hnsproxy/hnsproxy/sim"
)

type options struct {
	spec         clusterSpec
	changes      int
	newLocalPods int
	replacements int
	serviceChurn int
	scales       int
	drains       int
	drift        int
	duringRepair int
	duringLookup int
	latency      time.Duration
	profile      string
	cpuProfile   string
	cpuPhase     string
	memProfile   string
	memPhase     string
	memRate      int
	quiet        time.Duration
	pause        time.Duration
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.IntVar(&o.spec.Services, "services", 10000, "Services (one TCP port, ClusterIP each)")
	fs.IntVar(&o.spec.EndpointsPerService, "endpoints-per-service", 10, "ready endpoints per Service, distinct pods drawn at random from the pod pool")
	fs.IntVar(&o.spec.Nodes, "nodes", 100, "nodes the pods are spread over (at most 5000); the harness plays the first")
	mode := fs.String("mode", "l2bridge", "the node's pod network: l2bridge or overlay (VXLAN; remote subnet routes to every other node)")
	fs.IntVar(&o.spec.PodsPerNode, "pods-per-node", 110, "pods per node (kubelet's default max-pods); the pool Services draw endpoints from")
	seed := fs.Uint64("seed", 1, "seed of the cluster layout and the changes")
	fs.IntVar(&o.changes, "changes", 1000, "random readiness flips of one endpoint after the cold start")
	fs.IntVar(&o.replacements, "replacements", 100, "then replace this many remote pods by new pods on other nodes, in every Service they back")
	fs.IntVar(&o.serviceChurn, "service-churn", 50, "then create this many Services with their EndpointSlices, each deleted right after")
	fs.IntVar(&o.scales, "scales", 20, "then scale this many Services from -endpoints-per-service to five times as many new pods and back")
	fs.IntVar(&o.drains, "drains", 2, "then drain this many nodes: every pod on one is replaced by a new pod on another node")
	fs.IntVar(&o.duringRepair, "changes-during-repair", 100, "then start a drift repair and make up to this many readiness flips while it lists HNS (give -hns-latency for a repair of real length)")
	fs.IntVar(&o.duringLookup, "changes-during-lookup", 100, "then give a Service an external IP (a new tenant frontend, which only a listing of HNS shows free of foreign load balancers) and make up to this many readiness flips until it is programmed")
	fs.IntVar(&o.drift, "drift", 10, "load balancers deleted out of band before the measured drift repair")
	fs.IntVar(&o.newLocalPods, "new-local-pods", 20, "then replace this many endpoints by brand-new pods on this node (at most 254-pods-per-node)")
	fs.DurationVar(&o.latency, "hns-latency", 0, "simulated latency of one hcn RPC, waited once per RPC a call costs (a sleep: adds wall time, not CPU); the target model is 0.2ms")
	fs.StringVar(&o.profile, "profile", sim.ProfileWS2025, "simulated HNS profile (ws2019, ws2022, ws2025-15.4, ws2025); without modify (all but ws2025) a load balancer update is a delete and a create")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a pprof CPU profile of -cpuprofile-phase to this file")
	fs.StringVar(&o.cpuPhase, "cpuprofile-phase", "all", "phase the CPU profile covers: cold, incr, newpods, mix, repair, restart or all")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a pprof heap profile taken after -memprofile-phase to this file")
	fs.StringVar(&o.memPhase, "memprofile-phase", "cold", "phase after which the heap profile is taken: setup (the cluster built, before the cold start), cold, newpods or mix (its allocations since start: diff two with pprof -base)")
	fs.IntVar(&o.memRate, "memprofile-rate", 0, "bytes allocated per sample of -memprofile (runtime.MemProfileRate; 0 keeps the runtime's 512 KiB): 1 records every allocation, so two runs' profiles diff exactly, at several times the run's CPU")
	fs.DurationVar(&o.pause, "pause", 0, "idle time before each measured change of the flips and mixes (waited, not measured): on a node changes come seconds apart and find the caches cold; 0 makes them back to back")
	fs.DurationVar(&o.quiet, "quiet", 300*time.Millisecond, "no sync for this long after convergence ends a phase (waited, not measured)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.spec.Seed = *seed
	switch *mode {
	case "l2bridge":
	case "overlay":
		o.spec.Overlay = true
	default:
		return o, fmt.Errorf("-mode must be l2bridge or overlay, got %q", *mode)
	}
	if err := o.spec.validate(); err != nil {
		return o, err
	}
	switch {
	case o.changes < 0:
		return o, fmt.Errorf("-changes must be >= 0, got %d", o.changes)
	case o.newLocalPods < 0:
		return o, fmt.Errorf("-new-local-pods must be >= 0, got %d", o.newLocalPods)
	case o.replacements < 0 || o.serviceChurn < 0 || o.scales < 0 || o.drains < 0 || o.drift < 0 || o.duringRepair < 0 || o.duringLookup < 0:
		return o, fmt.Errorf("-replacements, -service-churn, -scales, -drains, -drift and -changes-during-repair must be >= 0")
	case o.spec.Nodes < 2 && o.replacements+o.scales+o.drains > 0:
		return o, fmt.Errorf("-replacements, -scales and -drains move pods to other nodes: they need -nodes >= 2")
	case o.latency < 0:
		return o, fmt.Errorf("-hns-latency must be >= 0, got %s", o.latency)
	case o.quiet <= 0:
		return o, fmt.Errorf("-quiet must be > 0, got %s", o.quiet)
	case o.pause < 0:
		return o, fmt.Errorf("-pause must be >= 0, got %s", o.pause)
	case o.memRate < 0:
		return o, fmt.Errorf("-memprofile-rate must be >= 0, got %d", o.memRate)
	}
	switch o.cpuPhase {
	case "cold", "incr", "newpods", "mix", "repair", "restart", "all":
	default:
		return o, fmt.Errorf("-cpuprofile-phase must be cold, incr, newpods, mix, repair, restart or all, got %q", o.cpuPhase)
	}
	switch o.memPhase {
	case "setup", "cold", "newpods", "mix":
	default:
		return o, fmt.Errorf("-memprofile-phase must be setup, cold, newpods or mix, got %q", o.memPhase)
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(2)
	}
	if !measurable {
		fmt.Fprintln(os.Stderr, "scale: needs Linux (process rusage and thread CPU clocks)")
		os.Exit(2)
	}
	if o.memRate > 0 {
		runtime.MemProfileRate = o.memRate // before the cluster is built, so setup is sampled alike
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
	out, err := json.Marshal(rep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
	if len(rep.Problems) > 0 {
		os.Exit(1)
	}
}

// cpuProfiler starts and stops the CPU profile around the chosen phase.
type cpuProfiler struct {
	file  *os.File
	phase string
}

func (p *cpuProfiler) begin(phase string) error {
	if p.file == nil || (p.phase != phase && !(p.phase == "all" && phase == "cold")) {
		return nil
	}
	return pprof.StartCPUProfile(p.file)
}

func (p *cpuProfiler) end(phase string) {
	if p.file == nil || (p.phase != phase && !(p.phase == "all" && phase == "restart")) {
		return
	}
	pprof.StopCPUProfile()
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// gcCycles is how many garbage collections have completed so far.
func gcCycles() uint64 { return runtimeCounter("/gc/cycles/total:gc-cycles") }

// heapAllocated is how many bytes the process has allocated on its heap so far.
func heapAllocated() uint64 { return runtimeCounter("/gc/heap/allocs:bytes") }

// gcCPU is the runtime's estimate of the CPU its collector has used so far
// (marking, assists, pauses), whoever's garbage it collected.
func gcCPU() time.Duration {
	sample := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(sample)
	return time.Duration(sample[0].Value.Float64() * float64(time.Second))
}

func runtimeCounter(name string) uint64 {
	sample := []metrics.Sample{{Name: name}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}
