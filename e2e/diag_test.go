//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy-diag/diag"
	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/internal/buildscript"
	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// outsider is a client outside the cluster (TEST-NET-2, data only).
const outsider = "198.51.100.7:40000"

// TestDiag runs the hnsproxy-diag binary with each node's hnsproxy flags
// against the demo cluster: the table and the trace verdicts of a healthy
// node, of the node where the externalTrafficPolicy Local ingress has no
// pod, and of a node whose NodePort load balancer was deleted behind
// hnsproxy's back; and it checks the tool never wrote to HNS, and that
// what it printed is what the README shows of it.
func TestDiag(t *testing.T) {
	ctx := context.Background()
	dir, err := buildscript.Tools("hnsproxy-diag")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hnsproxy-diag")
	c := framework.StartClusterForTest(t, framework.DemoCluster)
	w, err := framework.DeployDemo(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WaitProgrammed(ctx, c); err != nil {
		t.Fatal(err)
	}
	ws2022, ws2019 := c.Nodes[0], c.Nodes[1]
	writesBefore := map[*framework.Node]int{}
	for _, n := range c.Nodes {
		writesBefore[n] = quiescent(t, n).Writes()
	}
	// runExiting runs hnsproxy-diag on n, wanting the exit status status:
	// 0, or 2 where the table has rows hnsproxy would correct.
	runExiting := func(n *framework.Node, status int, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(n.Proxy.Args(), args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != status {
			t.Fatalf("hnsproxy-diag %s on %s: exit status %d, want %d: %v\n%s", strings.Join(args, " "), n.Name(), code, status, err, stderr.String())
		}
		return string(out)
	}
	run := func(n *framework.Node, args ...string) string { t.Helper(); return runExiting(n, 0, args...) }
	reportExiting := func(n *framework.Node, status int) *diag.Report {
		t.Helper()
		var r diag.Report
		if err := json.Unmarshal([]byte(runExiting(n, status, "--output=json")), &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	report := func(n *framework.Node) *diag.Report { t.Helper(); return reportExiting(n, 0) }
	// printed is what the tool printed for people, logged as it goes.
	var printed strings.Builder
	show := func(what, out string) {
		t.Helper()
		t.Logf("hnsproxy-diag %s:\n%s", what, out)
		printed.WriteString(out)
	}
	trace := func(n *framework.Node, src, dst string) *diag.TraceReport {
		t.Helper()
		var tr diag.TraceReport
		if err := json.Unmarshal([]byte(run(n, "trace", "--src="+src, "--dst="+dst, "--output=json")), &tr); err != nil {
			t.Fatal(err)
		}
		return &tr
	}

	// The healthy demo: every load balancer is hnsproxy's and as it would program it.
	r22, r19 := report(ws2022), report(ws2019)
	for _, r := range []*diag.Report{r22, r19} {
		if r.Ownership != "from the state file" || len(r.LoadBalancers) == 0 {
			t.Errorf("%s: ownership %q, %d rows", r.Node, r.Ownership, len(r.LoadBalancers))
		}
		for _, row := range r.LoadBalancers {
			if row.State != diag.StateOK || row.Owner != diag.OwnerHNSProxy {
				t.Errorf("%s: %s %s %s is %s/%s: %q", r.Node, row.Service, row.Role, row.Frontend, row.State, row.Owner, row.Why)
			}
		}
	}
	np := findRow(t, r22, "web/frontend:http", diag.RoleNodePort)
	if np.Frontend != "*:30080/TCP->8080" || !strings.Contains(strings.Join(np.Flags, " "), "client-IP-affinity") {
		t.Errorf("ws2022 web NodePort row %+v", np)
	}
	for _, p := range w.Pods["web"] {
		if !hasBackend(np, p.IP.String(), "web/"+p.Name, p.Node) {
			t.Errorf("ws2022 web NodePort row lacks pod %s on %s: %+v", p.Name, p.Node, np.Backends)
		}
	}
	findRow(t, r22, "web/ingress-nginx:https", diag.RoleLoadBalancer)
	for _, row := range r19.LoadBalancers {
		if row.Service == "web/ingress-nginx:https" && row.Role != diag.RoleClusterIP {
			t.Errorf("ws2019 has an ETP Local %s load balancer without an ingress pod: %+v", row.Role, row)
		}
	}
	if !anyContains(r19.Notes, "web/ingress-nginx: externalTrafficPolicy Local and no ready endpoint on this node") {
		t.Errorf("ws2019 notes lack the ETP Local explanation: %q", r19.Notes)
	}
	if !anyContains(r19.Notes, "SessionAffinityUnsupported") {
		t.Errorf("ws2019 (HNS 9.5) notes lack the session affinity problem: %q", r19.Notes)
	}
	show("on "+ws2022.Name(), run(ws2022))
	show("on "+ws2019.Name(), run(ws2019))

	// Traces over one node's real state.
	client := w.Client.IP.String()
	dns := trace(ws2022, client+":33000", "10.96.0.10:53/udp")
	if dns.LoadBalancer == nil || dns.LoadBalancer.Service != "kube-system/kube-dns:dns" || dns.LoadBalancer.Role != diag.RoleClusterIP ||
		!strings.HasPrefix(dns.Backend, "pod kube-system/coredns-win-ws20") ||
		(dns.Outcome != "delivered-to-pod" && dns.Outcome != "handed-off") {
		t.Errorf("pod to cluster DNS: %+v", dns)
	}
	show("trace on "+ws2022.Name(), run(ws2022, "trace", "--src="+client+":33000", "--dst=10.96.0.10:53/udp"))
	in := trace(ws2022, outsider, framework.DemoIngressIP+":443/tcp")
	if in.Outcome != "delivered-to-pod" || !in.Verdict.ClientIPPreserved || !strings.HasPrefix(in.Backend, "pod web/ingress-win-ws2022-") ||
		in.LoadBalancer == nil || in.LoadBalancer.Role != diag.RoleLoadBalancer {
		t.Errorf("external client to the ingress IP at ws2022: %+v", in)
	}
	away := trace(ws2019, outsider, framework.DemoIngressIP+":443/tcp")
	if away.Outcome != "dropped" || !anyContains(away.Notes, "LoadBalancer frontend of web/ingress-nginx:https", "externalTrafficPolicy Local") {
		t.Errorf("external client to the ingress IP at ws2019: %+v", away)
	}
	show("trace on "+ws2019.Name(), run(ws2019, "trace", "--src="+outsider, "--dst="+framework.DemoIngressIP+":443/tcp"))

	// hnsproxy, converged, writes nothing; so any write is the tool's.
	for n, s := range statsOf(t, c) {
		if s.Writes() != writesBefore[n] {
			t.Errorf("node %s: HNS writes went from %d to %d while hnsproxy-diag ran: %v", n.Name(), writesBefore[n], s.Writes(), s.Calls)
		}
	}

	// Broken: the NodePort load balancer deleted behind hnsproxy's back
	// (hnsproxy stopped, so its drift repair cannot race the diagnosis).
	if err := ws2022.Proxy.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := ws2022.Sim.Client.DeleteLoadBalancer(ctx, np.ID); err != nil {
		t.Fatal(err)
	}
	gone := findRow(t, reportExiting(ws2022, 2), "web/frontend:http", diag.RoleNodePort)
	if gone.State != diag.StateMissing || gone.ID != "" || !anyContains(gone.Why, "HNS has none") || len(gone.Backends) != len(w.Pods["web"]) {
		t.Errorf("deleted NodePort row %+v", gone)
	}
	// Without its load balancer the node port is just a port of the host.
	unbalanced := trace(ws2022, outsider, framework.DemoCluster.Nodes[0].NodeIP+":30080/tcp")
	if unbalanced.Outcome != "delivered-to-host" || unbalanced.LoadBalancer != nil ||
		!anyContains(unbalanced.Notes, "NodePort frontend of web/frontend:http", "HNS has none") {
		t.Errorf("external client to the deleted NodePort: %+v", unbalanced)
	}
	show("on "+ws2022.Name()+" with the NodePort load balancer deleted", runExiting(ws2022, 2))
	for _, line := range readmeDiagLines(t) {
		if !strings.Contains(shapeOf(printed.String()), shapeOf(line)) {
			t.Errorf("README.md's hnsproxy-diag output shows %q; hnsproxy-diag printed no line of its shape", strings.TrimSpace(line))
		}
	}

	// hnsproxy back: it re-creates the load balancer, and the tool sees it.
	if err := ws2022.Proxy.Start(ctx); err != nil {
		t.Fatal(err)
	}
	err = framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(context.Context) error {
		cmd := exec.Command(bin, append(ws2022.Proxy.Args(), "--output=json")...)
		out, err := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != 0 && code != 2 {
			return errorf("exit status %d: %v", code, err)
		}
		var r diag.Report
		if err := json.Unmarshal(out, &r); err != nil {
			return err
		}
		for _, row := range r.LoadBalancers {
			if row.State != diag.StateOK {
				return errorf("%s %s is %s", row.Service, row.Role, row.State)
			}
		}
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			return errorf("every row ok, and exit status %d", code)
		}
		return nil
	})
	if err != nil {
		t.Errorf("after hnsproxy restarted: %v", err)
	}
}

// readmeDiagLines are the output lines of README.md's hnsproxy-diag
// section's fenced blocks.
func readmeDiagLines(t *testing.T) []string {
	t.Helper()
	section := doctest.Section(t, "README.md", "## Why does my Service not work on this node? (`hnsproxy-diag`)")
	var lines []string
	for i, block := range strings.Split(section, "```") {
		if i%2 == 1 { // a fenced block, not the prose between them
			lines = append(lines, outputLines(block)...)
		}
	}
	if len(lines) < 20 {
		t.Fatalf("read %d lines of README.md's hnsproxy-diag excerpts; they no longer read as its output", len(lines))
	}
	return lines
}

func findRow(t *testing.T, r *diag.Report, service, role string) diag.Row {
	t.Helper()
	for _, row := range r.LoadBalancers {
		if row.Service == service && row.Role == role {
			return row
		}
	}
	t.Fatalf("%s: no %s row for %s", r.Node, role, service)
	return diag.Row{}
}

func hasBackend(row diag.Row, ip, pod, node string) bool {
	for _, b := range row.Backends {
		if b.IP == ip && b.Pod == pod && b.Node == node && b.State == "" {
			return true
		}
	}
	return false
}

// anyContains reports whether one line contains every part.
func anyContains(lines []string, parts ...string) bool {
	for _, l := range lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}
