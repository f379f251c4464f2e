package hnslb_test

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestParseUnixEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" means rejected
	}{
		{"unix:///tmp/x.sock", "/tmp/x.sock"},
		{"unix:///run/hnssim.sock", "/run/hnssim.sock"},
		{"unix:///C:/x/hns.sock", "C:/x/hns.sock"},
		{"unix:///C:/ProgramData/h", "C:/ProgramData/h"},
		{"unix://C:\\ProgramData\\h", "C:\\ProgramData\\h"},
		{"unix://relative", ""},
		{"unix://relative/x", ""},
		{"unix://", ""}, // empty path
		{"unix:///C:", ""},
		{"unix://1:/x", ""},
		{"", ""},
		{"sim", ""},
		{"/run/x.sock", ""},
		{"tcp://127.0.0.1:1", ""},
	} {
		got, err := hnslb.ParseUnixEndpoint(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseUnixEndpoint(%q) = %q, want an error", tc.in, got)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("ParseUnixEndpoint(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
