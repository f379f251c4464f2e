package cni_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
	"github.com/hnsproxy/hnsproxy/sim/remote/remotetest"
)

// heldCall is HNS whose first call of one operation hangs as a wedged hcn
// call does, ignoring its caller: before HNS applies it, or (afterApply)
// applied with the reply held. finished is closed once the call has
// returned, so a test knows a late call is done.
type heldCall struct {
	hnslb.Client
	op         string
	afterApply bool

	once                       sync.Once
	entered, release, finished chan struct{}
}

func newHeldCall(c hnslb.Client, op string, afterApply bool) *heldCall {
	return &heldCall{Client: c, op: op, afterApply: afterApply,
		entered: make(chan struct{}), release: make(chan struct{}), finished: make(chan struct{})}
}

// do runs call, held if it is the first call of the held operation.
func (h *heldCall) do(op string, call func() error) error {
	held := false
	if op == h.op {
		h.once.Do(func() { held = true })
	}
	if !held {
		return call()
	}
	defer close(h.finished)
	close(h.entered)
	if h.afterApply {
		err := call()
		<-h.release
		return err
	}
	<-h.release
	return call()
}

func (h *heldCall) CreateNetwork(_ context.Context, n *hnslb.Network) (out *hnslb.Network, err error) {
	err = h.do("CreateNetwork", func() error { out, err = h.Client.CreateNetwork(context.Background(), n); return err })
	return out, err
}

func (h *heldCall) CreateEndpoint(_ context.Context, network string, e *hnslb.Endpoint) (out *hnslb.Endpoint, err error) {
	err = h.do("CreateEndpoint", func() error { out, err = h.Client.CreateEndpoint(context.Background(), network, e); return err })
	return out, err
}

func (h *heldCall) AddNamespaceEndpoint(_ context.Context, ns, ep string) error {
	return h.do("AddNamespaceEndpoint", func() error { return h.Client.AddNamespaceEndpoint(context.Background(), ns, ep) })
}

