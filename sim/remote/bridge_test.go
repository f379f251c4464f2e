package remote_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// bridgeClient speaks the bridge protocol as hack/wine/hnsbridge.h does:
// one connection per call, three netstrings each way.
type bridgeClient struct {
	t    *testing.T
	addr string
}

type bridgeReply struct {
	hr          uint32
	out, errDoc string
}

func (c bridgeClient) call(fn, target, doc string) bridgeReply {
	c.t.Helper()
	conn, err := net.Dial("tcp", c.addr)
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close()
	for _, f := range []string{fn, target, doc} {
		fmt.Fprintf(conn, "%d:%s,", len(f), f)
	}
	r := bufio.NewReader(conn)
	var fields []string
	for range 3 {
		head, err := r.ReadString(':')
		if err != nil {
			c.t.Fatalf("%s: reply: %v", fn, err)
		}
		n, _ := strconv.Atoi(strings.TrimSuffix(head, ":"))
		body := make([]byte, n+1)
		if _, err := r.Read(body); err != nil && n > 0 {
			c.t.Fatalf("%s: reply: %v", fn, err)
		}
		fields = append(fields, string(body[:n]))
	}
	hr, err := strconv.ParseUint(fields[0], 16, 32)
	if err != nil {
		c.t.Fatalf("%s: HRESULT %q", fn, fields[0])
	}
	return bridgeReply{uint32(hr), fields[1], fields[2]}
}

// ok calls fn and fails the test unless it succeeded with no error document.
func (c bridgeClient) ok(fn, target, doc string) string {
	c.t.Helper()
	r := c.call(fn, target, doc)
	if r.hr != 0 || r.errDoc != "" {
		c.t.Fatalf("%s(%s): HRESULT %08x, result %s", fn, target, r.hr, r.errDoc)
	}
	return r.out
}

func startBridge(t *testing.T) (*sim.HNS, *remote.Bridge, bridgeClient) {
	t.Helper()
	p, err := sim.ProfileByName(sim.ProfileWS2025) // modifies load balancers
	if err != nil {
		t.Fatal(err)
	}
	h := sim.New(sim.Options{Profile: p, Seed: 1})
	b := remote.NewBridge(h, h.Snapshot)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return h, b, bridgeClient{t: t, addr: l.Addr().String()}
}

// filterQuery is the query hcn's Get*ByID/ByName sends.
func filterQuery(key, value string) string {
	f, _ := json.Marshal(map[string]string{key: value})
	q, _ := json.Marshal(map[string]any{"SchemaVersion": map[string]int{"Major": 2}, "Flags": 0, "Filter": string(f)})
	return string(q)
}

