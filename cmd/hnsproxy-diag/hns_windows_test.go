package main

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestWindowsReadsHNSReadOnly runs under Wine with hack/wine's fake HNS
// DLLs (hack/wine-test.sh): the Windows build reads HNS through hcn, holds
// nothing that can write it, and refuses a simulator endpoint.
func TestWindowsReadsHNSReadOnly(t *testing.T) {
	if windows.NewLazySystemDLL("computenetwork.dll").NewProc("HnsproxyFakeHns").Find() != nil {
		t.Skip("talks to hack/wine's fake HNS DLLs, which hack/wine-test.sh installs; this host has a real HNS")
	}
	t.Setenv("HNSPROXY_FAKE_HNSCALL", `{"Success":true,"Output":{"Major":13,"Minor":2}}`)
	r, closeHNS, err := openHNS(options.HNS{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeHNS()
	if _, ok := r.(hnslb.Client); ok {
		t.Error("the HNS reader is an hnslb.Client: writes are reachable")
	}
	if v, err := r.Version(context.Background()); err != nil || v != (hnslb.Version{Major: 13, Minor: 2}) {
		t.Errorf("Version = %v, %v; want 13.2 from the fake HNS", v, err)
	}
	if _, _, err := openHNS(options.HNS{Endpoint: "unix:///run/hnssim.sock"}); err == nil || !strings.Contains(err.Error(), "real HNS only") {
		t.Errorf("a unix:// endpoint on Windows: %v", err)
	}
}
