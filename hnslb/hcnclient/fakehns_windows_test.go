//go:build windows

package hcnclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/Microsoft/hcsshim/hcn"
	"golang.org/x/sys/windows"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// These tests drive the client through hcn's real code (handles, result
// buffers, HRESULT decoding, hcn's error types) against the scriptable fake
// HNS DLLs that hack/wine-test.sh installs into its Wine prefix
// (hack/wine/fakehns.h). On a real Windows host they are skipped: they would
// need HNS to fail on demand.

var fakeVars = []string{
	"HNSPROXY_FAKE_FAIL_OP", "HNSPROXY_FAKE_HRESULT", "HNSPROXY_FAKE_RESULT", "HNSPROXY_FAKE_IDS",
	"HNSPROXY_FAKE_OBJECT", "HNSPROXY_FAKE_HNSCALL", "HNSPROXY_FAKE_CALLS", "HNSPROXY_FAKE_SENT",
	"HNSPROXY_FAKE_GONE", "HNSPROXY_FAKE_GONE_HRESULT", "HNSPROXY_FAKE_QUERY",
}

type fakeHNS struct{ t *testing.T }

func useFakeHNS(t *testing.T) (*fakeHNS, hnslb.Client) {
	t.Helper()
	if windows.NewLazySystemDLL(hcnDLL).NewProc("HnsproxyFakeHns").Find() != nil {
		t.Skip("talks to hack/wine's fake HNS DLLs, which hack/wine-test.sh installs; this host has a real HNS")
	}
	for _, v := range fakeVars {
		t.Setenv(v, "") // restored after the test
		os.Unsetenv(v)
	}
	c, err := New()
	if err != nil {
		t.Fatalf("New with the fake HNS DLLs: %v", err)
	}
	return &fakeHNS{t}, c
}

func (f *fakeHNS) set(name, value string) { os.Setenv("HNSPROXY_FAKE_"+name, value) }

// fail makes the fake function op (or "*") return hresult with result in its
// result buffer.
func (f *fakeHNS) fail(op string, hresult uint32, result string) {
	f.set("FAIL_OP", op)
	f.set("HRESULT", strconv.FormatUint(uint64(hresult), 16))
	if result != "" {
		f.set("RESULT", result)
	}
}

// calls returns, and forgets, the fake functions called so far.
func (f *fakeHNS) calls() string {
	c := os.Getenv("HNSPROXY_FAKE_CALLS")
	os.Unsetenv("HNSPROXY_FAKE_CALLS")
	return c
}

func (f *fakeHNS) sent() string { return os.Getenv("HNSPROXY_FAKE_SENT") }

const lbID = "c0ffee00-0000-4000-8000-000000000001"

func sampleLB() *hnslb.LoadBalancer {
	return &hnslb.LoadBalancer{
		HostComputeEndpoints: []string{localEP, remoteEP},
		SourceVIP:            "10.244.1.2",
		FrontendVIPs:         []string{"10.96.0.10"},
		PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 8080, ExternalPort: 80,
			DistributionType: hnslb.DistributionSourceIP, Flags: hnslb.PortMappingFlagsVipExternalIP}},
		SchemaVersion: hnslb.V2,
		Flags:         hnslb.LoadBalancerFlagsDSR,
	}
}

