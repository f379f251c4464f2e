//go:build linux && benche2e

package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestProxyEnvironmentTurnsGCTraceOn(t *testing.T) {
	for extra, want := range map[string][]string{
		"":                       {"GODEBUG=gctrace=1"},
		"GOMEMLIMIT=200MiB":      {"GODEBUG=gctrace=1", "GOMEMLIMIT=200MiB"},
		"GODEBUG=madvdontneed=1": {"GODEBUG=madvdontneed=1,gctrace=1"},
		"GODEBUG=":               {"GODEBUG=gctrace=1"},
	} {
		if got := proxyEnvironment(extra); !reflect.DeepEqual(got, want) {
			t.Errorf("proxyEnvironment(%q) = %q, want %q", extra, got, want)
		}
	}
}

func TestCollectionLogCountsTheLinesCollectionsWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hnsproxy.log")
	appendLog := func(s string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	c := &collectionLog{path: path}
	if _, err := c.count(); err == nil {
		t.Fatal("no log yet: want an error")
	}
	appendLog("I1129 12:00:00.000000   1 proxier.go:1] \"Synced\" services=1\n" +
		"gc 1 @0.012s 2%: 0.010+1.2+0.005 ms clock, 0.020+0.3/1.1/0+0.010 ms cpu, 4->4->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P\n")
	if n, err := c.count(); err != nil || n != 1 {
		t.Fatalf("count = %d, %v; want 1 collection", n, err)
	}
	if n, _ := c.count(); n != 1 {
		t.Fatalf("nothing new: count = %d, want still 1", n)
	}
	// A klog line that fell between the parts of a collection's line, and
	// a collection line still being written when the log is read.
	appendLog("gc I1129 12:00:01.000000   1 proxier.go:1] \"Synced\" services=2\n" +
		"2 @1.5s 1%: 0.01+3+0.01 ms clock\n" +
		"I1129 12:00:02.000000   1 proxier.go:1] \"Synced\" mentions gc 3 in passing\n" +
		"g")
	if n, _ := c.count(); n != 2 {
		t.Fatalf("count = %d, want 2: the interrupted line is one collection, a line mentioning gc none", n)
	}
	appendLog("c 3 @2.0s 1%: 0.01+3+0.01 ms clock\n")
	if n, _ := c.count(); n != 3 {
		t.Fatalf("count = %d, want 3 once the split line ends", n)
	}
}
