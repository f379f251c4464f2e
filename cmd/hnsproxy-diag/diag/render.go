package diag

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// maxBackendsShown caps the backends a table row lists; the rest are counted.
const maxBackendsShown = 4

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "Node %s: HNS %s, network %s (%s), node IP %s; owners %s\n",
		r.Node, r.HNSVersion, r.Network, r.NetworkType, strings.Join(r.NodeIPs, ", "), r.Ownership)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tROLE\tFRONTEND -> BACKEND PORT\tFLAGS\tOWNER\tSTATE\tBACKENDS")
	for _, row := range r.LoadBalancers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", orDash(row.Service), orDash(row.Role), row.Frontend,
			orDash(strings.Join(row.Flags, " ")), orDash(row.Owner), row.State, backendWords(row.Backends))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var why []string
	for _, row := range r.LoadBalancers {
		for _, y := range row.Why {
			why = append(why, fmt.Sprintf("%s %s %s (%s): %s", orDash(row.Service), orDash(row.Role), row.Frontend, row.State, y))
		}
	}
	for _, section := range []struct {
		title string
		lines []string
	}{{"Why", why}, {"Notes", r.Notes}} {
		if len(section.lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", section.title)
		for _, l := range section.lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	return nil
}

// backendWords is "pod@node" per backend (the IP when Kubernetes names no
// pod), marked when HNS and hnsproxy disagree, at most maxBackendsShown.
func backendWords(bs []Backend) string {
	var out []string
	for i, b := range bs {
		if i == maxBackendsShown {
			out = append(out, fmt.Sprintf("... %d in all", len(bs)))
			break
		}
		s := b.IP
		if b.Pod != "" {
			s = b.Pod + "@" + b.Node + "(" + b.IP + ")"
		}
		if b.State != "" {
			s += "[" + b.State + "]"
		}
		out = append(out, s)
	}
	return orDash(strings.Join(out, " "))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteText prints the trace for people.
func (t *TraceReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s\n=> %s\n", t.Packet, t.Summary)
	if t.Backend != "" {
		fmt.Fprintf(w, "   backend: %s\n", t.Backend)
	}
	if lb := t.LoadBalancer; lb != nil {
		fmt.Fprintf(w, "   load balancer: %s %s %s, owner %s, state %s\n", orDash(lb.Service), orDash(lb.Role), lb.Frontend, orDash(lb.Owner), lb.State)
	}
	for _, h := range t.Hops {
		fmt.Fprintf(w, "   %s\n", h)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(w, "   note: %s\n", n)
	}
	return nil
}
