// Command scale drives the real proxier (informer handlers, change tracker,
// sync loop, desired-state mapping and reconciler) against the in-process
// HNS simulator at cluster scale, and reports HNS calls, CPU and memory for
// a cold start, single-endpoint changes and a restart. Kubernetes objects
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
	"runtime/pprof"
	"time"

	"github.com/hnsproxy/hnsproxy/sim"
)

type options struct {
	spec         clusterSpec
	changes      int
	newLocalPods int
	latency      time.Duration
	profile      string
	cpuProfile   string
	cpuPhase     string
	memProfile   string
	memPhase     string
	quiet        time.Duration
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.IntVar(&o.spec.Services, "services", 10000, "Services (one TCP port, ClusterIP each)")
	fs.IntVar(&o.spec.EndpointsPerService, "endpoints-per-service", 10, "ready endpoints per Service, distinct pods drawn at random from the pod pool")
	fs.IntVar(&o.spec.Nodes, "nodes", 100, "nodes the pods are spread over; the harness plays the first")
	fs.IntVar(&o.spec.PodsPerNode, "pods-per-node", 110, "pods per node (kubelet's default max-pods); the pool Services draw endpoints from")
	seed := fs.Uint64("seed", 1, "seed of the cluster layout and the changes")
	fs.IntVar(&o.changes, "changes", 1000, "random single-endpoint changes after the cold start")
	fs.IntVar(&o.newLocalPods, "new-local-pods", 20, "then replace this many endpoints by brand-new pods on this node (at most 254-pods-per-node)")
	fs.DurationVar(&o.latency, "hns-latency", 0, "simulated latency of one hcn RPC, waited once per RPC a call costs (a sleep: adds wall time, not CPU); the target model is 0.2ms")
	fs.StringVar(&o.profile, "profile", sim.ProfileWS2025, "simulated HNS profile (ws2019, ws2022, ws2025-15.4, ws2025)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a pprof CPU profile of -cpuprofile-phase to this file")
	fs.StringVar(&o.cpuPhase, "cpuprofile-phase", "all", "phase the CPU profile covers: cold, incr, newpods, restart or all")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a pprof heap profile taken after -memprofile-phase to this file")
	fs.StringVar(&o.memPhase, "memprofile-phase", "cold", "phase after which the heap profile is taken: cold or newpods")
	fs.DurationVar(&o.quiet, "quiet", 300*time.Millisecond, "no sync for this long after convergence ends a phase (waited, not measured)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.spec.Seed = *seed
	if err := o.spec.validate(); err != nil {
		return o, err
	}
	switch {
	case o.changes < 0:
		return o, fmt.Errorf("-changes must be >= 0, got %d", o.changes)
	case o.newLocalPods < 0:
		return o, fmt.Errorf("-new-local-pods must be >= 0, got %d", o.newLocalPods)
	case o.latency < 0:
		return o, fmt.Errorf("-hns-latency must be >= 0, got %s", o.latency)
	case o.quiet <= 0:
		return o, fmt.Errorf("-quiet must be > 0, got %s", o.quiet)
	}
	switch o.cpuPhase {
	case "cold", "incr", "newpods", "restart", "all":
	default:
		return o, fmt.Errorf("-cpuprofile-phase must be cold, incr, newpods, restart or all, got %q", o.cpuPhase)
	}
	if o.memPhase != "cold" && o.memPhase != "newpods" {
		return o, fmt.Errorf("-memprofile-phase must be cold or newpods, got %q", o.memPhase)
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

func heapLive() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
