package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestServeErrorVariantFlags: --missing-backend-code, --missing-lb-code,
// --address-taken-code, --missing-network-code and
// --missing-network-listing-code reach clients over the
// socket with their codes, combined with a profile; codes outside the
// modelled ones are refused before serving. --write-log, served alongside,
// records what those calls made and answered.
func TestServeErrorVariantFlags(t *testing.T) {
	dir, err := os.MkdirTemp("", "hnssim")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "hns.sock")
	writeLog := filepath.Join(dir, "writes.log")

	for _, bad := range [][]string{{"--missing-backend-code=0x57"}, {"--missing-lb-code=0x803b0007"}, {"--missing-lb-code=lots"}, {"--address-taken-code=0x803b0013"}, {"--missing-network-code=0x57"}, {"--missing-network-listing-code=0x57"},
		{"--bridge=127.0.0.1:0", "--bridge-down-codes=0x490"}, {"--bridge=127.0.0.1:0", "--bridge-down-codes=down"}} {
		cmd := newRootCommand()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(append([]string{"serve", "--socket", socket}, bad...))
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "code") {
			t.Errorf("%v: %v, want a refusal naming the code", bad, err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cmd := newRootCommand()
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetArgs([]string{"serve", "--socket", socket, "--profile", "ws2019", "--network-name", "cbr0", "--network-type", "l2bridge",
		"--subnet", "10.244.1.0/24", "--missing-backend-code", "0x803b0007", "--missing-lb-code", "0x803b0002", "--address-taken-code", "0x1392", "--missing-network-code", "0x490",
		"--missing-network-listing-code", "0x803b0001", "--write-log", writeLog})
	served := make(chan error, 1)
	go func() { served <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})

	c := remote.NewClient(socket)
	t.Cleanup(c.Close)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err = c.GetNetworkByName(ctx, "cbr0"); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("hnssim did not come up: %v", err)
	}
	if v, err := c.Version(ctx); err != nil || v.Major != 9 {
		t.Errorf("version %v %v: want the ws2019 profile", v, err)
	}
	const unknown = "6f1c2a3b-0000-4000-8000-000000000001"
	_, err = c.GetLoadBalancerByID(ctx, unknown)
	if code, _ := hnslb.CodeOf(err); code != hnslb.CodeEndpointNotFound {
		t.Errorf("get of a missing load balancer: %v, want 0x803b0002", err)
	}
	_, err = c.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{HostComputeEndpoints: []string{unknown}, FrontendVIPs: []string{"10.96.0.10"},
		PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 80, ExternalPort: 80}}, SchemaVersion: hnslb.V2})
	if code, _ := hnslb.CodeOf(err); code != hnslb.CodePortNotFound || !hnslb.IsMissingReference(err) || hnslb.IsNotFound(err) {
		t.Errorf("create with a missing backend: %v, want 0x803b0007", err)
	}
	nw, err := c.GetNetworkByName(ctx, "cbr0")
	if err != nil {
		t.Fatal(err)
	}
	local := &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5"}}}
	made, err := c.CreateEndpoint(ctx, nw.ID, local)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateEndpoint(ctx, nw.ID, local)
	if code, _ := hnslb.CodeOf(err); code != hnslb.CodeObjectAlreadyExists || !hnslb.IsAlreadyExists(err) {
		t.Errorf("create on a held address: %v, want 0x1392", err)
	}
	_, err = c.CreateEndpoint(ctx, unknown, local)
	if code, _ := hnslb.CodeOf(err); code != hnslb.CodeNotFound || !hnslb.IsNotFound(err) {
		t.Errorf("create on a missing network: %v, want 0x490", err)
	}
	_, err = c.ListEndpointsOfNetwork(ctx, unknown)
	if code, _ := hnslb.CodeOf(err); code != hnslb.CodeNetworkNotFound {
		t.Errorf("listing of a missing network: %v, want 0x803b0001", err)
	}

	// --write-log: what each write made and what each answered.
	logged, err := os.ReadFile(writeLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stored endpoint " + made.ID + " ip=10.244.1.5", "CreateEndpoint answered ok", "CreateEndpoint answered ObjectAlreadyExists",
		"CreateLoadBalancer answered PortNotFound"} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("--write-log lacks %q:\n%s", want, logged)
		}
	}
	if info, err := os.Stat(writeLog); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("--write-log's file: %v %v, want mode 0600", info, err)
	}
}
