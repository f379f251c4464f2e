package diag

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// TraceReport is what happened to one packet on this node, with HNS
// objects named by what they are.
type TraceReport struct {
	Packet  string `json:"packet"`
	Outcome string `json:"outcome"`
	// Summary says what happened in one sentence.
	Summary string `json:"summary"`
	// LoadBalancer is the row of the load balancer that matched, if one did.
	LoadBalancer *Row `json:"loadBalancer,omitempty"`
	// Backend names the pod the packet went to, when Kubernetes knows it.
	Backend string `json:"backend,omitempty"`
	// Hops are the verdict's hops with HNS IDs replaced by names.
	Hops []string `json:"hops"`
	// Notes explain a drop from what hnsproxy would program here, and
	// name the endpoints on the way whose ACLs the trace did not evaluate.
	Notes   []string    `json:"notes,omitempty"`
	Verdict vfp.Verdict `json:"verdict"`
}

// Trace follows p through this node's HNS state as VFP would. A packet from
// outside the node enters here; one for another node is handed off there.
// A packet sent from another node's pod or host is refused: load
// balancing happens at the sender's vSwitch port, so it must be traced on
// the sender's node.
func Trace(in *Inputs, p vfp.Packet) (*TraceReport, error) {
	v := newView(in)
	self := in.Config.NodeName
	src := p.Src.Addr().Unmap()
	if n := v.nodeIP[src]; n != "" && n != self {
		return nil, fmt.Errorf("source %s is node %s's address: run hnsproxy-diag on %s (load balancing happens at the sender)", src, n, n)
	}
	if pl, ok := v.pods[src]; ok && pl.Node != "" && pl.Node != self {
		return nil, fmt.Errorf("source %s is pod %s on node %s: run hnsproxy-diag on %s (load balancing happens at the sender's vSwitch port)", src, pl.Pod, pl.Node, pl.Node)
	}
	cluster, err := vfp.NewCluster(vfp.Node{Name: self, IPs: in.nodeIPs(), HNS: in.HNS, NetworkName: in.Network.Name, ExternalVIPs: v.externalVIPs()})
	if err != nil {
		return nil, err
	}
	opt := vfp.Options{Ingress: self, OtherNodes: map[netip.Addr]string{}, OtherPods: map[netip.Addr]string{}}
	for ip, n := range v.nodeIP {
		if n != self {
			opt.OtherNodes[ip] = n
		}
	}
	for ip, pl := range v.pods {
		if pl.Node != "" && pl.Node != self {
			opt.OtherPods[ip] = pl.Node
		}
	}
	verdict, err := cluster.Trace(p, opt)
	if err != nil {
		return nil, err
	}
	t := &TraceReport{Packet: p.String(), Outcome: verdict.Outcome.String(), Summary: Sentence(verdict), Verdict: verdict}
	names := v.names()
	for _, h := range verdict.Hops {
		t.Hops = append(t.Hops, names.Replace(h.String()))
	}
	if id := verdict.LoadBalancerID; id != "" {
		for _, row := range v.report().LoadBalancers {
			if row.ID == id {
				t.LoadBalancer = &row
			}
		}
	}
	if pl, ok := v.pods[verdict.Backend.Addr()]; ok && pl.Pod != "" && verdict.Outcome != vfp.Dropped {
		t.Backend = fmt.Sprintf("pod %s on %s", pl.Pod, pl.Node)
	}
	if verdict.LoadBalancerID == "" {
		t.Notes = v.explainMiss(p, src)
	}
	t.Notes = append(t.Notes, v.aclNotes(src, verdict, names)...)
	return t, nil
}

