package vfp

import (
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestParsePacket(t *testing.T) {
	p, err := ParsePacket("[fd00::2]", "[fd00::3]:53", "UDP")
	if err != nil || p.Protocol != hnslb.ProtocolUDP || p.Src.Addr().String() != "fd00::2" || p.Src.Port() != 0 || p.Dst.Port() != 53 {
		t.Errorf("IPv6 udp: %v, %v", p, err)
	}
	p, err = ParsePacket("10.244.1.2:40000", "10.244.2.3:80", "")
	if err != nil || p.Protocol != hnslb.ProtocolTCP || p.Src.Port() != 40000 || p.Dst.String() != "10.244.2.3:80" {
		t.Errorf("tcp default: %v, %v", p, err)
	}
	p, err = ParsePacket("10.244.1.2", "10.244.2.3", "icmp")
	if err != nil || p.Protocol != ProtocolICMP {
		t.Errorf("icmp: %v, %v", p, err)
	}
	for _, bad := range [][3]string{{"pod", "10.0.0.1:80", "tcp"}, {"10.0.0.1", "10.0.0.2:80", "sctp"}, {"10.0.0.1", "svc:80", "tcp"},
		{"10.0.0.1", "10.0.0.2", "icmpv6"}, {"fd00::1", "fd00::2", "icmp"}, {"::ffff:10.0.0.1", "::ffff:10.0.0.2", "icmpv6"}} {
		if _, err := ParsePacket(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// An IPv6 destination typed without brackets ("fd00:96::20:80") parses as
// a bare address, its port taken for the last group; a TCP or UDP trace of
// it is refused saying how to write the port, not traced to port 0. A
// zoned address (fe80::1%eth0), which no Kubernetes object can hold
// (kubeip), is refused too rather than traced as an address nothing holds.
func TestParsePacketSaysHowToWriteAnIPv6Port(t *testing.T) {
	_, err := ParsePacket("fd00::5", "fd00:96::20:80", "tcp")
	if err == nil || !strings.Contains(err.Error(), "[IPv6]:PORT") {
		t.Errorf("unbracketed IPv6 destination: %v", err)
	}
	if _, err := ParsePacket("10.0.0.1", "10.96.0.1", "udp"); err == nil || !strings.Contains(err.Error(), "no port") {
		t.Errorf("UDP destination without a port: %v", err)
	}
	for _, zoned := range [][2]string{{"fe80::1%eth0", "[fd00::2]:80"}, {"fd00::1", "[fe80::2%eth0]:80"}} {
		if _, err := ParsePacket(zoned[0], zoned[1], "tcp"); err == nil || !strings.Contains(err.Error(), "zone") {
			t.Errorf("%q: %v", zoned, err)
		}
	}
	if _, err := ParsePacket("fd00::5", "fd00:96::20", "icmpv6"); err != nil {
		t.Errorf("ICMPv6 to a bare IPv6 address: %v", err)
	}
}