func TestFakeHNSErrorsMapToHNSCodes(t *testing.T) {
	ctx := context.Background()
	// Results as HNS sends them with a failure: its text with a trailing
	// space, a detail sentence at times, the code in decimal
	// (kubernetes/community#8883, kubernetes/kubernetes#98680).
	const portExists = `{"Success":false,"Error":"The specified port already exists. ","ErrorCode":2151350291}`
	const tooManyDestinations = `{"Success":false,"Error":"The parameter is incorrect. Unable to initialize VFP LB rule: ` +
		`invalid number of destinations.","ErrorCode":2147942487}`
	for _, c := range []struct {
		name    string
		failOp  string
		hresult uint32
		result  string
		ids     string // Enumerate* answer, for lookups that find nothing
		hnsCall string // HNSCall answer
		do      func(hnslb.Client) error
		want    hnslb.ErrorCode
		is      func(error) bool
		msg     string
	}{
		{name: "delete vanished load balancer", failOp: "HcnDeleteLoadBalancer", hresult: 0x80070490,
			do:   func(c hnslb.Client) error { return c.DeleteLoadBalancer(ctx, lbID) },
			want: hnslb.CodeNotFound, is: hcn.IsElementNotFoundError},
		{name: "frontend conflict", failOp: "HcnCreateLoadBalancer", hresult: 0x803b0013, result: portExists,
			do: func(c hnslb.Client) error { _, err := c.CreateLoadBalancer(ctx, sampleLB()); return err },
			// hnslb's, not hcn's IsPortAlreadyExistsError: the client makes
			// the create itself (reads_windows.go), so the error is its
			// own, carrying HNS's code as hcn's does.
			want: hnslb.CodePortAlreadyExists, is: hnslb.IsPortAlreadyExists, msg: "The specified port already exists."},
		{name: "modify not implemented", failOp: "HcnModifyLoadBalancer", hresult: 0x80004001,
			do:   func(c hnslb.Client) error { _, err := c.UpdateLoadBalancer(ctx, lbID, sampleLB()); return err },
			want: hnslb.CodeNotImplemented, is: hnslb.IsNotImplemented},
		{name: "HNS down while listing", failOp: "HcnEnumerateLoadBalancers", hresult: 0x800706ba,
			do:   func(c hnslb.Client) error { _, err := c.ListLoadBalancers(ctx); return err },
			want: hnslb.CodeRPCServerUnavailable, is: hnslb.IsUnavailable},
		// hcn fails a call on an error document whatever its HRESULT
		// (checkForErrors); the listing's IDs beside it are not taken.
		{name: "listing refused by a document alone", failOp: "HcnEnumerateLoadBalancers", hresult: 0,
			result: `{"Success":false,"Error":"boom"}`,
			do:     func(c hnslb.Client) error { _, err := c.ListLoadBalancers(ctx); return err },
			want:   0, msg: "boom"},
		// What a document alone says is taken from its ErrorCode, which
		// hcn would not read.
		{name: "frontend conflict told by the document alone", failOp: "HcnCreateLoadBalancer", result: portExists,
			do:   func(c hnslb.Client) error { _, err := c.CreateLoadBalancer(ctx, sampleLB()); return err },
			want: hnslb.CodePortAlreadyExists, is: hnslb.IsPortAlreadyExists, msg: "The specified port already exists."},
		{name: "backend gone told by the document alone", failOp: "HcnModifyLoadBalancer",
			result: `{"Success":false,"Error":"Element not found. ","ErrorCode":1168}`,
			do:     func(c hnslb.Client) error { _, err := c.UpdateLoadBalancer(ctx, lbID, sampleLB()); return err },
			want:   hnslb.CodeNotFound, is: hnslb.IsNotFound},
		{name: "a Win32 code in the document alone", failOp: "HcnCreateEndpoint",
			result: `{"Success":false,"Error":"The object already exists. ","ErrorCode":2147942583}`,
			do:     func(c hnslb.Client) error { _, err := c.CreateEndpoint(ctx, podNet, &hnslb.Endpoint{}); return err },
			want:   hnslb.CodeAlreadyExists, is: hnslb.IsAlreadyExists},
		{name: "HNS not yet running while listing", failOp: "HcnEnumerateLoadBalancers", hresult: 0x800706b5,
			do:   func(c hnslb.Client) error { _, err := c.ListLoadBalancers(ctx); return err },
			want: hnslb.CodeRPCServerUnavailable, is: hnslb.IsUnavailable},
		{name: "HNS not yet running while creating a load balancer", failOp: "HcnCreateLoadBalancer", hresult: 0x800706b5,
			do:   func(c hnslb.Client) error { _, err := c.CreateLoadBalancer(ctx, sampleLB()); return err },
			want: hnslb.CodeRPCServerUnavailable, is: hnslb.IsUnavailable},
		{name: "RPC call failed while deleting an endpoint", failOp: "HcnDeleteEndpoint", hresult: 0x800706be,
			do:   func(c hnslb.Client) error { return c.DeleteEndpoint(ctx, remoteEP) },
			want: hnslb.CodeRPCServerUnavailable, is: hnslb.IsUnavailable},
		{name: "too many destinations", failOp: "HcnCreateLoadBalancer", hresult: 0x80070057, result: tooManyDestinations,
			do:   func(c hnslb.Client) error { _, err := c.CreateLoadBalancer(ctx, sampleLB()); return err },
			want: hnslb.CodeInvalidParameter, is: hnslb.IsInvalidParameter, msg: "invalid number of destinations"},
		{name: "endpoint IP taken", failOp: "HcnCreateEndpoint", hresult: 0x800700b7,
			do:   func(c hnslb.Client) error { _, err := c.CreateEndpoint(ctx, podNet, &hnslb.Endpoint{}); return err },
			want: hnslb.CodeAlreadyExists, is: hnslb.IsAlreadyExists},
		{name: "endpoint already attached", failOp: "HcnModifyNamespace", hresult: 0x803b0014,
			do:   func(c hnslb.Client) error { return c.AddNamespaceEndpoint(ctx, podNet, localEP) },
			want: hnslb.CodeEndpointAlreadyAttach, is: hnslb.IsAlreadyExists},
		{name: "network gone while creating an endpoint", failOp: "HcnOpenNetwork", hresult: 0x803b0001,
			do:   func(c hnslb.Client) error { _, err := c.CreateEndpoint(ctx, podNet, &hnslb.Endpoint{}); return err },
			want: hnslb.CodeNetworkNotFound, is: hnslb.IsNotFound},
		{name: "query after create fails", failOp: "HcnQueryLoadBalancerProperties", hresult: 0x803b0020,
			do:   func(c hnslb.Client) error { _, err := c.CreateLoadBalancer(ctx, sampleLB()); return err },
			want: hnslb.CodeManagerStopped, is: hnslb.IsUnavailable},
		{name: "unnamed HNS code kept", failOp: "HcnDeleteNetwork", hresult: 0x803b00ff,
			do:   func(c hnslb.Client) error { return c.DeleteNetwork(ctx, podNet) },
			want: 0x803b00ff},
		{name: "network name unknown", ids: "[]",
			do:   func(c hnslb.Client) error { _, err := c.GetNetworkByName(ctx, "cbr0"); return err },
			want: hnslb.CodeNetworkNotFound, is: hcn.IsNotFoundError},
		{name: "endpoint name unknown", ids: "[]",
			do:   func(c hnslb.Client) error { _, err := c.GetEndpointByName(ctx, "x_eth0"); return err },
			want: hnslb.CodeEndpointNotFound, is: hnslb.IsNotFound},
		{name: "load balancer ID unknown", ids: "[]",
			do:   func(c hnslb.Client) error { _, err := c.GetLoadBalancerByID(ctx, lbID); return err },
			want: hnslb.CodeNotFound, is: hnslb.IsNotFound},
		{name: "namespace ID unknown", ids: "[]",
			do:   func(c hnslb.Client) error { _, err := c.GetNamespaceByID(ctx, podNet); return err },
			want: hnslb.CodeNotFound, is: hnslb.IsNotFound},
		{name: "version while HNS is down", failOp: "HNSCall", hresult: 0x800706ba,
			do:   func(c hnslb.Client) error { _, err := c.Version(ctx); return err },
			want: hnslb.CodeRPCServerUnavailable, is: hnslb.IsUnavailable},
		{name: "version refused by HNS", hnsCall: `{"Success":false,"Error":"boom"}`,
			do:   func(c hnslb.Client) error { _, err := c.Version(ctx); return err },
			want: 0, msg: "boom"},
		// hcn refuses these before it calls HNS, with errors of its own
		// that carry no code: they answer as HNS answers a document it
		// will not take, as the simulator does.
		{name: "malformed ID", do: func(c hnslb.Client) error { return c.DeleteLoadBalancer(ctx, "not-a-guid") },
			want: hnslb.CodeInvalidParameter, is: hnslb.IsInvalidParameter, msg: "invalid load balancer ID"},
		{name: "malformed ID on a modify",
			do:   func(c hnslb.Client) error { _, err := c.UpdateLoadBalancer(ctx, "not-a-guid", sampleLB()); return err },
			want: hnslb.CodeInvalidParameter, is: hnslb.IsInvalidParameter, msg: "invalid load balancer ID"},
		{name: "braced ID", do: func(c hnslb.Client) error { return c.DeleteEndpoint(ctx, "{"+remoteEP+"}") },
			want: hnslb.CodeInvalidParameter, is: hnslb.IsInvalidParameter, msg: "invalid endpoint ID"},
		{name: "malformed network ID on an endpoint create",
			do: func(c hnslb.Client) error {
				_, err := c.CreateEndpoint(ctx, "cbr0", &hnslb.Endpoint{})
				return err
			},
			want: hnslb.CodeInvalidParameter, is: hnslb.IsInvalidParameter, msg: "invalid network ID"},
		// A namespace the container runtime names by something other than
		// a GUID: the CNI's attach and detach must read it as a document
		// HNS will not take, not as an HNS failure to retry.
		{name: "malformed namespace ID on an attach",
			do:   func(c hnslb.Client) error { return c.AddNamespaceEndpoint(ctx, "cni-netns-1", localEP) },
			want: hnslb.CodeInvalidParameter, is: hnslb.IsInvalidParameter, msg: "invalid namespace ID"},
		{name: "malformed namespace ID on a detach",
			do:   func(c hnslb.Client) error { return c.RemoveNamespaceEndpoint(ctx, "cni-netns-1", localEP) },
			want: hnslb.CodeInvalidParameter, is: hnslb.IsInvalidParameter, msg: "invalid namespace ID"},
		{name: "endpoint create naming a namespace",
			do: func(c hnslb.Client) error {
				_, err := c.CreateEndpoint(ctx, podNet, &hnslb.Endpoint{HostComputeNamespace: podNet})
				return err
			},
			want: hnslb.CodeInvalidParameter, is: hnslb.IsInvalidParameter, msg: "HostComputeNamespace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, client := useFakeHNS(t)
			if c.failOp != "" {
				f.fail(c.failOp, c.hresult, c.result)
			}
			if c.ids != "" {
				f.set("IDS", c.ids)
			}
			if c.hnsCall != "" {
				f.set("HNSCALL", c.hnsCall)
			}
			err := c.do(client)
			e := asHNSError(t, err, c.want)
			if c.is != nil && !c.is(err) {
				t.Errorf("%q: %s does not hold", err, runtimeName(c.is))
			}
			if c.want == hnslb.CodeRPCServerUnavailable && hnslb.IsNotFound(err) {
				t.Errorf("HNS unreachable reported as not found: %v", err)
			}
			if c.msg != "" && !strings.Contains(e.Message, c.msg) {
				t.Errorf("message %q does not carry %q", e.Message, c.msg)
			}
			if code := fmt.Sprintf("(0x%x)", uint32(c.want)); c.want != 0 && strings.Count(strings.ToLower(err.Error()), code) != 1 {
				t.Errorf("%q does not name %s once", err, code)
			}
		})
	}
}

