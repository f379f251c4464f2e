package sim

import (
	"encoding/json"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func endpointIDsOf(t *testing.T, ns *hnslb.Namespace) []string {
	t.Helper()
	var ids []string
	for _, r := range ns.Resources {
		if r.Type != hnslb.NamespaceResourceTypeEndpoint {
			t.Fatalf("resource type %q", r.Type)
		}
		var d hnslb.NamespaceResourceEndpoint
		if err := json.Unmarshal(r.Data, &d); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	return ids
}

func TestNamespaceAttachDetach(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
	ns, err := h.CreateNamespace(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ns2, err := h.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeGuest})
	if err != nil {
		t.Fatal(err)
	}
	if !hnslb.IsGUID(ns.ID) || ns.Type != hnslb.NamespaceTypeHost || ns.NamespaceId == 0 ||
		ns2.NamespaceId == ns.NamespaceId || ns2.Type != hnslb.NamespaceTypeGuest {
		t.Fatalf("namespaces %+v %+v", ns, ns2)
	}
	if err := h.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	gotEP, _ := h.GetEndpointByID(ctx, ep.ID)
	gotNS, _ := h.GetNamespaceByID(ctx, ns.ID)
	if gotEP.HostComputeNamespace != ns.ID {
		t.Errorf("endpoint namespace %q", gotEP.HostComputeNamespace)
	}
	if ids := endpointIDsOf(t, gotNS); len(ids) != 1 || ids[0] != ep.ID {
		t.Errorf("namespace resources %v", ids)
	}
	// Attached once, to one namespace.
	wantCode(t, h.AddNamespaceEndpoint(ctx, ns.ID, ep.ID), hnslb.CodeEndpointAlreadyAttach)
	wantCode(t, h.AddNamespaceEndpoint(ctx, ns2.ID, ep.ID), hnslb.CodeEndpointAlreadyAttach)
	wantCode(t, h.RemoveNamespaceEndpoint(ctx, ns2.ID, ep.ID), hnslb.CodeNotFound)

	if err := h.RemoveNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	gotEP, _ = h.GetEndpointByID(ctx, ep.ID)
	gotNS, _ = h.GetNamespaceByID(ctx, ns.ID)
	if gotEP.HostComputeNamespace != "" || len(gotNS.Resources) != 0 {
		t.Errorf("after detach: endpoint %q, namespace %+v", gotEP.HostComputeNamespace, gotNS.Resources)
	}
	if err := h.AddNamespaceEndpoint(ctx, ns2.ID, ep.ID); err != nil {
		t.Errorf("attach elsewhere after detach: %v", err)
	}
}

func TestNamespaceRejects(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	remote := mustEndpoint(t, h, n.ID, remoteDoc("10.244.2.7", ""))
	ns, err := h.CreateNamespace(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	const missing = "0b5e4c1e-0000-4000-8000-000000000000"
	wantCode(t, h.AddNamespaceEndpoint(ctx, ns.ID, remote.ID), hnslb.CodeInvalidEndpoint)
	wantCode(t, h.AddNamespaceEndpoint(ctx, ns.ID, missing), hnslb.CodeEndpointNotFound)
	wantCode(t, h.AddNamespaceEndpoint(ctx, missing, remote.ID), hnslb.CodeNotFound)
	_, err = h.CreateNamespace(ctx, &hnslb.Namespace{Type: "Container"})
	wantCode(t, err, hnslb.CodeInvalidParameter)
	_, err = h.CreateNamespace(ctx, &hnslb.Namespace{Resources: []hnslb.NamespaceResource{{Type: hnslb.NamespaceResourceTypeEndpoint}}})
	wantCode(t, err, hnslb.CodeInvalidParameter)
	_, err = h.GetNamespaceByID(ctx, missing)
	wantCode(t, err, hnslb.CodeNotFound)
	wantCode(t, h.DeleteNamespace(ctx, missing), hnslb.CodeNotFound)
}

func TestDeletesDetach(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	a := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
	b := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.6"))
	ns, _ := h.CreateNamespace(ctx, nil)
	for _, ep := range []*hnslb.Endpoint{a, b} {
		if err := h.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
			t.Fatal(err)
		}
	}
	// Deleting an attached endpoint removes it from its namespace.
	if err := h.DeleteEndpoint(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	gotNS, _ := h.GetNamespaceByID(ctx, ns.ID)
	if ids := endpointIDsOf(t, gotNS); len(ids) != 1 || ids[0] != b.ID {
		t.Errorf("namespace resources after endpoint delete: %v", ids)
	}
	// Deleting a namespace leaves its endpoints, detached.
	if err := h.DeleteNamespace(ctx, ns.ID); err != nil {
		t.Fatal(err)
	}
	gotB, err := h.GetEndpointByID(ctx, b.ID)
	if err != nil || gotB.HostComputeNamespace != "" {
		t.Errorf("endpoint after namespace delete: %+v %v", gotB, err)
	}
}