// externalVIPs are the external and ingress IPs hnsproxy would program on
// this node. vfp reads them from the VipExternalIP flag, which HNS's
// listing may not echo (vfp.Node.ExternalVIPs).
func (v *view) externalVIPs() []netip.Addr {
	var out []netip.Addr
	for k, lb := range v.state.LBs {
		if lb.Origin != intent.OriginExternalIP && lb.Origin != intent.OriginIngress {
			continue
		}
		if a, err := netip.ParseAddr(k.VIP); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// explainMiss says, for a packet no load balancer took, which Service
// frontend it was meant for and why this node has no load balancer there.
func (v *view) explainMiss(p vfp.Packet, src netip.Addr) []string {
	dst := p.Dst.Addr().Unmap()
	fam := intent.FamilyOf(dst)
	self := v.in.Config.NodeName
	keys := []intent.LBKey{{Family: fam, VIP: dst.String(), Protocol: p.Protocol, Port: p.Dst.Port()}}
	// Without a node IP of the family the node's own address of it is
	// unknown: an address nobody is known to hold may be it.
	_, isPod := v.pods[dst]
	unlisted := !v.in.Config.NodeIPs[fam].IsValid() && v.nodeIP[dst] == "" && !isPod
	if svc, _ := v.frontends.servicePort(keys[0]); svc != "" {
		unlisted = false // a Service's address, not the node's
	}
	if v.nodeIP[dst] == self || unlisted {
		keys = append(keys, intent.LBKey{Family: fam, Protocol: p.Protocol, Port: p.Dst.Port()})
	}
	var out []string
	if unlisted {
		out = append(out, fmt.Sprintf("node %s's Node lists no %s address (InternalIP or ExternalIP; kubelet --node-ip): the trace does not know %s as this node's, and hnsproxy serves no %s node ports here",
			self, fam, dst, fam))
	}
	for _, k := range keys {
		svc, role := v.frontends.servicePort(k)
		if svc == "" {
			continue
		}
		_, wanted := v.state.LBs[k]
		_, held := v.byKey[k]
		fromOutside := v.pods[src].Node != v.in.Config.NodeName && v.nodeIP[src] == "" && !v.localEndpointIP(src)
		switch {
		case wanted && !held:
			out = append(out, fmt.Sprintf("%s is the %s frontend of %s; hnsproxy would program a load balancer for it here and HNS has none (see the table: missing)", k, role, svc))
		case !wanted && k.VIP == "" && unlisted:
			out = append(out, fmt.Sprintf("%s is the %s frontend of %s: no %s node port is served here", k, role, svc, fam))
		case role == RoleClusterIP && fromOutside:
			out = append(out, fmt.Sprintf("%s is the cluster IP of %s: reachable only from pods and the host of a node, not from outside", k, svc))
		case !wanted:
			name, _, _ := strings.Cut(svc, ":")
			why := "hnsproxy would program no load balancer for it here"
			for _, n := range v.notes() {
				if strings.HasPrefix(n, name+": "+localPolicyNote(role)) {
					why = strings.TrimPrefix(n, name+": ")
				}
			}
			out = append(out, fmt.Sprintf("%s is the %s frontend of %s: %s", k, role, svc, why))
		}
	}
	return out
}

// names replaces HNS IDs in trace hops with what they are: pods by name,
// remote endpoints by address and node, load balancers by Service port and role.
func (v *view) names() *strings.Replacer {
	var pairs []string
	for _, ep := range v.endpoints {
		id := ep.ID
		ip := ep.IP()
		addr, err := netip.ParseAddr(ip)
		if err == nil {
			// As the hops print addresses, whatever form HNS answered
			// (docs/simulator.md, echo ipv6-long-form).
			ip = addr.Unmap().String()
		}
		pl := v.pods[addr.Unmap()]
		switch {
		case ep.IsRemote() && pl.Pod != "":
			pairs = append(pairs, id, "[remote endpoint "+ip+": pod "+pl.Pod+" on "+pl.Node+"]")
		case ep.IsRemote():
			pairs = append(pairs, id, "[remote endpoint "+ip+"]")
		case pl.Pod != "":
			pairs = append(pairs, id, "[pod "+pl.Pod+"]")
		case ep.Name != "":
			pairs = append(pairs, id, "[endpoint "+ep.Name+" "+ip+"]")
		default:
			pairs = append(pairs, id, "[endpoint "+ip+"]")
		}
	}
	for i := range v.in.HNS.LoadBalancers {
		lb := &v.in.HNS.LoadBalancers[i]
		if k, ok := reconciler.KeyOf(lb); ok {
			if svc, role := v.frontends.servicePort(k); svc != "" {
				pairs = append(pairs, lb.ID, "["+svc+" "+role+"]")
			}
		}
	}
	return strings.NewReplacer(pairs...)
}

// Sentence says what happened to a packet in one sentence.
func Sentence(v vfp.Verdict) string {
	var b strings.Builder
	switch v.Outcome {
	case vfp.Dropped:
		fmt.Fprintf(&b, "dropped: %s", v.DropReason)
	case vfp.DeliveredToPod:
		fmt.Fprintf(&b, "delivered to pod %s on %s", v.Backend, v.BackendNode)
	case vfp.DeliveredToHost:
		fmt.Fprintf(&b, "delivered to the host of %s (%s)", v.BackendNode, v.Backend)
	case vfp.LeftCluster:
		fmt.Fprintf(&b, "left the cluster towards %s", v.Backend)
	case vfp.HandedOff:
		fmt.Fprintf(&b, "sent to node %s for %s", v.BackendNode, v.Backend)
	default:
		b.WriteString(v.Outcome.String())
	}
	if v.LoadBalancerID != "" {
		fmt.Fprintf(&b, ", load-balanced on %s from %s", v.LBNode, v.Frontend)
	}
	if v.Outcome != vfp.Dropped {
		fmt.Fprintf(&b, "; it sees %s -> %s", v.SeenSrc, v.SeenDst)
		if v.DSR {
			b.WriteString(" (DSR: replies go straight back)")
		}
		if v.ClientIPPreserved {
			b.WriteString(", client IP preserved")
		}
	}
	return b.String()
}

// localEndpointIP says whether ip is an address of a local HNS endpoint
// here: a pod of this node, whether or not a Service selects it.
func (v *view) localEndpointIP(ip netip.Addr) bool {
	for _, ep := range v.endpoints {
		if !ep.IsRemote() && holdsAddr(ep, ip) {
			return true
		}
	}
	return false
}
