package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// HRESULTs the bridge answers with besides HNS's own codes.
const (
	hrFail        uint32 = 0x80004005 // E_FAIL: an error without an HNS code
	hrHandle      uint32 = 0x80070006 // E_HANDLE: a handle the bridge never gave out
	hrUnavailable uint32 = 0x800706ba // HRESULT_FROM_WIN32(RPC_S_SERVER_UNAVAILABLE)
)

// DownCodes are the Win32 codes modelled for a call to an HNS that is not
// running, which real HNS answers is not known (docs/simulator.md, "HNS
// down"): RPC_S_SERVER_UNAVAILABLE (the default), and RPC_S_UNKNOWN_IF, which
// kube-proxy 1.37's winkernel reads as "HNS is not running" (its interface
// not registered yet).
func DownCodes() []hnslb.ErrorCode { return []hnslb.ErrorCode{0x6ba, 0x6b5} }

// Bridge limits: a frame field, a request's read, the objects an enumerate
// leaves for the opens that follow it.
const (
	maxBridgeField     = 64 << 20
	bridgeReadTimeout  = 30 * time.Second
	maxBridgeEnumerate = 1 << 16
)

// Bridge serves HNS's client API, the functions hcsshim's hcn package calls
// in computenetwork.dll (Hcn*) and vmcompute.dll (HNSCall), over loopback
// TCP, for the bridge DLLs in hack/wine that stand in for them under Wine.
// Each call is one logical hnslb.Client call on c: an enumerate is a list
// (a filtered one is a get), a create, modify or delete is the matching
// write, so c counts and faults calls exactly as when the Linux binaries
// reach it through the unix socket. The opens, queries and closes around
// them are served from what that call returned or from snapshot (HNS's
// stored objects), and counted only in Calls. docs/windows-testing.md
// describes the protocol.
type Bridge struct {
	c        hnslb.Client
	snapshot func() *hnslb.Snapshot
	kinds    map[string]*bridgeKind // by function name

	mu      sync.Mutex
	next    uint64
	handles map[uint64]*bridgeHandle
	// enumerated holds each object an enumerate returned, by kind and
	// lower-case ID, for the open and query hcn makes next.
	enumerated map[string]json.RawMessage
	calls      map[string]int
	// down are the HRESULTs "HNS down" is answered with, in turn; downs
	// counts those answers.
	down  []uint32
	downs int
}

// bridgeHandle is an open object: its kind, ID and, once a call returned
// it, its document.
type bridgeHandle struct {
	kind *bridgeKind
	id   string
	doc  json.RawMessage
}

// NewBridge serves c; snapshot returns HNS's stored objects without
// counting a call.
func NewBridge(c hnslb.Client, snapshot func() *hnslb.Snapshot) *Bridge {
	b := &Bridge{
		c: c, snapshot: snapshot, kinds: map[string]*bridgeKind{},
		handles: map[uint64]*bridgeHandle{}, enumerated: map[string]json.RawMessage{}, calls: map[string]int{},
		down: []uint32{hrUnavailable},
	}
	for _, k := range bridgeKinds(c) {
		for _, fn := range []string{
			"HcnEnumerate" + k.plural, "HcnOpen" + k.name, "HcnQuery" + k.name + "Properties",
			"HcnCreate" + k.name, "HcnModify" + k.name, "HcnDelete" + k.name, "HcnClose" + k.name,
		} {
			b.kinds[fn] = k
		}
	}
	return b
}

// AnswerDownWith makes the bridge answer each call HNS refuses as down
// with the next of codes (DownCodes), in turn, so one run meets each.
func (b *Bridge) AnswerDownWith(codes ...hnslb.ErrorCode) error {
	if len(codes) == 0 {
		return errors.New("no code for HNS down")
	}
	down := make([]uint32, 0, len(codes))
	for _, c := range codes {
		if !slices.Contains(DownCodes(), c) {
			return fmt.Errorf("HNS-down code 0x%x: want one of %v", uint32(c), DownCodes())
		}
		down = append(down, hresultOf(c))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.down = down
	return nil
}

// Calls are the raw calls served, by function name (HcnOpenLoadBalancer,
// HNSCall, ...).
func (b *Bridge) Calls() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.calls)
}

// Serve answers connections on l, one call each, until ctx ends.
func (b *Bridge) Serve(ctx context.Context, l net.Listener) error {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go b.serveConn(ctx, conn)
	}
}

func (b *Bridge) serveConn(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(bridgeReadTimeout))
	req, err := readNetstrings(bufio.NewReader(conn), bridgeRequestFields, maxBridgeField)
	if err != nil {
		return // not a bridge client; nothing to answer
	}
	r := b.Call(ctx, req[0], req[1], req[2])
	_ = writeNetstrings(conn, fmt.Sprintf("%08x", r.HRESULT), r.Output, r.Result)
}

