package cni

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// oneSided is HNS whose answers about endpoints (gets and listings) or
// namespaces disagree with what it holds: whether an endpoint is attached
// is told by both, and one side alone is not taken at its word.
type oneSided struct {
	hnslb.Client
	endpoint  func(hnslb.Endpoint) hnslb.Endpoint
	namespace func(hnslb.Namespace) hnslb.Namespace
}

func (o oneSided) GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error) {
	ep, err := o.Client.GetEndpointByName(ctx, name)
	if err == nil && o.endpoint != nil {
		*ep = o.endpoint(*ep)
	}
	return ep, err
}

func (o oneSided) ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]hnslb.Endpoint, error) {
	eps, err := o.Client.ListEndpointsOfNetwork(ctx, networkID)
	for i := range eps {
		if o.endpoint != nil {
			eps[i] = o.endpoint(eps[i])
		}
	}
	return eps, err
}

func (o oneSided) GetNamespaceByID(ctx context.Context, id string) (*hnslb.Namespace, error) {
	ns, err := o.Client.GetNamespaceByID(ctx, id)
	if err == nil && o.namespace != nil {
		*ns = o.namespace(*ns)
	}
	return ns, err
}

func (o oneSided) ListNamespaces(ctx context.Context) ([]hnslb.Namespace, error) {
	nss, err := o.Client.ListNamespaces(ctx)
	for i := range nss {
		if o.namespace != nil {
			nss[i] = o.namespace(nss[i])
		}
	}
	return nss, err
}

