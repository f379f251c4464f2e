package cni

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// attachHangs is HNS whose namespace attach hangs as a wedged hcn call
// does: it ignores its context until released, then is made.
type attachHangs struct {
	hnslb.Client
	entered, release chan struct{}
}

func (a attachHangs) AddNamespaceEndpoint(_ context.Context, ns, ep string) error {
	close(a.entered)
	<-a.release
	return a.Client.AddNamespaceEndpoint(context.Background(), ns, ep)
}

// TestHungHNSCallGetsTryAgainLater: ADD's last HNS call (the attach) hangs
// past the deadlines. The plugin answers code 11 instead of waiting for the
// runtime to kill it; when the hung call then succeeds, the ADD answers
// nothing more and leaves no endpoint behind, since the runtime took the
// pod as not wired.
func TestHungHNSCallGetsTryAgainLater(t *testing.T) {
	defer func(w, u time.Duration) { workTimeout, undoTimeout = w, u }(workTimeout, undoTimeout)
	workTimeout, undoTimeout = 100*time.Millisecond, 100*time.Millisecond
	ctx := context.Background()
	h := sim.New(sim.Options{})
	network, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := h.CreateNamespace(ctx, &hnslb.Namespace{})
	if err != nil {
		t.Fatal(err)
	}
	s, hung := hungAttachADD(t, h, ns.ID, []byte(`{"cniVersion": "1.0.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0"}`))

	// What the plugin prints is its answer: capture it.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	printed := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); printed <- b }()
	restore := func() []byte {
		os.Stdout = stdout
		w.Close()
		return <-printed
	}

	err = s.run(cmdAdd)
	var te *types.Error
	if !errors.As(err, &te) || te.Code != types.ErrTryAgainLater {
		restore()
		t.Fatalf("ADD with a hung attach: %v; want code %d (try again later)", err, types.ErrTryAgainLater)
	}
	<-hung.entered
	close(hung.release)
	late := <-s.finished
	if out := restore(); len(out) != 0 {
		t.Errorf("the ADD printed a result after answering try again later: %s", out)
	}
	if !errors.Is(late, errGaveUp) {
		t.Errorf("the late ADD returned %v; want errGaveUp", late)
	}
	eps, err := h.ListEndpointsOfNetwork(ctx, network.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 0 {
		t.Errorf("%d endpoint(s) left after the late ADD: %+v", len(eps), eps)
	}
}

// TestCommandAnswersItselfInTime: a command that returns before the
// deadlines gives its own answer.
func TestCommandAnswersItselfInTime(t *testing.T) {
	want := errors.New("refused")
	s := &session{}
	if err := s.run(func(context.Context, *session) error { return want }); err != want {
		t.Errorf("run returned %v; want the command's own %v", err, want)
	}
}

// TestHungIPAMIsStoppedAtTheDeadline: the IPAM plugin hangs (one whose
// datastore the node cannot reach). The command's deadline bounds IPAM as
// it bounds HNS: the plugin is stopped, and the answer names IPAM, not a
// wedged HNS: code 11 (STATUS: 50, not ready).
func TestHungIPAMIsStoppedAtTheDeadline(t *testing.T) {
	defer func(w, u time.Duration) { workTimeout, undoTimeout = w, u }(workTimeout, undoTimeout)
	// The undo's time is far beyond the work's, so only the work deadline
	// can end the hung IPAM before run gives up waiting.
	workTimeout, undoTimeout = 200*time.Millisecond, 10*time.Second
	scriptIPAM(t, "hang-ipam", "exec sleep 600\n")
	h, ns := cbr0Node(t)
	stdin := []byte(`{"cniVersion": "1.1.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0", "ipam": {"type": "hang-ipam"}}`)
	for _, c := range []struct {
		name  string
		parse func([]byte) (*NetConf, error)
		f     func(context.Context, *session) error
		code  uint // STATUS's code for "cannot service ADD" is 50
	}{
		{"ADD", parseConfig, cmdAdd, types.ErrTryAgainLater},
		{"DEL", parseReleaseConfig, cmdDel, types.ErrTryAgainLater},
		{"STATUS", parseConfig, cmdStatus, types.ErrPluginNotAvailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			conf, err := c.parse(stdin)
			if err != nil {
				t.Fatal(err)
			}
			s := &session{conf: conf, hns: hnsClient{h},
				args: &skel.CmdArgs{ContainerID: "c1", Netns: ns.ID, IfName: "eth0", StdinData: stdin}}
			err = s.run(c.f)
			var te *types.Error
			if !errors.As(err, &te) || te.Code != c.code || !strings.Contains(te.Msg, "IPAM plugin") {
				t.Errorf("%s with a hung IPAM plugin: %v; want code %d naming the IPAM plugin", c.name, err, c.code)
			}
		})
	}
}