// BridgeReply is one answer: the HRESULT, the output (IDs, properties, a
// handle, HNSCall's response) and the result buffer (HNS's error document).
type BridgeReply struct {
	HRESULT        uint32
	Output, Result string
}

// Call serves one function call; target is a GUID, a handle or, for
// HNSCall, "METHOD path"; doc is the query, settings or request.
func (b *Bridge) Call(ctx context.Context, fn, target, doc string) BridgeReply {
	b.mu.Lock()
	b.calls[fn]++
	b.mu.Unlock()
	r := b.call(ctx, fn, target, doc)
	if r.HRESULT == hrUnavailable {
		b.mu.Lock()
		r.HRESULT = b.down[b.downs%len(b.down)]
		b.downs++
		b.mu.Unlock()
	}
	return r
}

func (b *Bridge) call(ctx context.Context, fn, target, doc string) BridgeReply {
	if fn == "HNSCall" {
		return b.hnsCall(ctx, target)
	}
	k := b.kinds[fn]
	if k == nil {
		return failure(hnslb.NewError(fn, hnslb.CodeNotImplemented, "%s is not served by the bridge", fn))
	}
	switch verb(fn) {
	case "Enumerate":
		return b.enumerate(ctx, k, doc)
	case "Open":
		return b.open(k, target)
	case "Query":
		return b.query(k, target)
	case "Create":
		return b.create(ctx, k, target, doc)
	case "Modify":
		return b.modify(ctx, k, target, doc)
	case "Delete":
		return result(k.remove(ctx, target))
	}
	return b.close(k, target)
}

// verb is Enumerate, Open, Query, Create, Modify, Delete or Close.
func verb(fn string) string {
	for _, v := range []string{"Enumerate", "Open", "Query", "Create", "Modify", "Delete", "Close"} {
		if strings.HasPrefix(fn, "Hcn"+v) {
			return v
		}
	}
	return ""
}

// enumerate serves a (filtered) listing and keeps the objects for the
// opens that follow.
func (b *Bridge) enumerate(ctx context.Context, k *bridgeKind, query string) BridgeReply {
	var q struct{ Filter string }
	if query != "" {
		if err := json.Unmarshal([]byte(query), &q); err != nil {
			return failure(hnslb.NewError("HcnEnumerate"+k.plural, hnslb.CodeInvalidParameter, "query: %v", err))
		}
	}
	objs, err := b.filtered(ctx, k, q.Filter)
	if err != nil {
		return failure(err)
	}
	ids := make([]string, 0, len(objs))
	b.mu.Lock()
	if len(b.enumerated)+len(objs) > maxBridgeEnumerate {
		clear(b.enumerated) // callers that never opened what they listed
	}
	for _, o := range objs {
		id, err := idOf(o)
		if err != nil {
			b.mu.Unlock()
			return failure(err)
		}
		ids = append(ids, id)
		b.enumerated[k.name+"/"+strings.ToLower(id)] = o
	}
	b.mu.Unlock()
	out, err := json.Marshal(ids)
	if err != nil {
		return failure(err)
	}
	return BridgeReply{Output: string(out)}
}

func (b *Bridge) filtered(ctx context.Context, k *bridgeKind, filter string) ([]json.RawMessage, error) {
	if filter == "" {
		return k.list(ctx)
	}
	var f map[string]string
	if err := json.Unmarshal([]byte(filter), &f); err != nil {
		return nil, hnslb.NewError("HcnEnumerate"+k.plural, hnslb.CodeInvalidParameter, "filter: %v", err)
	}
	for key, value := range f {
		if by := k.filters[key]; by != nil && len(f) == 1 {
			return by(ctx, value)
		}
	}
	return nil, hnslb.NewError("HcnEnumerate"+k.plural, hnslb.CodeNotImplemented, "filter %s is not served by the bridge", filter)
}

// open hands out a handle. It does not look the object up: the call that
// uses the handle (query, modify) reports an object that is not there.
func (b *Bridge) open(k *bridgeKind, id string) BridgeReply {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := k.name + "/" + strings.ToLower(id)
	h := &bridgeHandle{kind: k, id: id, doc: b.enumerated[key]}
	delete(b.enumerated, key)
	return BridgeReply{Output: b.handleLocked(h)}
}

func (b *Bridge) handleLocked(h *bridgeHandle) string {
	b.next++
	b.handles[b.next] = h
	return strconv.FormatUint(b.next, 10)
}

func (b *Bridge) handle(k *bridgeKind, target string) (*bridgeHandle, bool) {
	n, err := strconv.ParseUint(target, 10, 64)
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.handles[n]
	return h, err == nil && h != nil && (k == nil || h.kind == k)
}

