//go:build linux

// Command soak is `make soak`: a fault soak of the real hnsproxy binaries.
// It starts a real etcd and kube-apiserver and two simulated Windows nodes
// (hnssim, hnscni-wired pods, hnsproxy) with the e2e rig, plants HNS objects
// another agent owns, then for a bounded time churns Services and
// EndpointSlices through client-go while HNS fails 10% of calls (and
// restarts), the apiserver restarts, hnsproxy is killed with SIGKILL and
// one node's HNS network is deleted and made again.
// After the faults it waits for convergence and compares each node's HNS
// with the desired state computed independently from the API objects.
//
// Its last stdout line is one JSON object (see result); it exits non-zero
// when anything was lost, leaked, wrong or crashed, or the faults did not
// all happen.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// result is the soak's report, printed as one JSON line.
type result struct {
	Changes     int64 `json:"changes"`
	HNSFaults   int   `json:"hns_faults"`
	HNSRestarts int64 `json:"hns_restarts"`
	// HNSRestartsDroppingObjects are those that dropped load balancers or
	// remote endpoints (restartLoss).
	HNSRestartsDroppingObjects int64 `json:"hns_restarts_dropping_objects"`
	APIServerRestarts          int64 `json:"apiserver_restarts"`
	ProxyKills                 int64 `json:"proxy_kills"`
	LeakedObjects              int   `json:"leaked_objects"`
	MissingObjects             int   `json:"missing_objects"`
	WrongObjects               int   `json:"wrong_objects"`
	ForeignObjectsDeleted      int   `json:"foreign_objects_deleted"`
	// HNSDeletesKept are deletes HNS reported done and kept the object of
	// (hnsKeptOnDelete); each must be deleted again for the soak to converge.
	HNSDeletesKept int `json:"hns_deletes_kept"`
	// HNSAddressesRefused are endpoint creates HNS refused because another
	// endpoint held the address, answered with the node's code.
	HNSAddressesRefused int `json:"hns_addresses_refused"`
	// HNSPartialCreates are failed load balancer creates that left one
	// without port mappings (hnsPartialCreates); PartialHoldsFrontend is,
	// per node, whether those held their frontend (partialHolds).
	HNSPartialCreates    int    `json:"hns_partial_creates"`
	PartialHoldsFrontend []bool `json:"partial_holds_frontend"`
	// GetsLeaveOut is, per node, whether its gets left objects out as its
	// listings did (getsLeaveOut).
	GetsLeaveOut []bool `json:"gets_leave_out"`
	// ErrorVariants are each node's hnssim flags for the codes real HNS's
	// are not known (errorVariants).
	ErrorVariants [][]string `json:"error_variants"`
	// Echoes are each node's hnssim flags for how its HNS answers (echoArgs).
	Echoes  [][]string `json:"echoes"`
	Crashes int64      `json:"crashes"`
	// The red team's paths (docs/reliability.md, "Red-team findings").
	TenantCollisions  int64 `json:"tenant_collisions"`
	StateDirFaults    int64 `json:"state_dir_faults"`
	NodeAddressLosses int64 `json:"node_address_losses"`
	MassDeletions     int64 `json:"mass_deletions"`
	IdleConnFloods    int64 `json:"idle_conn_floods"`
	HealthzFailures   int64 `json:"healthz_failures_after_flood"`
	HNSHangs          int64 `json:"hns_hangs"`
	LivezFailures     int64 `json:"livez_failures_during_hang"`
	// HNSCallTimeouts is what the proxies' hnsproxy_hns_call_timeouts_total
	// said at the end of each hang (a proxy restarted meanwhile counts anew).
	HNSCallTimeouts int64 `json:"hns_call_timeouts"`
	// NetworkReplacements are the nodes' HNS networks deleted and made
	// again (replaceNetwork); NetworkExits the hnsproxy exits that said so.
	NetworkReplacements int64 `json:"network_replacements"`
	NetworkExits        int64 `json:"network_exits"`
	// StateDirMounted is false when the soak could not mount the
	// size-limited state directories (then state_dir_faults is 0).
	StateDirMounted bool    `json:"state_dir_mounted"`
	ConvergeSeconds float64 `json:"converge_seconds"`
	MaxRSSMiB       float64 `json:"max_rss_mib"`
	// Context for reading the figures.
	Seed uint64 `json:"seed"`
	// Profiles are the nodes' HNS builds (-profiles), in node order.
	Profiles       string  `json:"profiles"`
	FaultSeconds   float64 `json:"fault_seconds"`
	RefusedChanges int64   `json:"refused_changes"`
	KillsMidSync   int64   `json:"kills_mid_sync"`
	Converged      bool    `json:"converged"`
}