func TestFakeHNSReceivesHcnJSON(t *testing.T) {
	ctx := context.Background()
	f, c := useFakeHNS(t)

	lb := sampleLB()
	returned := *lb
	returned.ID = lbID
	f.set("OBJECT", string(mustJSON(t, returned)))
	got, err := c.CreateLoadBalancer(ctx, lb)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(mustJSON(t, lb)); f.sent() != want {
		t.Errorf("HNS received\n %s\nwant\n %s", f.sent(), want)
	}
	if !reflect.DeepEqual(*got, returned) {
		t.Errorf("CreateLoadBalancer returned %+v, want %+v", *got, returned)
	}
	if calls := f.calls(); calls != "HcnCreateLoadBalancer,HcnQueryLoadBalancerProperties,HcnCloseLoadBalancer" {
		t.Errorf("create called %s", calls)
	}

	lb.HostComputeEndpoints = []string{localEP}
	if _, err := c.UpdateLoadBalancer(ctx, lbID, lb); err != nil {
		t.Fatal(err)
	}
	if want := string(mustJSON(t, lb)); f.sent() != want {
		t.Errorf("modify sent\n %s\nwant\n %s", f.sent(), want)
	}
	if calls := f.calls(); calls != "HcnOpenLoadBalancer,HcnModifyLoadBalancer,HcnQueryLoadBalancerProperties,HcnCloseLoadBalancer" {
		t.Errorf("update called %s", calls)
	}

	remote := &hnslb.Endpoint{
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.2.7"}},
		MacAddress:       "02-11-0a-f4-02-07",
		Flags:            hnslb.EndpointFlagsRemoteEndpoint,
		Policies: []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: "192.168.1.11"})},
		SchemaVersion: hnslb.V2,
	}
	if _, err := c.CreateEndpoint(ctx, podNet, remote); err != nil {
		t.Fatal(err)
	}
	withNet := *remote
	withNet.HostComputeNetwork = podNet
	if want := string(mustJSON(t, withNet)); f.sent() != want {
		t.Errorf("endpoint create sent\n %s\nwant\n %s", f.sent(), want)
	}
	if calls := f.calls(); !strings.HasPrefix(calls, "HcnOpenNetwork,HcnCreateEndpoint,") {
		t.Errorf("endpoint create called %s", calls)
	}

	if err := c.AddNamespaceEndpoint(ctx, "5d2c9a1e-0f3b-4c6d-8e7f-a1b2c3d4e5f6", localEP); err != nil {
		t.Fatal(err)
	}
	if want := `{"ResourceType":"Endpoint","RequestType":"Add","Settings":{"EndpointId":"` + localEP + `"}}`; f.sent() != want {
		t.Errorf("namespace attach sent %s, want %s", f.sent(), want)
	}
	if err := c.RemoveNamespaceEndpoint(ctx, "5d2c9a1e-0f3b-4c6d-8e7f-a1b2c3d4e5f6", localEP); err != nil {
		t.Fatal(err)
	}
	if want := `{"ResourceType":"Endpoint","RequestType":"Remove","Settings":{"EndpointId":"` + localEP + `"}}`; f.sent() != want {
		t.Errorf("namespace detach sent %s, want %s", f.sent(), want)
	}
}

