//go:build linux

package main

import (
	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// externalClient is a client outside the cluster (TEST-NET-2, data only).
const externalClient = "198.51.100.7:40000"

type namedFlow struct {
	what string
	flow framework.Flow
}

func (w *workload) flows(c *framework.Cluster) []namedFlow {
	byName := map[string]string{}
	for _, s := range w.Services {
		byName[s.Name] = s.Spec.ClusterIP
	}
	n1, n2 := c.Nodes[0], c.Nodes[1]
	var remoteWeb framework.Pod
	for _, p := range w.Pods["web"] {
		if p.Node == n2.Name() {
			remoteWeb = p
		}
	}
	client := w.Client.IP.String()
	return []namedFlow{
		{"A pod asks cluster DNS (UDP)", framework.Flow{Src: client + ":33000", Dst: "10.96.0.10:53", Protocol: "udp"}},
		{"A pod calls the web front end's ClusterIP", framework.Flow{Src: client + ":33001", Dst: byName["frontend"] + ":80", Protocol: "tcp"}},
		{"A pod calls a pod on the other node directly (VXLAN)", framework.Flow{Src: client + ":33002", Dst: remoteWeb.IP.String() + ":8080", Protocol: "tcp"}},
		{"An external client hits the web NodePort on " + n2.Name(), framework.Flow{Src: externalClient, Dst: n2.Spec.NodeIP + ":30080", Protocol: "tcp", Ingress: n2.Name()}},
		{"An external client reaches the ingress LoadBalancer IP at " + n1.Name() + " (has local pods)", framework.Flow{Src: externalClient, Dst: framework.DemoIngressIP + ":443", Protocol: "tcp", Ingress: n1.Name()}},
		{"... and at " + n2.Name() + " (externalTrafficPolicy Local, no local pod)", framework.Flow{Src: externalClient, Dst: framework.DemoIngressIP + ":443", Protocol: "tcp", Ingress: n2.Name()}},
		{"A pod calls the 80-backend workers Service", framework.Flow{Src: client + ":33003", Dst: byName["workers"] + ":9000", Protocol: "tcp"}},
		{"A pod talks to the internet", framework.Flow{Src: client + ":33004", Dst: "198.51.100.20:443", Protocol: "tcp"}},
	}
}