// The call sequences hcn makes (hcsshim hcn/*.go) arrive as one logical
// call each on the simulator, and hcn gets back the documents it parses.
func TestBridgeServesHcnSequencesAsLogicalCalls(t *testing.T) {
	h, b, c := startBridge(t)
	zero := "00000000-0000-0000-0000-000000000000"

	var version struct {
		Success bool
		Output  hnslb.Version
	}
	if err := json.Unmarshal([]byte(c.ok("HNSCall", "GET /globals/version", "")), &version); err != nil || !version.Success || version.Output != h.Profile().Version {
		t.Fatalf("HNSCall version: %+v, %v", version, err)
	}

	// hcn's Create: create, query, close.
	netDoc := `{"Name":"cbr0","Type":"L2Bridge","Ipams":[{"Type":"Static","Subnets":[{"IpAddressPrefix":"10.244.1.0/24"}]}],"SchemaVersion":{"Major":2,"Minor":0}}`
	nh := c.ok("HcnCreateNetwork", zero, netDoc)
	var nw hnslb.Network
	if err := json.Unmarshal([]byte(c.ok("HcnQueryNetworkProperties", nh, "{}")), &nw); err != nil || nw.Name != "cbr0" || nw.ID == "" {
		t.Fatalf("queried network: %+v, %v", nw, err)
	}
	c.ok("HcnCloseNetwork", nh, "")

	// An endpoint is created on an open network (open takes an upper-case GUID).
	nh = c.ok("HcnOpenNetwork", strings.ToUpper(nw.ID), "")
	eh := c.ok("HcnCreateEndpoint", nh, `{"IpConfigurations":[{"IpAddress":"10.244.1.10"}],"SchemaVersion":{"Major":2,"Minor":0}}`)
	var ep hnslb.Endpoint
	if err := json.Unmarshal([]byte(c.ok("HcnQueryEndpointProperties", eh, "{}")), &ep); err != nil || ep.HostComputeNetwork != nw.ID {
		t.Fatalf("queried endpoint: %+v, %v", ep, err)
	}
	c.ok("HcnCloseEndpoint", eh, "")
	c.ok("HcnCloseNetwork", nh, "")

	// Get by name: an enumerate with a filter, then open, query, close per ID.
	var ids []string
	if err := json.Unmarshal([]byte(c.ok("HcnEnumerateNetworks", "", filterQuery("Name", "cbr0"))), &ids); err != nil || len(ids) != 1 || ids[0] != nw.ID {
		t.Fatalf("enumerate by name: %v, %v", ids, err)
	}
	oh := c.ok("HcnOpenNetwork", ids[0], "")
	if got := c.ok("HcnQueryNetworkProperties", oh, "{}"); !strings.Contains(got, `"cbr0"`) {
		t.Errorf("queried network after enumerate: %s", got)
	}
	c.ok("HcnCloseNetwork", oh, "")
	if got := c.ok("HcnEnumerateEndpoints", "", filterQuery("VirtualNetwork", nw.ID)); !strings.Contains(got, ep.ID) {
		t.Errorf("endpoints of network: %s, want %s", got, ep.ID)
	}
	// A lookup that finds nothing is an empty list (hcn's NotFoundError).
	if got := c.ok("HcnEnumerateLoadBalancers", "", filterQuery("ID", zero)); got != "[]" {
		t.Errorf("enumerate a missing load balancer: %s, want []", got)
	}

	// A load balancer is modified on an open handle.
	lh := c.ok("HcnCreateLoadBalancer", zero, fmt.Sprintf(`{"HostComputeEndpoints":[%q],"FrontendVIPs":["10.96.0.10"],"PortMappings":[{"Protocol":6,"InternalPort":80,"ExternalPort":80}],"SchemaVersion":{"Major":2,"Minor":0}}`, ep.ID))
	var lb hnslb.LoadBalancer
	if err := json.Unmarshal([]byte(c.ok("HcnQueryLoadBalancerProperties", lh, "{}")), &lb); err != nil || lb.ID == "" {
		t.Fatalf("queried load balancer: %+v, %v", lb, err)
	}
	c.ok("HcnCloseLoadBalancer", lh, "")
	mh := c.ok("HcnOpenLoadBalancer", lb.ID, "")
	c.ok("HcnModifyLoadBalancer", mh, fmt.Sprintf(`{"HostComputeEndpoints":[%q],"FrontendVIPs":["10.96.0.10"],"PortMappings":[{"Protocol":6,"InternalPort":8080,"ExternalPort":80}],"SchemaVersion":{"Major":2,"Minor":0}}`, ep.ID))
	if got := c.ok("HcnQueryLoadBalancerProperties", mh, "{}"); !strings.Contains(got, `"InternalPort":8080`) {
		t.Errorf("queried after modify: %s", got)
	}
	c.ok("HcnCloseLoadBalancer", mh, "")

	// A namespace attach is a namespace modify; the query reads it back.
	sh := c.ok("HcnCreateNamespace", zero, `{"Type":"Host","SchemaVersion":{"Major":2,"Minor":0}}`)
	var ns hnslb.Namespace
	if err := json.Unmarshal([]byte(c.ok("HcnQueryNamespaceProperties", sh, "{}")), &ns); err != nil {
		t.Fatal(err)
	}
	c.ok("HcnCloseNamespace", sh, "")
	sh = c.ok("HcnOpenNamespace", ns.ID, "")
	c.ok("HcnModifyNamespace", sh, fmt.Sprintf(`{"ResourceType":"Endpoint","RequestType":"Add","Settings":{"EndpointId":%q}}`, ep.ID))
	if got := c.ok("HcnQueryNamespaceProperties", sh, "{}"); !strings.Contains(got, ep.ID) {
		t.Errorf("namespace after attach: %s", got)
	}
	c.ok("HcnCloseNamespace", sh, "")
	c.ok("HcnDeleteLoadBalancer", lb.ID, "")

	counters := h.Counters()
	for op, want := range map[sim.Op]int{
		sim.OpCreateNetwork: 1, sim.OpCreateEndpoint: 1, sim.OpGetNetwork: 1, sim.OpListEndpoints: 1,
		sim.OpGetLoadBalancer: 1, sim.OpCreateLoadBalancer: 1, sim.OpUpdateLoadBalancer: 1,
		sim.OpDeleteLoadBalancer: 1, sim.OpCreateNamespace: 1, sim.OpAddNamespaceEndpoint: 1, sim.OpVersion: 1,
	} {
		if got := counters.Count(op); got != want {
			t.Errorf("simulator counted %d %s, want %d", got, op, want)
		}
	}
	if got := counters.Total(); got != 11 {
		t.Errorf("simulator counted %d calls, want 11 (opens, queries and closes are not calls of their own): %v", got, counters.Calls)
	}
	if got := b.Calls()["HcnQueryLoadBalancerProperties"]; got != 2 {
		t.Errorf("bridge counted %d load balancer queries, want 2", got)
	}
}

