package cni_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/buildscript"
	"github.com/hnsproxy/hnsproxy/internal/hostlocalstore"
	"github.com/hnsproxy/hnsproxy/internal/proctest"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// binDir holds hnssim, hnscni and host-local, built once for all tests by
// hack/build.sh (or taken from HNSPROXY_TOOLS_DIR).
var binDir string

func TestMain(m *testing.M) {
	dir, err := buildscript.Tools("hnssim", "hnscni", "host-local")
	if err != nil {
		fmt.Fprintln(os.Stderr, "building binaries:", err)
		os.Exit(1)
	}
	binDir = dir
	os.Exit(m.Run())
}

// shortDir is a temp dir with a short path (unix socket paths are short).
func shortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// simNode is a running `hnssim serve`.
type simNode struct {
	name, socket string
	args         []string
	client       *remote.Client
	stopFn       func(t testing.TB)
}

func startNode(t testing.TB, name string, args ...string) *simNode {
	t.Helper()
	n := &simNode{name: name, socket: filepath.Join(shortDir(t), "hns.sock"), args: args}
	n.start(t)
	t.Cleanup(func() { n.stop(t) })
	return n
}

// start runs the server and waits until it answers.
func (n *simNode) start(t testing.TB) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(filepath.Join(binDir, "hnssim"), append([]string{"serve", "--socket", n.socket, "--node-name", n.name}, n.args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	// Tied to the test process: a test killed mid-history (a timeout, the
	// fuzzing engine stopping a worker) runs no cleanup.
	exited, err := proctest.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	n.client = remote.NewClient(n.socket)
	// Wait until it answers (or died): a readiness poll, not a timing assertion.
	for ready := false; !ready; {
		select {
		case err := <-exited:
			t.Fatalf("hnssim %s exited: %v\n%s", n.name, err, out.String())
		default:
		}
		_, err := n.client.Version(context.Background())
		ready = err == nil
		if !ready {
			time.Sleep(20 * time.Millisecond)
		}
	}
	n.stopFn = func(t testing.TB) {
		n.client.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			t.Errorf("hnssim %s did not stop cleanly on SIGTERM: %v\n%s", n.name, err, out.String())
		}
		if _, err := os.Stat(n.socket); !os.IsNotExist(err) {
			t.Errorf("hnssim %s left its socket behind: %v", n.name, err)
		}
	}
}

// stop sends SIGTERM and checks the server went away cleanly.
func (n *simNode) stop(t testing.TB) {
	if n.stopFn != nil {
		n.stopFn(t)
		n.stopFn = nil
	}
}

// hnssim runs a client subcommand against the node and returns its stdout.
func (n *simNode) hnssim(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(binDir, "hnssim"), append([]string{"--socket", n.socket}, args...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("hnssim %v: %v\n%s", args, err, stderr)
	}
	return string(out)
}

func (n *simNode) createNamespace(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(n.hnssim(t, "create-namespace"))
}

