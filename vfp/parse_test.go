package vfp

import (
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