// attachedEndpoint creates an endpoint named name on cbr0 (cbr0Node) at
// addr, with the MAC hnscni derives from it, attached to ns.
func attachedEndpoint(t *testing.T, h hnslb.Client, ns *hnslb.Namespace, name, addr string) *hnslb.Endpoint {
	t.Helper()
	ctx := context.Background()
	network, err := h.GetNetworkByName(ctx, "cbr0")
	if err != nil {
		t.Fatal(err)
	}
	a := netip.MustParseAddr(addr)
	ep, err := h.CreateEndpoint(ctx, network.ID, &hnslb.Endpoint{Name: name, MacAddress: endpointMAC("0E-2A", a),
		IpConfigurations: []hnslb.IPConfig{{IpAddress: addr, PrefixLength: 24}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	return ep
}

// sessionFor is a command's session for container containerID, interface
// eth0, in namespace nsID, with the configuration stdin, on HNS h.
func sessionFor(t *testing.T, h hnslb.Client, stdin []byte, containerID, nsID string) *session {
	t.Helper()
	conf, err := parseConfig(stdin)
	if err != nil {
		t.Fatal(err)
	}
	return &session{conf: conf, hns: hnsClient{h}, args: &skel.CmdArgs{ContainerID: containerID, Netns: nsID, IfName: "eth0", StdinData: stdin}}
}

// checkOf7 is CHECK's configuration, without IPAM, of the eth0 attachment
// in nsID that ADD reported with 10.244.1.7/24 (attachedEndpoint's MAC).
func checkOf7(nsID string) []byte {
	return []byte(`{"cniVersion": "1.0.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0",
		"prevResult": {"cniVersion": "1.0.0", "interfaces": [{"name": "eth0", "mac": "0e:2a:0a:f4:01:07", "sandbox": "` + nsID + `"}],
		"ips": [{"interface": 0, "address": "10.244.1.7/24"}]}}`)
}

// TestCheckReadsTheAttachmentFromBothSides: CHECK passes a pod whose
// endpoint says it is attached to CNI_NETNS and whose namespace lists the
// endpoint, and fails it when either side alone says otherwise (docs/cni.md:
// "from both sides").
func TestCheckReadsTheAttachmentFromBothSides(t *testing.T) {
	h, ns := cbr0Node(t)
	other, err := h.CreateNamespace(context.Background(), &hnslb.Namespace{})
	if err != nil {
		t.Fatal(err)
	}
	attachedEndpoint(t, h, ns, "c1_cbr0", "10.244.1.7")
	stdin := checkOf7(ns.ID)
	for what, c := range map[string]struct {
		hns oneSided
		ok  bool
	}{
		"both sides agree": {oneSided{Client: h}, true},
		"the endpoint says another namespace": {oneSided{Client: h, endpoint: func(e hnslb.Endpoint) hnslb.Endpoint {
			e.HostComputeNamespace = other.ID
			return e
		}}, false},
		"the namespace does not list it": {oneSided{Client: h, namespace: func(n hnslb.Namespace) hnslb.Namespace {
			n.Resources = nil
			return n
		}}, false},
	} {
		if err := cmdCheck(context.Background(), sessionFor(t, c.hns, stdin, "c1", ns.ID)); (err == nil) != c.ok {
			t.Errorf("%s: CHECK answered %v, want success %v", what, err, c.ok)
		}
	}
}

// TestAddLeavesAnEndpointANamespaceListsThoughItsListingSaysDetached: ADD
// removes an endpoint of hnscni's that holds the pod's address only when it
// is attached to no namespace, read from both sides: one a namespace lists
// is a running pod's, whatever the endpoint listing says, and stays.
func TestAddLeavesAnEndpointANamespaceListsThoughItsListingSaysDetached(t *testing.T) {
	ctx := context.Background()
	h, ns := cbr0Node(t)
	held := attachedEndpoint(t, h, ns, "running_cbr0", "10.244.1.10")
	hns := oneSided{Client: h, endpoint: func(e hnslb.Endpoint) hnslb.Endpoint {
		e.HostComputeNamespace = ""
		return e
	}}
	stdin := []byte(`{"cniVersion": "1.0.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0", "ipam": {"type": "host-local"}}`)
	s := sessionFor(t, hns, stdin, "new", ns.ID)
	spec := endpointSpec{name: "new_cbr0", addrs: []podAddr{{addr: netip.MustParsePrefix("10.244.1.10/24"), gateway: netip.MustParseAddr("10.244.1.1")}}}
	if _, err := s.createOverLeftovers(ctx, held.HostComputeNetwork, spec, errors.New("address taken")); err == nil {
		t.Error("ADD over the address of an endpoint a namespace lists succeeded")
	}
	if _, err := h.GetEndpointByID(ctx, held.ID); err != nil {
		t.Errorf("the running pod's endpoint: %v, want it kept", err)
	}
}

// TestAddressHeldByALocalAndARemoteEndpointIsNotTryAgainLater: an address
// a local endpoint holds stays held (no proxy deletes it), so ADD answers
// code 999 naming it, even where a service proxy's remote endpoint holds
// it too (a build that allows both); only remote holders are "try again
// later".
func TestAddressHeldByALocalAndARemoteEndpointIsNotTryAgainLater(t *testing.T) {
	const addr = "10.244.1.10"
	local := hnslb.Endpoint{ID: "local", Name: "host-vnic", IpConfigurations: []hnslb.IPConfig{{IpAddress: addr}}}
	remote := hnslb.Endpoint{ID: "remote", Flags: hnslb.EndpointFlagsRemoteEndpoint, IpConfigurations: []hnslb.IPConfig{{IpAddress: addr}}}
	spec := endpointSpec{name: "new_cbr0", addrs: []podAddr{{addr: netip.MustParsePrefix(addr + "/24")}}}
	for what, c := range map[string]struct {
		eps  []hnslb.Endpoint
		code uint
	}{
		"remote only":            {[]hnslb.Endpoint{remote}, types.ErrTryAgainLater},
		"local, then remote":     {[]hnslb.Endpoint{local, remote}, types.ErrInternal},
		"remote, then local":     {[]hnslb.Endpoint{remote, local}, types.ErrInternal},
		"a local endpoint alone": {[]hnslb.Endpoint{local}, types.ErrInternal},
	} {
		var te *types.Error
		if err := addressRefused(c.eps, spec, errors.New("address taken")); !errors.As(err, &te) || te.Code != c.code {
			t.Errorf("%s: %v, want code %d", what, err, c.code)
		}
	}
}

// TestCheckFailsAnEndpointOnAnotherNetwork: the attachment's endpoint must
// be on the configured network; one of its name on another network,
// attached and on the address ADD reported, is not the attachment ADD made.
func TestCheckFailsAnEndpointOnAnotherNetwork(t *testing.T) {
	ctx := context.Background()
	h, ns := cbr0Node(t)
	other, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "other", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := h.CreateEndpoint(ctx, other.ID, &hnslb.Endpoint{Name: "c1_cbr0", MacAddress: "0E-2A-0A-F4-01-07",
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.7", PrefixLength: 24}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	if err := cmdCheck(ctx, sessionFor(t, h, checkOf7(ns.ID), "c1", ns.ID)); err == nil {
		t.Error("CHECK passed an endpoint on another network than cbr0")
	}
}

// TestDelWithoutIPAMLeavesALegacyNamedEndpoint: earlier hnscni releases,
// which named endpoints "<containerID>_<ifname>", always had IPAM; without
// IPAM such a name is not hnscni's, and DEL of the attachment leaves the
// endpoint so named, attached, on the configured network.
func TestDelWithoutIPAMLeavesALegacyNamedEndpoint(t *testing.T) {
	ctx := context.Background()
	h, ns := cbr0Node(t)
	ep := attachedEndpoint(t, h, ns, "c1_eth0", "10.244.1.7")
	stdin := []byte(`{"cniVersion": "1.0.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0"}`)
	if err := cmdDel(ctx, sessionFor(t, h, stdin, "c1", ns.ID)); err != nil {
		t.Fatalf("DEL: %v", err)
	}
	if kept, err := h.GetEndpointByID(ctx, ep.ID); err != nil || kept.HostComputeNamespace == "" {
		t.Errorf("c1_eth0 after DEL: %+v, %v; want it kept, attached", kept, err)
	}
}

// olderHNS is HNS reporting version v.
type olderHNS struct {
	hnslb.Client
	v hnslb.Version
}

func (o olderHNS) Version(context.Context) (hnslb.Version, error) { return o.v, nil }

// TestLoopbackDSRIsLeftOutWhereHNSLacksIt: loopbackDSR puts the pod's own
// address as an OutBoundNAT destination on its endpoint only where HNS
// supports DSR (9.3 to 9.x, 10.2 and later); an older HNS would refuse the
// policy, so the pod is wired without it.
func TestLoopbackDSRIsLeftOutWhereHNSLacksIt(t *testing.T) {
	scriptIPAM(t, "one-ipam", `echo '{"cniVersion": "1.1.0", "ips": [{"address": "10.244.1.5/24", "gateway": "10.244.1.1"}]}'`+"\n")
	stdin := []byte(`{"cniVersion": "1.1.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0", "loopbackDSR": true, "ipam": {"type": "one-ipam"}}`)
	for _, c := range []struct {
		v   hnslb.Version
		dsr bool
	}{{hnslb.Version{Major: 9, Minor: 1}, false}, {hnslb.Version{Major: 10, Minor: 2}, true}} {
		ctx := context.Background()
		h, ns := cbr0Node(t)
		var undo undoStack
		if _, err := sessionFor(t, olderHNS{h, c.v}, stdin, "c1", ns.ID).add(ctx, ns.ID, &undo); err != nil {
			t.Fatalf("ADD on HNS %s: %v", c.v, err)
		}
		ep, err := h.GetEndpointByName(ctx, "c1_cbr0")
		if err != nil {
			t.Fatal(err)
		}
		dsr := slices.ContainsFunc(ep.Policies, func(p hnslb.EndpointPolicy) bool { return natDestinationsContain(p, []string{"10.244.1.5"}) })
		if dsr != c.dsr {
			t.Errorf("HNS %s: loopback DSR policy %v, want %v", c.v, dsr, c.dsr)
		}
	}
}