// TestGivenUpAddReleasesItsAddress: an ADD whose HNS call hangs past the
// deadlines answers code 11 with its address released. containerd's DEL
// after a failed ADD fails too while HNS hangs, and containerd then forgets
// the sandbox (internal/cri/server/sandbox_run.go drops a teardown error
// when the ADD gave no result), so an address kept for that DEL would stay
// taken in IPAM's store for good, one per retried sandbox.
func TestGivenUpAddReleasesItsAddress(t *testing.T) {
	defer func(w, u time.Duration) { workTimeout, undoTimeout = w, u }(workTimeout, undoTimeout)
	workTimeout, undoTimeout = 100*time.Millisecond, 100*time.Millisecond
	held := fileIPAM(t)
	h, ns := cbr0Node(t)
	s, hung := hungAttachADD(t, h, ns.ID, fileIPAMConf)
	err := s.run(cmdAdd)
	var te *types.Error
	if !errors.As(err, &te) || te.Code != types.ErrTryAgainLater {
		t.Errorf("ADD with a hung attach: %v; want code %d", err, types.ErrTryAgainLater)
	}
	if _, err := os.Stat(held); !os.IsNotExist(err) {
		t.Errorf("the ADD answered with its address still held (%v)", err)
	}
	close(hung.release)
	<-s.finished
}

// fileIPAM puts on CNI_PATH an IPAM plugin, file-ipam, that hands out
// 10.244.1.5/24 and holds it while the file it returns exists.
func fileIPAM(t *testing.T) (held string) {
	t.Helper()
	held = filepath.Join(t.TempDir(), "held")
	scriptIPAM(t, "file-ipam", "case \"$CNI_COMMAND\" in\n"+
		"ADD) touch "+held+"; echo '{\"cniVersion\": \"1.1.0\", \"ips\": [{\"address\": \"10.244.1.5/24\", \"gateway\": \"10.244.1.1\"}]}';;\n"+
		"DEL) rm -f "+held+";;\nesac\n")
	return held
}

// fileIPAMConf is an l2bridge configuration on cbr0 (cbr0Node) with fileIPAM.
var fileIPAMConf = []byte(`{"cniVersion": "1.1.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0", "ipam": {"type": "file-ipam"}}`)

// attachRefused is HNS that refuses every namespace attach and notes, at
// each endpoint delete, whether IPAM still held the pod's address.
type attachRefused struct {
	hnslb.Client
	held         string
	heldAtDelete *[]bool
}

func (attachRefused) AddNamespaceEndpoint(context.Context, string, string) error {
	return &hnslb.Error{Code: 0x57, Message: "The parameter is incorrect."}
}

func (a attachRefused) DeleteEndpoint(ctx context.Context, id string) error {
	_, err := os.Stat(a.held)
	*a.heldAtDelete = append(*a.heldAtDelete, err == nil)
	return a.Client.DeleteEndpoint(ctx, id)
}