func (n *simNode) dump(t *testing.T) *hnslb.Snapshot {
	t.Helper()
	var s hnslb.Snapshot
	if err := json.Unmarshal([]byte(n.hnssim(t, "dump")), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// traceResult is the part of `hnssim trace` output the tests read.
type traceResult struct {
	Outcome   string `json:"outcome"`
	Delivered bool   `json:"delivered"`
	Summary   string `json:"summary"`
	Verdict   struct {
		BackendNode       string
		BackendEndpointID string
		Hops              []struct{ Node, Action, Detail string }
	} `json:"verdict"`
}

func (r traceResult) actions() string {
	var as []string
	for _, h := range r.Verdict.Hops {
		as = append(as, h.Node+":"+h.Action)
	}
	return strings.Join(as, " ")
}

func (n *simNode) trace(t *testing.T, src, dst string, peers ...*simNode) traceResult {
	t.Helper()
	args := []string{"trace", "--src", src, "--dst", dst}
	for _, p := range peers {
		args = append(args, "--peer", p.name+"="+p.socket)
	}
	var r traceResult
	if err := json.Unmarshal([]byte(n.hnssim(t, args...)), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// l2bridgeNode starts a node whose l2bridge network cbr0 has the pod subnet
// 10.244.<octet>.0/24 (node IP 192.168.<octet>.1), and returns it with an
// hnscni configuration for that network.
func l2bridgeNode(t *testing.T, octet int) (*simNode, netConf) {
	t.Helper()
	subnet := fmt.Sprintf("10.244.%d.0/24", octet)
	n := startNode(t, "n1", "--node-ip", fmt.Sprintf("192.168.%d.1", octet),
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", subnet)
	return n, netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: subnet, socket: n.socket, dataDir: t.TempDir()}
}

// netConf is one hnscni network configuration list.
type netConf struct {
	version, mode, network, subnet string
	socket, dataDir                string
	extra                          map[string]any // merged into the plugin config
}

func (c netConf) plugin() map[string]any {
	p := map[string]any{
		"type":         "hnscni",
		"mode":         c.mode,
		"network":      c.network,
		"clusterCIDR":  "10.244.0.0/16",
		"serviceCIDR":  "10.96.0.0/12",
		"loopbackDSR":  true,
		"hnsEndpoint":  "unix://" + c.socket,
		"capabilities": map[string]bool{"portMappings": true, "dns": true},
		"dns":          map[string]any{"nameservers": []string{"10.96.0.10"}, "search": []string{"svc.cluster.local"}},
		"ipam": map[string]any{
			"type":    "host-local",
			"ranges":  [][]map[string]string{{{"subnet": c.subnet}}},
			"dataDir": c.dataDir,
		},
	}
	for k, v := range c.extra {
		p[k] = v
	}
	return p
}

func (c netConf) listJSON(t testing.TB) []byte {
	b, err := json.Marshal(map[string]any{"cniVersion": c.version, "name": "pods", "plugins": []any{c.plugin()}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pluginJSON is the single plugin's config as a runtime hands it to the binary.
func (c netConf) pluginJSON(t *testing.T) []byte {
	p := c.plugin()
	p["name"] = "pods"
	if _, set := c.extra["cniVersion"]; !set {
		p["cniVersion"] = c.version
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runtime drives hnscni through libcni as a container runtime does.
type runtime struct {
	cni  *libcni.CNIConfig
	list *libcni.NetworkConfigList
}

func newRuntime(t testing.TB, c netConf) *runtime {
	t.Helper()
	list, err := libcni.NetworkConfFromBytes(c.listJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	// The exec is given: left nil, libcni sets it on first use, a data race
	// when one CNIConfig adds pods in parallel (TestConcurrentAddsShareOneNewNetwork).
	pluginExec := &invoke.DefaultExec{RawExec: &invoke.RawExec{Stderr: os.Stderr}, PluginDecoder: version.PluginDecoder{}}
	return &runtime{cni: libcni.NewCNIConfigWithCacheDir([]string{binDir}, t.TempDir(), pluginExec), list: list}
}

type pod struct {
	id, netns string
	caps      map[string]any
}

func (p pod) rt() *libcni.RuntimeConf {
	return &libcni.RuntimeConf{ContainerID: p.id, NetNS: p.netns, IfName: "eth0", CapabilityArgs: p.caps}
}

// endpointName is the pod's endpoint on a network (interface eth0).
func (p pod) endpointName(network string) string { return p.id + "_" + network }

func (r *runtime) add(t testing.TB, p pod) *current.Result {
	t.Helper()
	res, err := r.cni.AddNetworkList(context.Background(), r.list, p.rt())
	if err != nil {
		t.Fatalf("ADD %s: %v", p.id, err)
	}
	cur, err := current.NewResultFromResult(res)
	if err != nil {
		t.Fatalf("ADD %s result: %v", p.id, err)
	}
	return cur
}

func (r *runtime) del(t testing.TB, p pod) {
	t.Helper()
	if err := r.cni.DelNetworkList(context.Background(), r.list, p.rt()); err != nil {
		t.Fatalf("DEL %s: %v", p.id, err)
	}
}

func (r *runtime) check(p pod) error {
	return r.cni.CheckNetworkList(context.Background(), r.list, p.rt())
}

// cniCode is the CNI error code inside err, or -1.
func cniCode(err error) int {
	var te *types.Error
	if errors.As(err, &te) {
		return int(te.Code)
	}
	return -1
}

// allocated lists the addresses host-local holds in dataDir for network "pods".
func allocated(t *testing.T, dataDir string) []string {
	t.Helper()
	return allocatedOn(t, dataDir, "pods")
}

// allocatedOn lists the addresses host-local holds in dataDir for a
// network, in the order of their files' names.
func allocatedOn(t *testing.T, dataDir, network string) []string {
	t.Helper()
	reserved, err := hostlocalstore.Reservations(filepath.Join(dataDir, network))
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for a := range reserved {
		ips = append(ips, a.String())
	}
	slices.Sort(ips)
	return ips
}

func endpointByName(s *hnslb.Snapshot, name string) *hnslb.Endpoint {
	for i := range s.Endpoints {
		if s.Endpoints[i].Name == name {
			return &s.Endpoints[i]
		}
	}
	return nil
}

func namespaceByID(s *hnslb.Snapshot, id string) *hnslb.Namespace {
	for i := range s.Namespaces {
		if strings.EqualFold(s.Namespaces[i].ID, id) {
			return &s.Namespaces[i]
		}
	}
	return nil
}

// namespaceEndpoints lists the endpoint IDs a namespace holds.
func namespaceEndpoints(t *testing.T, ns *hnslb.Namespace) []string {
	t.Helper()
	var ids []string
	for _, r := range ns.Resources {
		if r.Type == hnslb.NamespaceResourceTypeEndpoint {
			var d hnslb.NamespaceResourceEndpoint
			if err := json.Unmarshal(r.Data, &d); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// policies decodes an endpoint's policies of one type.
func policies[T any](t *testing.T, e *hnslb.Endpoint, typ hnslb.EndpointPolicyType) []T {
	t.Helper()
	var out []T
	for _, p := range e.Policies {
		if p.Type == typ {
			var s T
			if err := json.Unmarshal(p.Settings, &s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
	}
	return out
}
