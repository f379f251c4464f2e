package app

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// `hnsproxy --cleanup`, run as a process against the hnssim service, deletes
// the load balancers and endpoints hnsproxy programmed (a load balancer, its
// remote endpoint and the source VIP endpoint) and its state file, leaves a
// foreign load balancer and the CNI's pod endpoint, and exits 0.
func TestCleanupCommand(t *testing.T) {
	ctx := context.Background()
	hns := sim.New(sim.Options{})
	endpoint := serveHNSSim(t, hns)
	network, pod, foreign := podAndForeignLB(ctx, t, hns)

	// What hnsproxy programmed, recorded in its state file.
	stateFile := filepath.Join(t.TempDir(), "state.json")
	rec := reconciler.New(hns, reconciler.Options{NetworkID: network.ID, StateFile: stateFile})
	remoteBackend := intent.Backend{IP: "10.244.2.6", ProviderAddress: "10.0.0.6"}
	rec.UpsertEndpoint(intent.EndpointOf(remoteBackend))
	rec.UpsertEndpoint(intent.RemoteEndpoint{IP: "10.244.1.2", Local: true}) // the source VIP's
	rec.Upsert(intent.LB{
		Key:          intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: 80},
		InternalPort: 8080, Owner: "shop/web:http",
		Backends: []intent.Backend{{IP: "10.244.1.5", Local: true}, remoteBackend},
	})
	if err := rec.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if res := rec.Sync(ctx); res.Failed+res.Pending != 0 || res.Created != 3 {
		t.Fatalf("programming: %+v, want 3 objects created", res)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "--cleanup", "--network-name=cbr0",
		"--hostname-override=win-1", "--hns-endpoint="+endpoint, "--state-file="+stateFile)
	cmd.Env = append(os.Environ(), runAsHNSProxy+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("hnsproxy --cleanup: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "deletedLoadBalancers=1 deletedEndpoints=2") {
		t.Errorf("the log does not report 1 load balancer and 2 endpoints deleted:\n%s", out.String())
	}

	snap := hns.Snapshot()
	if len(snap.LoadBalancers) != 1 || snap.LoadBalancers[0].ID != foreign.ID {
		t.Errorf("load balancers after cleanup %+v, want only the foreign %s", snap.LoadBalancers, foreign.ID)
	}
	if len(snap.Endpoints) != 1 || snap.Endpoints[0].ID != pod.ID {
		t.Errorf("endpoints after cleanup %+v, want only the pod's %s", snap.Endpoints, pod.ID)
	}
	if _, err := os.Stat(stateFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file after cleanup: %v, want it removed", err)
	}
}

// A --cleanup stopped before it finished (SIGTERM: a Job's deadline, the
// operator's Ctrl+C) has deleted nothing, or part of what hnsproxy owns:
// it exits non-zero, so a script that goes on only after a cleanup does not
// go on, and the state file still names what is left.
func TestStoppedCleanupExitsNonZero(t *testing.T) {
	ctx := context.Background()
	hns := sim.New(sim.Options{})
	endpoint := serveHNSSim(t, hns)
	network := wireWinOne(t, hns)
	stateFile := filepath.Join(t.TempDir(), "state.json")
	rec := reconciler.New(hns, reconciler.Options{NetworkID: network.ID, StateFile: stateFile})
	rec.Upsert(intent.LB{
		Key:          intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: 80},
		InternalPort: 8080, Owner: "shop/web:http",
		Backends: []intent.Backend{{IP: "10.244.1.5", Local: true}},
	})
	if err := rec.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if res := rec.Sync(ctx); res.Created != 1 {
		t.Fatalf("programming: %+v, want the load balancer created", res)
	}
	hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpListLoadBalancers}})
	t.Cleanup(func() { hns.SetFaults(sim.Faults{}) })

	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "--cleanup", "--network-name=cbr0",
		"--hostname-override=win-1", "--hns-endpoint="+endpoint, "--state-file="+stateFile, "--hns-list-timeout=1h")
	cmd.Env = append(os.Environ(), runAsHNSProxy+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := hns.WaitHeld(ctx, 1); err != nil { // the cleanup's listing
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("--cleanup stopped before it deleted anything: %v, want exit code 1\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "stopped before it finished") {
		t.Errorf("the log does not say the cleanup was stopped:\n%s", out.String())
	}
	hns.SetFaults(sim.Faults{})
	if lbs, _ := hns.ListLoadBalancers(ctx); len(lbs) != 1 {
		t.Errorf("load balancers after the stopped cleanup: %+v, want hnsproxy's still there", lbs)
	}
	if _, err := os.Stat(stateFile); err != nil {
		t.Errorf("state file after the stopped cleanup: %v, want it kept for the next run", err)
	}
}

// podAndForeignLB makes, in hns, the network cbr0, a pod's endpoint on it
// (10.244.1.5) and a load balancer to that pod that another program made
// (10.96.9.9:9, in no state file).
func podAndForeignLB(ctx context.Context, t *testing.T, hns *sim.HNS) (*hnslb.Network, *hnslb.Endpoint, *hnslb.LoadBalancer) {
	t.Helper()
	network, err := hns.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := hns.CreateEndpoint(ctx, network.ID, &hnslb.Endpoint{Name: "pod-a",
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5", PrefixLength: 24}}, MacAddress: "00-15-5D-01-01-05"})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := hns.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.9.9"},
		HostComputeEndpoints: []string{pod.ID},
		PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 9, ExternalPort: 9}},
		SchemaVersion:        hnslb.V2})
	if err != nil {
		t.Fatal(err)
	}
	return network, pod, foreign
}

// --cleanup's HNS calls have the deadlines the daemon's have: its listing
// ends at --hns-list-timeout, as operators.md says, not at the built-in
// two minutes whatever the flag, nor at --hns-call-timeout. A node whose listings need a longer
// deadline than the default could otherwise never be cleaned up, and one
// given a shorter one waited minutes on a hung HNS.
func TestCleanupListingEndsAtTheListTimeoutFlag(t *testing.T) {
	hns := sim.New(sim.Options{})
	hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpListLoadBalancers}})
	t.Cleanup(func() { hns.SetFaults(sim.Faults{}) })
	cfg := parseConfig(t, "--cleanup", "--network-name=cbr0", "--hostname-override=win-1", "--hns-endpoint=sim",
		"--state-file="+filepath.Join(t.TempDir(), "state.json"), "--hns-list-timeout=200ms", "--hns-call-timeout=1h")

	done := make(chan error, 1)
	go func() { done <- runCleanup(context.Background(), cfg, hns) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "list load balancers") {
			t.Errorf("--cleanup under a hung listing: %v, want the listing's timeout", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("--cleanup with --hns-list-timeout=200ms still waits on a hung listing after 20s")
	}
}
