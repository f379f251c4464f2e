package options

import (
	"fmt"
	"net"

	netutils "k8s.io/utils/net"

	"github.com/hnsproxy/hnsproxy/internal/kubeip"
)

// ipPortValue is a flag holding "IP" or "IP:port" (kube-proxy's IPPortVar).
// An empty value leaves the default, as kube-proxy's does (its help text
// says "Set empty to disable", but IPPortVar.Set("") stores nothing), so a
// template that expands to nothing runs with the default address.
type ipPortValue struct{ val *string }

func (v ipPortValue) Set(s string) error {
	if s == "" {
		return nil
	}
	if err := checkIPPort(s); err != nil {
		return err
	}
	*v.val = s
	return nil
}

func (v ipPortValue) String() string {
	if v.val == nil {
		return ""
	}
	return *v.val
}

func (v ipPortValue) Type() string { return "ipport" }

// checkIPPort accepts an IP or IP:port.
func checkIPPort(s string) error {
	if _, ok := kubeip.ParseAddr(s); ok {
		return nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not in a valid format (ip or ip:port): %w", s, err)
	}
	if _, ok := kubeip.ParseAddr(host); !ok {
		return fmt.Errorf("%q is not a valid IP address", host)
	}
	if _, err := netutils.ParsePort(port, true); err != nil {
		return fmt.Errorf("%q is not a valid port number", port)
	}
	return nil
}

// ipValue is a flag holding one IP address (kube-proxy's IPVar). As there,
// an empty value leaves the default. kube-proxy then panics on a later
// non-empty value of the same flag; here the later value applies.
type ipValue struct{ val *string }

func (v ipValue) Set(s string) error {
	if s == "" {
		return nil
	}
	if _, ok := kubeip.ParseAddr(s); !ok {
		return fmt.Errorf("%q is not a valid IP address", s)
	}
	*v.val = s
	return nil
}

func (v ipValue) String() string {
	if v.val == nil {
		return ""
	}
	return *v.val
}

func (v ipValue) Type() string { return "ip" }

// listenAddress is a validated "IP:port" as the servers listen on it: the
// IP as kube-proxy reads it (kubeip), in canonical text. net.Listen takes
// "127.000.000.001" for a host name, which it cannot resolve (or which
// Windows' resolver reads as octal), where kube-proxy listens on 127.0.0.1.
// Anything else is returned as it is, for validation to report.
func listenAddress(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	ip, ok := kubeip.ParseAddr(host)
	if !ok {
		return addr
	}
	return net.JoinHostPort(ip.String(), port)
}