// heldNode is an in-process HNS, with the l2bridge network cbr0 unless
// noNetwork, served to hnscni through heldCall; and a runtime for it.
func heldNode(t *testing.T, op string, afterApply, noNetwork bool) (*sim.HNS, *heldCall, netConf, *runtime) {
	t.Helper()
	h := sim.New(sim.Options{})
	if !noNetwork {
		if _, err := h.CreateNetwork(context.Background(), &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
			Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.12.0/24"}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	held := newHeldCall(h, op, afterApply)
	socket := remotetest.Serve(t, remote.NewServer(held, remote.Extras{}))
	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.12.0/24", socket: socket, dataDir: t.TempDir()}
	return h, held, conf, newRuntime(t, conf)
}

// heldNamespace is a new HNS namespace, as the runtime makes one per sandbox.
func heldNamespace(t *testing.T, h *sim.HNS) string {
	t.Helper()
	ns, err := h.CreateNamespace(context.Background(), &hnslb.Namespace{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.ID
}

// killAdd runs p's ADD until the held call has it, then gives up on it
// as a runtime whose ADD timed out does: libcni runs the plugin under the
// call's context, so the plugin is killed.
func killAdd(t *testing.T, rt *runtime, held *heldCall, p pod) {
	t.Helper()
	ctx, timeout := context.WithCancel(context.Background())
	added := make(chan error, 1)
	go func() {
		_, err := rt.cni.AddNetworkList(ctx, rt.list, p.rt())
		added <- err
	}()
	<-held.entered
	timeout()
	if err := <-added; err == nil {
		t.Fatal("the killed ADD succeeded")
	}
}

// TestKilledAddIsCleanedUpByDel kills the plugin, as a runtime whose ADD
// timed out does (libcni runs it under the call's context), while each of
// ADD's HNS writes hangs: before HNS applies it, or applied with the reply
// lost. The runtime's DEL then comes while the call still hangs. Once HNS
// has applied (or refused) the late call: DEL left no endpoint and no
// address, except an endpoint whose create HNS applied after the DEL,
// which nothing could have removed yet; the next ADD for the same
// container replaces it and works, and a last DEL leaves nothing.
func TestKilledAddIsCleanedUpByDel(t *testing.T) {
	for _, c := range []struct {
		name, op   string
		afterApply bool
		noNetwork  bool // the network is missing, so ADD creates it
		lateLeft   bool // the late call leaves an endpoint behind
	}{
		{name: "network create hangs", op: "CreateNetwork", noNetwork: true},
		{name: "network created, reply lost", op: "CreateNetwork", afterApply: true, noNetwork: true},
		{name: "endpoint create hangs", op: "CreateEndpoint", lateLeft: true},
		{name: "endpoint created, reply lost", op: "CreateEndpoint", afterApply: true},
		{name: "attach hangs", op: "AddNamespaceEndpoint"},
		{name: "attached, reply lost", op: "AddNamespaceEndpoint", afterApply: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, held, conf, rt := heldNode(t, c.op, c.afterApply, c.noNetwork)
			newNamespace := func() string { return heldNamespace(t, h) }
			p := pod{id: "killed", netns: newNamespace()}

			killAdd(t, rt, held, p)
			rt.del(t, p)
			close(held.release)
			<-held.finished

			s := h.Snapshot()
			local := slices.DeleteFunc(slices.Clone(s.Endpoints), func(e hnslb.Endpoint) bool { return e.IsRemote() })
			if left := len(local) > 0; left != c.lateLeft {
				t.Errorf("after DEL and the late call: endpoints %v; want one left by the late create: %v", names(s), c.lateLeft)
			}
			if got := allocated(t, conf.dataDir); len(got) != 0 {
				t.Errorf("after DEL: addresses held %v", got)
			}

			// The next ADD for the same container works and is the only one.
			p.netns = newNamespace()
			res := rt.add(t, p)
			s = h.Snapshot()
			e := endpointByName(s, p.endpointName("cbr0"))
			if got := names(s); !slices.Equal(got, []string{p.endpointName("cbr0")}) || e == nil || e.HostComputeNamespace != p.netns ||
				e.IP() != res.IPs[0].Address.IP.String() {
				t.Errorf("after the next ADD: endpoints %v (%+v); want one, attached, on %s", got, e, res.IPs[0].Address.IP)
			}
			if got := allocated(t, conf.dataDir); !slices.Equal(got, []string{res.IPs[0].Address.IP.String()}) {
				t.Errorf("after the next ADD: addresses held %v", got)
			}
			rt.del(t, p)
			if s = h.Snapshot(); len(s.Endpoints) != 0 {
				t.Errorf("after the last DEL: endpoints %v", names(s))
			}
			if got := allocated(t, conf.dataDir); len(got) != 0 {
				t.Errorf("after the last DEL: addresses held %v", got)
			}
		})
	}
}

// TestDelRemovesEveryEndpointOfTheAttachment: HNS does not keep endpoint
// names unique (hcn's GetEndpointByName answers the first endpoint a name
// query lists). A killed ADD's create that HNS applies only after the
// runtime's DEL and its next ADD of the same attachment leaves a second
// endpoint under the attachment's name, on the address DEL released. The
// next DEL removes both, so neither lingers on an address IPAM hands on.
func TestDelRemovesEveryEndpointOfTheAttachment(t *testing.T) {
	h, held, conf, rt := heldNode(t, "CreateEndpoint", false, false)
	p := pod{id: "twice", netns: heldNamespace(t, h)}
	killAdd(t, rt, held, p)
	rt.del(t, p)
	p.netns = heldNamespace(t, h)
	rt.add(t, p)
	close(held.release) // HNS applies the killed ADD's create only now
	<-held.finished
	if got := names(h.Snapshot()); !slices.Equal(got, []string{p.endpointName("cbr0"), p.endpointName("cbr0")}) {
		t.Fatalf("endpoints %v; want two under the attachment's name", got)
	}
	rt.del(t, p)
	if got := names(h.Snapshot()); len(got) != 0 {
		t.Errorf("after DEL: endpoints %v", got)
	}
	if got := allocated(t, conf.dataDir); len(got) != 0 {
		t.Errorf("after DEL: addresses held %v", got)
	}
}