// TestFailedAddReleasesItsAddressOnlyOnceItsEndpointIsGone: a failed ADD
// undoes what it made in reverse order: the endpoint goes first, and the
// address IPAM gave it is released after, so no other pod is handed an
// address an endpoint still holds.
func TestFailedAddReleasesItsAddressOnlyOnceItsEndpointIsGone(t *testing.T) {
	held := fileIPAM(t)
	h, ns := cbr0Node(t)
	var heldAtDelete []bool
	if err := sessionFor(t, attachRefused{h, held, &heldAtDelete}, fileIPAMConf, "c1", ns.ID).run(cmdAdd); err == nil {
		t.Fatal("ADD with the attach refused succeeded")
	}
	if !slices.Equal(heldAtDelete, []bool{true}) {
		t.Errorf("address held at each endpoint delete: %v, want one delete with the address still held", heldAtDelete)
	}
	if _, err := os.Stat(held); !os.IsNotExist(err) {
		t.Errorf("the failed ADD left its address held (%v)", err)
	}
}

// cbr0Node is an in-process HNS with the l2bridge network cbr0
// (10.244.1.0/24) and one namespace.
func cbr0Node(t *testing.T) (*sim.HNS, *hnslb.Namespace) {
	t.Helper()
	h := sim.New(sim.Options{})
	return h, cbr0On(t, h)
}

// cbr0On makes the l2bridge network cbr0 (10.244.1.0/24) and a pod's
// namespace on h, and returns the namespace.
func cbr0On(t *testing.T, h *sim.HNS) *hnslb.Namespace {
	t.Helper()
	ctx := context.Background()
	if _, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}}); err != nil {
		t.Fatal(err)
	}
	ns, err := h.CreateNamespace(ctx, &hnslb.Namespace{})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// scriptIPAM puts an IPAM plugin, a shell script of body, alone on CNI_PATH.
func scriptIPAM(t *testing.T, name, body string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CNI_PATH", dir)
}

// hungAttachADD is an ADD of container c1 into namespace nsID with the
// configuration stdin, on HNS h whose namespace attach hangs.
func hungAttachADD(t *testing.T, h hnslb.Client, nsID string, stdin []byte) (*session, attachHangs) {
	t.Helper()
	conf, err := parseConfig(stdin)
	if err != nil {
		t.Fatal(err)
	}
	hung := attachHangs{Client: h, entered: make(chan struct{}), release: make(chan struct{})}
	return &session{conf: conf, hns: hnsClient{hung},
		args: &skel.CmdArgs{ContainerID: "c1", Netns: nsID, IfName: "eth0", StdinData: stdin}}, hung
}

// ctxBound is HNS whose endpoint lookup hangs until the caller's context
// ends, as a call made through a client that honours it does.
type ctxBound struct{ hnslb.Client }

func (ctxBound) GetEndpointByName(ctx context.Context, _ string) (*hnslb.Endpoint, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestHNSCallStoppedByTheDeadlineIsTryAgainLater: an HNS call the
// command's deadline stops (it answers context.DeadlineExceeded) fails the
// command with code 11, as HNS unavailable does, so the runtime retries
// the DEL instead of taking it for the plugin's own failure.
func TestHNSCallStoppedByTheDeadlineIsTryAgainLater(t *testing.T) {
	defer func(w, u time.Duration) { workTimeout, undoTimeout = w, u }(workTimeout, undoTimeout)
	// run waits for the command, which the work deadline ends.
	workTimeout, undoTimeout = 100*time.Millisecond, time.Hour
	h, ns := cbr0Node(t)
	stdin := []byte(`{"cniVersion": "1.0.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0"}`)
	var te *types.Error
	if err := sessionFor(t, ctxBound{h}, stdin, "c1", ns.ID).run(cmdDel); !errors.As(err, &te) || te.Code != types.ErrTryAgainLater {
		t.Errorf("DEL whose endpoint lookup the deadline stopped: %v, want code %d", err, types.ErrTryAgainLater)
	}
}
