package sim

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The write log names every object a call made, also where the caller saw
// the call fail: a create applied anyway, the load balancer a failed create
// left, a delete reported done that kept its object, and what a restart
// dropped.
func TestWriteLogNamesWhatEachCallMade(t *testing.T) {
	var log bytes.Buffer
	p, _ := ProfileByName(ProfileWS2022)
	h := New(Options{Profile: p, Seed: 1, WriteLog: &log})
	doc := withBackend(t, h, lbDoc("10.96.0.10", 80))

	h.SetFaults(Faults{ErrorRate: map[Op]float64{OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}, Committed: 1})
	_, err := h.CreateLoadBalancer(ctx, doc)
	wantCode(t, err, hnslb.CodeTimeout)
	applied := mustList(t, h)[0].ID

	h.SetFaults(Faults{ErrorRate: map[Op]float64{OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}, PartialCreates: 1})
	_, err = h.CreateLoadBalancer(ctx, lbDoc("10.96.0.11", 80, doc.HostComputeEndpoints...))
	wantCode(t, err, hnslb.CodeInvalidParameter)
	var partial string
	for _, lb := range mustList(t, h) {
		if len(lb.PortMappings) == 0 {
			partial = lb.ID
		}
	}

	h.SetFaults(Faults{KeptOnDelete: 1})
	if err := h.DeleteLoadBalancer(ctx, applied); err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{})
	if err := h.RestartLosing(0, RestartLosesLoadBalancers); err != nil {
		t.Fatal(err)
	}

	got := log.String()
	for _, want := range []string{
		"stored load balancer " + applied + " vips=[10.96.0.10] 6:80->8080 backends=[" + doc.HostComputeEndpoints[0] + "]",
		"CreateLoadBalancer answered Timeout (applied anyway: true)",
		"a failed create leaves load balancer " + partial + " without port mappings",
		"CreateLoadBalancer answered InvalidParameter (applied anyway: false)",
		"kept load balancer " + applied + " on its delete",
		"DeleteLoadBalancer answered ok (applied anyway: false)",
		"dropped load balancer " + applied,
		"dropped load balancer " + partial,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the write log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "GetLoadBalancer") || strings.Contains(got, "ListLoadBalancers") {
		t.Errorf("the write log has reads:\n%s", got)
	}
}

func mustList(t *testing.T, h *HNS) []hnslb.LoadBalancer {
	t.Helper()
	lbs, err := h.ListLoadBalancers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return lbs
}
