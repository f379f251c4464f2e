//go:build linux

package framework

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// WindowsNode describes a simulated Windows node as the kubelet would
// register it. No kubelet runs here, so the node is created with its status.
type WindowsNode struct {
	Name string
	// PodCIDRs, primary family first; the first is also spec.podCIDR.
	PodCIDRs []string
	// InternalIPs become NodeInternalIP addresses (the node's host IPs).
	InternalIPs []string
	// Labels are added to the kubelet's well-known ones.
	Labels map[string]string
}

// Object returns the Node: labelled as a Windows amd64 node, Ready, with its
// pod CIDRs, internal IPs and hostname. Malformed CIDRs or IPs are an error.
func (n WindowsNode) Object() (*corev1.Node, error) {
	if n.Name == "" {
		return nil, fmt.Errorf("windows node: empty name")
	}
	if len(n.PodCIDRs) == 0 {
		return nil, fmt.Errorf("windows node %s: no pod CIDR", n.Name)
	}
	for _, cidr := range n.PodCIDRs {
		if _, err := netip.ParsePrefix(cidr); err != nil {
			return nil, fmt.Errorf("windows node %s: pod CIDR: %w", n.Name, err)
		}
	}
	addresses := []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: n.Name}}
	for _, ip := range n.InternalIPs {
		if _, err := netip.ParseAddr(ip); err != nil {
			return nil, fmt.Errorf("windows node %s: internal IP: %w", n.Name, err)
		}
		addresses = append(addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	labels := map[string]string{
		corev1.LabelOSStable:   "windows",
		corev1.LabelArchStable: "amd64",
		corev1.LabelHostname:   n.Name,
	}
	for k, v := range n.Labels {
		labels[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels},
		Spec: corev1.NodeSpec{
			PodCIDR:  n.PodCIDRs[0],
			PodCIDRs: append([]string(nil), n.PodCIDRs...),
		},
		Status: corev1.NodeStatus{
			Addresses: addresses,
			Conditions: []corev1.NodeCondition{{
				Type:               corev1.NodeReady,
				Status:             corev1.ConditionTrue,
				Reason:             "KubeletReady",
				LastHeartbeatTime:  metav1.Now(),
				LastTransitionTime: metav1.Now(),
			}},
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem: "windows",
				Architecture:    "amd64",
			},
		},
	}, nil
}

// RegisterWindowsNode creates the node (status included: the apiserver keeps
// a Node's status on create) and returns it as stored.
func RegisterWindowsNode(ctx context.Context, client kubernetes.Interface, n WindowsNode) (*corev1.Node, error) {
	obj, err := n.Object()
	if err != nil {
		return nil, err
	}
	created, err := client.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("registering node %s: %w", n.Name, err)
	}
	return created, nil
}