// Errors come back as HNS returns them: the HRESULT and HNS's error
// document; HNS down is an RPC failure with no document, never "not found".
func TestBridgeErrorShapes(t *testing.T) {
	h, _, c := startBridge(t)
	missing := "5a1c0b1e-0000-4000-8000-000000000001"

	r := c.call("HcnDeleteLoadBalancer", missing, "")
	var doc struct {
		Success   bool
		Error     string
		ErrorCode uint32
	}
	if err := json.Unmarshal([]byte(r.errDoc), &doc); err != nil {
		t.Fatalf("error document %q: %v", r.errDoc, err)
	}
	if r.hr != 0x80070490 || doc.Success || doc.ErrorCode != r.hr || !strings.Contains(doc.Error, "Element not found") {
		t.Errorf("delete of a missing load balancer: HRESULT %08x, document %+v; want 80070490 (ERROR_NOT_FOUND) and a matching document", r.hr, doc)
	}

	if r := c.call("HcnModifyEndpoint", c.ok("HcnOpenEndpoint", missing, ""), "{}"); r.hr != uint32(hnslb.CodeNotImplemented) {
		t.Errorf("endpoint modify: HRESULT %08x, want E_NOTIMPL", r.hr)
	}
	if r := c.call("HcnQueryLoadBalancerProperties", "999999", "{}"); r.hr != 0x80070006 {
		t.Errorf("query of a handle never given out: HRESULT %08x, want E_HANDLE", r.hr)
	}

	h.Restart(time.Minute)
	for _, call := range [][3]string{
		{"HcnEnumerateLoadBalancers", "", "{}"},
		{"HNSCall", "GET /globals/version", ""},
	} {
		if r := c.call(call[0], call[1], call[2]); r.hr != 0x800706ba || r.errDoc != "" || r.out != "" {
			t.Errorf("%s while HNS restarts: HRESULT %08x, result %q, output %q; want 800706ba and nothing else", call[0], r.hr, r.errDoc, r.out)
		}
	}
}

// Which code an HNS that is not running answers is not known: the bridge
// answers it with each modelled code in turn, always with no document, and
// refuses a code it does not model.
func TestBridgeAnswersHNSDownWithEachModelledCode(t *testing.T) {
	h, b, c := startBridge(t)
	if err := b.AnswerDownWith(0x490); err == nil {
		t.Error("AnswerDownWith(0x490), not found, was taken as a code for HNS down")
	}
	if err := b.AnswerDownWith(); err == nil {
		t.Error("AnswerDownWith() with no code was taken")
	}
	if err := b.AnswerDownWith(remote.DownCodes()...); err != nil {
		t.Fatal(err)
	}
	h.Restart(time.Minute)
	var got []uint32
	for range 2 * len(remote.DownCodes()) {
		r := c.call("HcnEnumerateLoadBalancers", "", "{}")
		if r.errDoc != "" || r.out != "" {
			t.Errorf("HNS down answered with result %q, output %q; want none", r.errDoc, r.out)
		}
		got = append(got, r.hr)
	}
	want := []uint32{0x800706ba, 0x800706b5, 0x800706ba, 0x800706b5}
	if !slices.Equal(got, want) {
		t.Errorf("HNS down answered %x, want %x", got, want)
	}
}

// A peer that is not a bridge client gets no answer, and the bridge keeps
// serving.
func TestBridgeIgnoresGarbage(t *testing.T) {
	_, _, c := startBridge(t)
	for _, junk := range []string{"GET / HTTP/1.0\r\n\r\n", "99999999999:x,", "3:abc;"} {
		conn, err := net.Dial("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(conn, junk)
		conn.(*net.TCPConn).CloseWrite()
		buf := make([]byte, 16)
		if n, _ := conn.Read(buf); n != 0 {
			t.Errorf("garbage %q got an answer %q", junk, buf[:n])
		}
		conn.Close()
	}
	c.ok("HNSCall", "GET /globals/version", "")
}