// failed says whether the soak found a problem or did not run its faults;
// in CI (ci) the state directory faults must run too.
func (r result) failed(nodes int, ci bool) []string {
	var why []string
	for name, v := range map[string]int64{
		"leaked_objects": int64(r.LeakedObjects), "missing_objects": int64(r.MissingObjects),
		"wrong_objects": int64(r.WrongObjects), "foreign_objects_deleted": int64(r.ForeignObjectsDeleted),
		"crashes": r.Crashes, "mass_deletions": r.MassDeletions, "healthz_failures_after_flood": r.HealthzFailures,
		"livez_failures_during_hang": r.LivezFailures,
	} {
		if v != 0 {
			why = append(why, fmt.Sprintf("%s = %d", name, v))
		}
	}
	if !r.Converged {
		why = append(why, "did not converge")
	}
	if ci && !r.StateDirMounted {
		why = append(why, "state_dir_mounted = false, and CI is set: CI must run the full-disk faults (run as root or with CAP_SYS_ADMIN)")
	}
	n := int64(nodes)
	stateDirFaults := int64(0)
	if r.StateDirMounted {
		stateDirFaults = stateDirFaultsEach * n
	}
	for _, f := range []struct {
		name      string
		got, want int64
	}{
		{"apiserver_restarts", r.APIServerRestarts, apiRestarts},
		{"hns_restarts", r.HNSRestarts, hnsRestartsEach * n},
		{"hns_restarts_dropping_objects", r.HNSRestartsDroppingObjects, n},
		{"proxy_kills", r.ProxyKills, killsEach * n},
		{"kills_mid_sync", r.KillsMidSync, n},
		{"node_address_losses", r.NodeAddressLosses, n},
		{"idle_conn_floods", r.IdleConnFloods, n},
		{"tenant_collisions", r.TenantCollisions, 1},
		{"hns_hangs", r.HNSHangs, n},
		{"state_dir_faults", r.StateDirFaults, stateDirFaults},
		{"hns_deletes_kept", int64(r.HNSDeletesKept), 1},
		{"hns_partial_creates", int64(r.HNSPartialCreates), 1},
		{"network_replacements", r.NetworkReplacements, 1},
		{"network_exits", r.NetworkExits, 1},
	} {
		if f.got < f.want {
			why = append(why, fmt.Sprintf("not every planned fault happened: %s = %d, want at least %d", f.name, f.got, f.want))
		}
	}
	return why
}