// TestACallWithNoObjectReachesNoHNS: a create or modify given no object is
// refused as a document HNS will not take, before any call: sent on, it
// would reach HNS as an empty document (a load balancer with no frontend
// and no backend, an endpoint with no address).
func TestACallWithNoObjectReachesNoHNS(t *testing.T) {
	ctx := context.Background()
	for name, do := range map[string]func(hnslb.Client) error{
		"CreateLoadBalancer": func(c hnslb.Client) error { _, err := c.CreateLoadBalancer(ctx, nil); return err },
		"UpdateLoadBalancer": func(c hnslb.Client) error { _, err := c.UpdateLoadBalancer(ctx, lbID, nil); return err },
		"CreateEndpoint":     func(c hnslb.Client) error { _, err := c.CreateEndpoint(ctx, podNet, nil); return err },
		"CreateNamespace":    func(c hnslb.Client) error { _, err := c.CreateNamespace(ctx, nil); return err },
		"CreateNetwork":      func(c hnslb.Client) error { _, err := c.CreateNetwork(ctx, nil); return err },
	} {
		t.Run(name, func(t *testing.T) {
			f, client := useFakeHNS(t)
			if err := do(client); !hnslb.IsInvalidParameter(err) {
				t.Errorf("no object given: %v, want invalid parameter", err)
			}
			if calls := f.calls(); calls != "" {
				t.Errorf("no object given, HNS was called: %s", calls)
			}
		})
	}
}

