package remote_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestWalksHandOverWhatListsReturn: a walk hands over, one by one, the same
// documents the listing returns, and stops at fn's error.
func TestWalksHandOverWhatListsReturn(t *testing.T) {
	ctx := context.Background()
	_, c, _ := serveSim(t, remote.Extras{})
	n, err := c.CreateNetwork(ctx, l2bridge("cbr0"))
	if err != nil {
		t.Fatal(err)
	}
	var eps []string
	for i := range 3 {
		ep, err := c.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: fmt.Sprintf("10.244.2.%d", i+1)}},
			Flags: hnslb.EndpointFlagsRemoteEndpoint})
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep.ID)
		if _, err := c.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{HostComputeEndpoints: eps, FrontendVIPs: []string{fmt.Sprintf("10.96.0.%d", i+1)},
			PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 80, ExternalPort: 80}}}); err != nil {
			t.Fatal(err)
		}
	}

	listedLBs, err := c.ListLoadBalancers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var walkedLBs []hnslb.LoadBalancer
	if err := c.WalkLoadBalancers(ctx, func(lb *hnslb.LoadBalancer) error { walkedLBs = append(walkedLBs, *lb); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listedLBs) != 3 || !reflect.DeepEqual(walkedLBs, listedLBs) {
		t.Errorf("walked %+v\nlisted %+v", walkedLBs, listedLBs)
	}
	listedEPs, err := c.ListEndpointsOfNetwork(ctx, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	var walkedEPs []hnslb.Endpoint
	if err := c.WalkEndpointsOfNetwork(ctx, n.ID, func(ep *hnslb.Endpoint) error { walkedEPs = append(walkedEPs, *ep); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listedEPs) != 3 || !reflect.DeepEqual(walkedEPs, listedEPs) {
		t.Errorf("walked %+v\nlisted %+v", walkedEPs, listedEPs)
	}

	stop := errors.New("enough")
	calls := 0
	err = c.WalkLoadBalancers(ctx, func(*hnslb.LoadBalancer) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("fn's error: walk returned %v after %d calls, want it after 1", err, calls)
	}
}

// TestWalkOfBrokenReplies: a reply cut short is HNS unavailable, one that is
// no JSON array a decode failure; null is an empty listing.
func TestWalkOfBrokenReplies(t *testing.T) {
	ctx := context.Background()
	path := socketPath(t)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	body, cut := "", false
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, body)
		if cut { // break the connection mid-reply, as a dying server does
			panic(http.ErrAbortHandler)
		}
	})}
	go remote.Serve(srv, l)
	t.Cleanup(func() { srv.Close() })
	c := remote.NewClient(path)
	t.Cleanup(c.Close)
	walk := func() (int, error) {
		n := 0
		err := c.WalkLoadBalancers(ctx, func(*hnslb.LoadBalancer) error { n++; return nil })
		return n, err
	}

	body, cut = `[{"ID":"a"},{"ID":"b"`, true
	n, err := walk()
	assertCode(t, "a reply cut short", err, hnslb.CodeRPCServerUnavailable, hnslb.IsUnavailable)
	if n != 1 {
		t.Errorf("cut short after the first document: fn called %d times, want 1", n)
	}
	body, cut = `null`, false
	if n, err := walk(); n != 0 || err != nil {
		t.Errorf("null: %d documents, %v; want none and no error", n, err)
	}
	body = `{"ID":"a"}`
	_, err = walk()
	assertCode(t, "not an array", err, 0, func(e error) bool { return !hnslb.IsUnavailable(e) && !hnslb.IsNotFound(e) })
	body = `[{"ID":7}]`
	_, err = walk()
	assertCode(t, "a document of the wrong shape", err, 0, func(e error) bool { return !hnslb.IsUnavailable(e) && !hnslb.IsNotFound(e) })
}
