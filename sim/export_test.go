package sim

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func populated(t *testing.T) *HNS {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	a := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
	mustEndpoint(t, h, n.ID, remoteDoc("10.244.2.5", "192.168.1.12"))
	ns, _ := h.CreateNamespace(ctx, nil)
	if err := h.AddNamespaceEndpoint(ctx, ns.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, a.ID)); err != nil {
		t.Fatal(err)
	}
	return h
}

// restoredFrom is a new ws2022 HNS with what h exports imported, and the
// export.
func restoredFrom(t *testing.T, h *HNS) (*HNS, []byte) {
	t.Helper()
	data, err := h.Export()
	if err != nil {
		t.Fatal(err)
	}
	restored := newSim(t, ProfileWS2022)
	if err := restored.Import(data); err != nil {
		t.Fatal(err)
	}
	return restored, data
}

func TestExportImport(t *testing.T) {
	orig := populated(t)
	restored, _ := restoredFrom(t, orig)
	if !reflect.DeepEqual(orig.Snapshot(), restored.Snapshot()) {
		t.Fatalf("snapshots differ:\n%+v\n%+v", orig.Snapshot(), restored.Snapshot())
	}
	if restored.Counters().Total() != 0 {
		t.Error("import counted calls")
	}
	// Generators continue where they stopped.
	x, _ := orig.CreateNamespace(ctx, nil)
	y, _ := restored.CreateNamespace(ctx, nil)
	if x.ID != y.ID || x.NamespaceId != y.NamespaceId {
		t.Errorf("after import: %+v vs %+v", x, y)
	}
	// Rules hold on imported state: the frontend and the address are taken.
	_, err := restored.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, orig.Snapshot().Endpoints[1].ID))
	wantCode(t, err, hnslb.CodePortAlreadyExists)
	_, err = restored.CreateEndpoint(ctx, orig.Snapshot().Networks[0].ID, endpointDoc("10.244.1.5"))
	wantCode(t, err, hnslb.CodeAlreadyExists)
}

func TestImportRejects(t *testing.T) {
	data, err := populated(t).Export()
	if err != nil {
		t.Fatal(err)
	}
	snap := populated(t).Snapshot()
	tests := map[string]string{
		"not JSON":            "{",
		"ID not a GUID":       strings.Replace(string(data), `"ID":"`+snap.Networks[0].ID+`","Name"`, `"ID":"cbr0","Name"`, 1),
		"endpoint of nothing": strings.Replace(string(data), `"HostComputeNetwork":"`+snap.Networks[0].ID, `"HostComputeNetwork":"0b5e4c1e-0000-4000-8000-000000000000`, 1),
	}
	// Two load balancers on one frontend cannot be imported.
	lbs := populated(t).Snapshot().LoadBalancers
	dup := strings.Replace(string(data), `"loadBalancers":[`, `"loadBalancers":[`+mustJSON(t, hnslb.LoadBalancer{
		ID: "6f1c2a3b-0000-4000-8000-000000000001", FrontendVIPs: lbs[0].FrontendVIPs, PortMappings: lbs[0].PortMappings})+",", 1)
	tests["conflicting load balancers"] = dup
	wantErr := map[string]string{
		"not JSON": "JSON", "ID not a GUID": "not a GUID",
		"endpoint of nothing": "unknown network", "conflicting load balancers": "conflicts",
	}
	for name, doc := range tests {
		h := newSim(t, ProfileWS2022)
		if doc == string(data) {
			t.Fatalf("%s: the test did not change the document", name)
		}
		err := h.Import([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), wantErr[name]) {
			t.Errorf("%s: got %v, want an error about %q", name, err, wantErr[name])
		}
		if len(h.Snapshot().Networks) != 0 {
			t.Errorf("%s: failed import changed state", name)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A load balancer a failed create left holding its frontend
// (Faults.PartialHoldsFrontend) still holds it after an export and import,
// as after hnssim's restart with --state; once deleted, the frontend is
// free. A hold whose load balancer is not a partial one is refused.
func TestExportKeepsWhatPartialLoadBalancersHold(t *testing.T) {
	h := populated(t)
	backend := h.Snapshot().Endpoints[0].ID
	h.SetFaults(Faults{ErrorRate: map[Op]float64{OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter},
		PartialCreates: 1, PartialHoldsFrontend: true})
	_, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.20", 80, backend))
	wantCode(t, err, hnslb.CodeInvalidParameter)
	restored, data := restoredFrom(t, h)
	var partial string
	for _, lb := range restored.Snapshot().LoadBalancers {
		if len(lb.PortMappings) == 0 {
			partial = lb.ID
		}
	}
	_, err = restored.CreateLoadBalancer(ctx, lbDoc("10.96.0.20", 80, backend))
	wantCode(t, err, hnslb.CodePortAlreadyExists)
	if partial == "" || err == nil || !strings.Contains(err.Error(), partial) {
		t.Errorf("create on the held frontend after the import: %v, want it refused naming %q", err, partial)
	}
	if err := restored.DeleteLoadBalancer(ctx, partial); err != nil {
		t.Fatal(err)
	}
	if _, err := restored.CreateLoadBalancer(ctx, lbDoc("10.96.0.20", 80, backend)); err != nil {
		t.Errorf("create once the partial one is deleted: %v", err)
	}

	ported := h.Snapshot().LoadBalancers[0].ID
	bad := strings.Replace(string(data), `"partialHolds":{"`+strings.ToLower(partial), `"partialHolds":{"`+strings.ToLower(ported), 1)
	if bad == string(data) {
		t.Fatal("the test did not change the document")
	}
	if err := newSim(t, ProfileWS2022).Import([]byte(bad)); err == nil || !strings.Contains(err.Error(), "without port mappings") {
		t.Errorf("a hold on a load balancer with port mappings: %v, want it refused", err)
	}
}