// Listing costs one enumerate plus open, query and close per object, as in
// hcsshim's hcn (hcn/hcnloadbalancer.go: enumerateLoadBalancers lists the
// IDs, then getLoadBalancer opens, queries and closes each); the simulator
// charges the same.
// TestFakeHNSListCost: a listing, and a walk of it, cost one enumerate
// plus three calls per object and hand over what HNS holds.
func TestFakeHNSListCost(t *testing.T) {
	walk := func(c hnslb.Client) ([]hnslb.LoadBalancer, error) {
		var walked []hnslb.LoadBalancer
		err := hnslb.WalkLoadBalancers(context.Background(), c, func(lb *hnslb.LoadBalancer) error {
			walked = append(walked, *lb)
			return nil
		})
		return walked, err
	}
	for name, list := range map[string]func(hnslb.Client) ([]hnslb.LoadBalancer, error){
		"list": func(c hnslb.Client) ([]hnslb.LoadBalancer, error) { return c.ListLoadBalancers(context.Background()) },
		"walk": walk,
	} {
		t.Run(name, func(t *testing.T) {
			f, c := useFakeHNS(t)
			ids := []string{lbID, "c0ffee00-0000-4000-8000-000000000002", "c0ffee00-0000-4000-8000-000000000003"}
			raw, _ := json.Marshal(ids)
			f.set("IDS", string(raw))
			f.set("OBJECT", string(mustJSON(t, sampleLB())))
			lbs, err := list(c)
			if err != nil {
				t.Fatal(err)
			}
			if len(lbs) != len(ids) || !reflect.DeepEqual(lbs[2], *sampleLB()) {
				t.Errorf("listed %+v", lbs)
			}
			if n := len(strings.Split(f.calls(), ",")); n != 1+3*len(ids) {
				t.Errorf("listing %d load balancers made %d calls, want %d", len(ids), n, 1+3*len(ids))
			}
			stop, n := errors.New("enough"), 0
			err = c.(hnslb.Walker).WalkLoadBalancers(context.Background(), func(*hnslb.LoadBalancer) error { n++; return stop })
			if !errors.Is(err, stop) || n != 1 {
				t.Errorf("fn's error: walk returned %v after %d objects, want it after 1", err, n)
			}
		})
	}
}

func TestFakeHNSVersion(t *testing.T) {
	f, c := useFakeHNS(t)
	f.set("HNSCALL", `{"Success":true,"Output":{"Major":15,"Minor":4}}`)
	v, err := c.Version(context.Background())
	if err != nil || v != (hnslb.Version{Major: 15, Minor: 4}) {
		t.Errorf("Version = %v, %v; want 15.4", v, err)
	}
}

func runtimeName(f any) string {
	return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}
