package cni_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Hyper-V isolated pods (containerd's runhcs-wcow-hypervisor handler) are
// wired as process-isolated ones: containerd makes the pod's namespace (no
// type given) and runs ADD with its GUID before the sandbox exists; then
// hcsshim's shim, creating the pod's utility VM, reads once the endpoints
// the namespace holds and hands each endpoint's document to the VM as a NIC
// with the endpoint's MAC. Nothing reads the namespace again later. At stop
// the shim removes the NICs, containerd runs DEL (with an empty CNI_NETNS if
// the namespace is already gone) and removes the namespace. docs/cni.md,
// "Hyper-V isolated pods", has the sources.

// namespaceVariants are the namespace types a pod's namespace can have:
// containerd's (created with no type, HNS's default) and each type hcn
// names (a Guest one is the retired runhcs.exe flow's).
var namespaceVariants = []struct {
	name string
	ns   hnslb.Namespace
}{
	{"containerd-no-type", hnslb.Namespace{}},
	{"HostDefault", hnslb.Namespace{Type: hnslb.NamespaceTypeHostDefault}},
	{"Guest", hnslb.Namespace{Type: hnslb.NamespaceTypeGuest}},
	{"GuestDefault", hnslb.Namespace{Type: hnslb.NamespaceTypeGuestDefault}},
}

// TestHyperVIsolatedPodLifecycle: for each namespace type, ADD through
// libcni leaves the pod's endpoint attached, complete, in the namespace
// when ADD returns, which is all the utility VM ever reads; DEL after the
// VM stopped removes it and releases the address, with the namespace still
// there or already removed (CNI_NETNS empty).
func TestHyperVIsolatedPodLifecycle(t *testing.T) {
	forEachEcho(t, hyperVPodLifecycle)
}

func hyperVPodLifecycle(t *testing.T, nodeArgs ...string) {
	n1 := startNode(t, "n1", append([]string{"--node-ip", "192.168.66.1",
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.66.0/24"}, nodeArgs...)...)
	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.66.0/24", socket: n1.socket, dataDir: t.TempDir()}
	rt := newRuntime(t, conf)
	ctx := context.Background()
	for _, v := range namespaceVariants {
		t.Run(v.name, func(t *testing.T) {
			for _, nsGoneFirst := range []bool{false, true} {
				ns, err := n1.client.CreateNamespace(ctx, &v.ns)
				if err != nil {
					t.Fatal(err)
				}
				p := pod{id: "hv-" + strings.ToLower(v.name), netns: ns.ID}
				if nsGoneFirst {
					p.id += "-nsgone"
				}
				res := rt.add(t, p)

				nics := utilityVMNICs(t, n1, ns.ID)
				if len(nics) != 1 || nics[0].Name != p.endpointName("cbr0") {
					t.Fatalf("%s: the utility VM would get NICs %v, want only %s", p.id, endpointNames(nics), p.endpointName("cbr0"))
				}
				assertNICAsResult(t, p.id, nics[0], res)

				// The VM stopped (HNS unchanged), then containerd's DEL.
				if nsGoneFirst {
					if err := n1.client.DeleteNamespace(ctx, ns.ID); err != nil {
						t.Fatal(err)
					}
					p.netns = ""
				}
				rt.del(t, p)
				s := n1.dump(t)
				if endpointByName(s, nics[0].Name) != nil {
					t.Errorf("%s: endpoint left after DEL", p.id)
				}
				if got := allocated(t, conf.dataDir); len(got) != 0 {
					t.Errorf("%s: host-local holds %v after DEL", p.id, got)
				}
				if !nsGoneFirst {
					if got := namespaceEndpoints(t, namespaceByID(s, ns.ID)); len(got) != 0 {
						t.Errorf("%s: namespace still holds %v after DEL", p.id, got)
					}
					if err := n1.client.DeleteNamespace(ctx, ns.ID); err != nil {
						t.Errorf("%s: removing the namespace after DEL: %v", p.id, err)
					}
				}
			}
		})
	}
}

// utilityVMNICs reads the namespace as hcsshim does when it creates a pod's
// utility VM (internal/uvm/network.go, SetupNetworkNamespace): the
// namespace's endpoint resources, then each endpoint by ID.
func utilityVMNICs(t *testing.T, n *simNode, nsID string) []*hnslb.Endpoint {
	t.Helper()
	ctx := context.Background()
	ns, err := n.client.GetNamespaceByID(ctx, nsID)
	if err != nil {
		t.Fatal(err)
	}
	var eps []*hnslb.Endpoint
	for _, id := range namespaceEndpoints(t, ns) {
		ep, err := n.client.GetEndpointByID(ctx, id)
		if err != nil {
			t.Fatalf("the namespace's endpoint %s: %v", id, err)
		}
		eps = append(eps, ep)
	}
	return eps
}

// assertNICAsResult checks that the endpoint the VM gets carries what the
// runtime was told: the guest configures its NIC from the endpoint's
// document (MAC, address, default route, DNS), not from the CNI result.
func assertNICAsResult(t *testing.T, id string, ep *hnslb.Endpoint, res *current.Result) {
	t.Helper()
	if len(res.Interfaces) != 1 || len(res.IPs) != 1 || len(res.Routes) != 1 {
		t.Fatalf("%s: result %+v", id, res)
	}
	mac, err := net.ParseMAC(strings.ReplaceAll(ep.MacAddress, "-", ":"))
	if err != nil || mac.String() != res.Interfaces[0].Mac {
		t.Errorf("%s: endpoint MAC %q, result %q", id, ep.MacAddress, res.Interfaces[0].Mac)
	}
	if ep.IP() != res.IPs[0].Address.IP.String() {
		t.Errorf("%s: endpoint address %s, result %s", id, ep.IP(), res.IPs[0].Address.IP)
	}
	gw := res.IPs[0].Gateway.String()
	if !slices.ContainsFunc(ep.Routes, func(r hnslb.Route) bool { return r.DestinationPrefix == "0.0.0.0/0" && r.NextHop == gw }) {
		t.Errorf("%s: endpoint routes %+v, want a default route via the result's gateway %s", id, ep.Routes, gw)
	}
	if !slices.Equal(ep.Dns.ServerList, res.DNS.Nameservers) || len(ep.Dns.ServerList) == 0 {
		t.Errorf("%s: endpoint DNS servers %v, result %v", id, ep.Dns.ServerList, res.DNS.Nameservers)
	}
}

func endpointNames(eps []*hnslb.Endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, e.Name)
	}
	return out
}