// query returns the object the handle's call returned, or HNS's stored one.
func (b *Bridge) query(k *bridgeKind, target string) BridgeReply {
	h, ok := b.handle(k, target)
	if !ok {
		return BridgeReply{HRESULT: hrHandle}
	}
	if h.doc != nil {
		return BridgeReply{Output: string(h.doc)}
	}
	doc, ok := k.stored(b.snapshot(), h.id)
	if !ok {
		return failure(hnslb.NewError("HcnQuery"+k.name+"Properties", hnslb.CodeNotFound, "Element not found. %s %s", k.name, h.id))
	}
	return BridgeReply{Output: string(doc)}
}

// create makes the object; an endpoint's target is its network's handle.
func (b *Bridge) create(ctx context.Context, k *bridgeKind, target, doc string) BridgeReply {
	parent := ""
	if k.name == "Endpoint" {
		h, ok := b.handle(nil, target)
		if !ok || h.kind.name != "Network" {
			return BridgeReply{HRESULT: hrHandle}
		}
		parent = h.id
	}
	out, err := k.create(ctx, parent, []byte(doc))
	if err != nil {
		return failure(err)
	}
	id, err := idOf(out)
	if err != nil {
		return failure(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return BridgeReply{Output: b.handleLocked(&bridgeHandle{kind: k, id: id, doc: out})}
}

func (b *Bridge) modify(ctx context.Context, k *bridgeKind, target, doc string) BridgeReply {
	h, ok := b.handle(k, target)
	if !ok {
		return BridgeReply{HRESULT: hrHandle}
	}
	if k.modify == nil {
		return failure(hnslb.NewError("HcnModify"+k.name, hnslb.CodeNotImplemented, "modifying a %s is not served by the bridge", k.name))
	}
	out, err := k.modify(ctx, h.id, []byte(doc))
	if err != nil {
		return failure(err)
	}
	b.mu.Lock()
	h.doc = out // nil: the query that follows reads the stored object
	b.mu.Unlock()
	return BridgeReply{}
}

func (b *Bridge) close(k *bridgeKind, target string) BridgeReply {
	n, _ := strconv.ParseUint(target, 10, 64)
	b.mu.Lock()
	defer b.mu.Unlock()
	if h := b.handles[n]; h == nil || h.kind != k {
		return BridgeReply{HRESULT: hrHandle}
	}
	delete(b.handles, n)
	return BridgeReply{}
}

// hnsCall serves vmcompute's HNSCall; hcn uses it only for the version.
func (b *Bridge) hnsCall(ctx context.Context, target string) BridgeReply {
	type response struct {
		Success bool
		Error   string          `json:",omitempty"`
		Output  json.RawMessage `json:",omitempty"`
	}
	r := response{Error: fmt.Sprintf("%s is not served by the bridge", target)}
	if target == "GET /globals/version" {
		v, err := b.c.Version(ctx)
		if hnslb.IsUnavailable(err) {
			return failure(err)
		}
		if err != nil {
			r.Error = err.Error()
		} else {
			out, _ := json.Marshal(v)
			r = response{Success: true, Output: out}
		}
	}
	// HNS reports its own failures inside a successful HNSCall.
	body, err := json.Marshal(r)
	if err != nil {
		return failure(err)
	}
	return BridgeReply{Output: string(body)}
}

func result(err error) BridgeReply {
	if err != nil {
		return failure(err)
	}
	return BridgeReply{}
}

// failure is err as HNS returns it. HNS down is an RPC failure with no
// document; any other error is HNS's HRESULT and its error document
// {"Success":false,"Error":...,"ErrorCode":<HRESULT>}, the shape kube-proxy
// logs show (kubernetes/kubernetes#100384, microsoft/hcsshim#1043).
func failure(err error) BridgeReply {
	code, ok := hnslb.CodeOf(err)
	if ok && code == hnslb.CodeRPCServerUnavailable {
		return BridgeReply{HRESULT: hrUnavailable}
	}
	hr := hrFail
	if ok {
		hr = hresultOf(code)
	}
	msg := err.Error()
	var he *hnslb.Error
	if errors.As(err, &he) && he.Message != "" {
		msg = he.Message
	}
	doc, _ := json.Marshal(struct {
		Success   bool
		Error     string
		ErrorCode uint32
	}{false, msg, hr})
	return BridgeReply{HRESULT: hr, Result: string(doc)}
}

// hresultOf is the HRESULT HNS returns for code: Win32 codes as
// HRESULT_FROM_WIN32, HNS's own 0x803bxxxx and E_* codes as they are.
func hresultOf(code hnslb.ErrorCode) uint32 {
	if c := uint32(code); c != 0 && c <= 0xffff {
		return 0x80070000 | c
	}
	if code == 0 {
		return hrFail
	}
	return uint32(code)
}