func main() {
	duration := flag.Duration("duration", envDuration("SOAK_DURATION", 3*time.Minute), "how long faults and changes go on (env SOAK_DURATION)")
	converge := flag.Duration("converge-timeout", envDuration("SOAK_CONVERGE_TIMEOUT", 5*time.Minute), "how long to wait for convergence after the faults (env SOAK_CONVERGE_TIMEOUT)")
	seed := flag.Uint64("seed", envUint("SOAK_SEED", 1), "seed of every random choice (env SOAK_SEED)")
	network := flag.String("network", envString("SOAK_NETWORK", framework.NetworkL2Bridge), "the nodes' network type, l2bridge or overlay (env SOAK_NETWORK)")
	profiles := flag.String("profiles", envString("SOAK_PROFILES", profileList()), "the nodes' HNS builds, one hnssim profile per node, comma-separated (env SOAK_PROFILES)")
	flag.Parse()
	if err := errors.Join(useNetwork(*network), useProfiles(*profiles)); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, why, err := run(ctx, *duration, *converge, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	line, _ := json.Marshal(res)
	fmt.Println(string(line))
	if len(why) > 0 {
		fmt.Fprintln(os.Stderr, "soak: FAILED:", why)
		os.Exit(1)
	}
}

func run(ctx context.Context, window, convergeTimeout time.Duration, seed uint64) (res result, why []string, err error) {
	res.Seed, res.FaultSeconds, res.Profiles = seed, window.Seconds(), profileList()
	step("Building (or reusing) kube-apiserver, etcd and the node binaries")
	if _, err := framework.Binaries(); err != nil {
		return res, nil, err
	}
	if _, err := framework.Tools(); err != nil {
		return res, nil, err
	}
	dir, err := os.MkdirTemp("", "soak")
	if err != nil {
		return res, nil, err
	}
	defer func() {
		if err == nil && len(why) == 0 && os.Getenv("SOAK_KEEP_DIR") == "" {
			err = os.RemoveAll(dir)
		} else {
			fmt.Fprintln(os.Stderr, "soak: logs kept in", dir)
		}
	}()
	step("Starting etcd and kube-apiserver on 127.0.0.1 (files in " + dir + ")")
	cp, err := framework.Start(ctx, filepath.Join(dir, "cp"), framework.Options{})
	if err != nil {
		return res, nil, err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()
	step("Starting two simulated Windows nodes (hnssim + hnsproxy each; " + profileList() + ") on " + clusterSpec.NetworkType + " and wiring pods")
	dirs := &stateDirs{}
	defer func() {
		if err != nil || len(why) > 0 {
			dirs.keep() // the state files, for reading what hnsproxy recorded
		}
		err = errors.Join(err, dirs.unmount())
	}()
	r, err := startRig(ctx, cp, filepath.Join(dir, "n"), seed, dirs.prepare)
	if r != nil && r.cluster != nil {
		defer func() { err = errors.Join(err, r.cluster.Stop()) }()
	}
	if err != nil {
		return res, nil, err
	}
	client, err := driverClient(cp)
	if err != nil {
		return res, nil, err
	}

	step(fmt.Sprintf("Soaking for %v: changes, HNS faults and restarts, apiserver restarts, hnsproxy kills, a network made again", window))
	drv := newDriver(client, soakNamespace, r.pods, r.bigPool, seed)
	res.StateDirMounted = dirs.refused == nil && len(dirs.mounted) == len(r.cluster.Nodes)
	ch := &chaos{cluster: r.cluster, settings: r.settings, foreign: r.foreign, drv: drv, seed: seed, errs: make(chan error, 64), stateDirsMounted: res.StateDirMounted, hangs: map[string][]string{},
		networkExit: map[string]bool{}, killing: map[string]bool{}}
	proxiesCtx, stopProxies := context.WithCancel(ctx)
	proxiesDone := make(chan struct{})
	go func() { defer close(proxiesDone); ch.keepProxies(proxiesCtx, window) }()
	driveCtx, stopDriving := context.WithTimeout(ctx, window)
	driveDone := make(chan struct{})
	go func() { defer close(driveDone); drv.run(driveCtx) }()
	ch.faults(ctx, window)
	<-driveDone
	stopDriving()

	step(fmt.Sprintf("Faults off after %d changes; waiting (up to %v) for every node to converge", drv.changes.Load(), convergeTimeout))
	settled := time.Now()
	last, converged := r.converge(ctx, client, convergeTimeout)
	res.ConvergeSeconds = time.Since(settled).Seconds()
	stopProxies()
	<-proxiesDone

	res.Changes, res.RefusedChanges = drv.changes.Load(), drv.failures.Load()
	res.HNSRestarts, res.APIServerRestarts, res.ProxyKills = ch.hnsRestarts.Load(), ch.apiRestarts.Load(), ch.kills.Load()
	res.HNSRestartsDroppingObjects = ch.lossyRestarts.Load()
	res.KillsMidSync = ch.midSync.Load()
	res.Crashes = ch.crashes.Load() + int64(r.panics())
	res.MaxRSSMiB = float64(ch.maxRSSKiB.Load()) / 1024
	res.TenantCollisions, res.StateDirFaults = drv.collisions.Load(), ch.stateDirFaults.Load()
	res.NodeAddressLosses, res.MassDeletions = ch.addressLosses.Load(), ch.massDeletions.Load()
	res.IdleConnFloods, res.HealthzFailures = ch.floods.Load(), ch.healthFailures.Load()
	res.HNSHangs, res.LivezFailures, res.HNSCallTimeouts = ch.hnsHangs.Load(), ch.livezFailures.Load(), ch.callTimeouts.Load()
	res.NetworkReplacements, res.NetworkExits = ch.networkReplacements.Load(), ch.networkExits.Load()
	res.Converged = converged
	for _, d := range last {
		res.LeakedObjects += len(d.Leaked)
		res.MissingObjects += len(d.Missing)
		res.WrongObjects += len(d.Wrong)
		res.ForeignObjectsDeleted += len(d.ForeignDeleted)
	}
	counts, err := hnsFaults(ctx, r.cluster)
	if err != nil {
		return res, nil, err
	}
	res.HNSFaults, res.HNSDeletesKept, res.HNSAddressesRefused = counts.injected, counts.kept, counts.addressesRefused
	res.HNSPartialCreates = counts.partial
	for i := range r.cluster.Nodes {
		res.ErrorVariants = append(res.ErrorVariants, variantArgs(errorVariants(seed, i)))
		res.PartialHoldsFrontend = append(res.PartialHoldsFrontend, partialHolds(seed, i))
		res.GetsLeaveOut = append(res.GetsLeaveOut, getsLeaveOut(seed, i))
		res.Echoes = append(res.Echoes, echoArgs(seed, i))
	}
	return res, res.failed(len(r.cluster.Nodes), framework.InCI()), nil
}

// driverClient is an admin client paced for thousands of changes.
func driverClient(cp *framework.ControlPlane) (kubernetes.Interface, error) {
	cfg, err := cp.AdminConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.Timeout = 15 * time.Second         // an apiserver restart must not hang the driver
	cfg.WarningHandler = rest.NoWarnings{} // externalIPs are deprecated, and used on purpose
	return kubernetes.NewForConfig(cfg)
}

func step(s string) { fmt.Fprintf(os.Stderr, "==> %s (%s)\n", s, stamp()) }

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "soak: %s=%q: %v\n", name, v, err)
			os.Exit(2)
		}
		return d
	}
	return def
}

func envUint(name string, def uint64) uint64 {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "soak: %s=%q: %v\n", name, v, err)
			os.Exit(2)
		}
		return n
	}
	return def
}
