//go:build linux && benche2e

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// appender appends to a log file as hnsproxy's stderr does.
func appender(t *testing.T, path string) func(string) {
	return func(s string) {
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
}

func TestProxyLogCountsTheLinesCollectionsWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hnsproxy.log")
	appendLog := appender(t, path)
	l := &proxyLog{path: path}
	if _, err := l.read(); err == nil {
		t.Fatal("no log yet: want an error")
	}
	appendLog("I1129 12:00:00.000000   1 proxier.go:1] \"Synced\" services=1\n" +
		"gc 1 @0.012s 2%: 0.010+1.2+0.005 ms clock, 0.020+0.3/1.1/0+0.010 ms cpu, 4->4->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P\n")
	if got, err := l.read(); err != nil || got.collections != 1 {
		t.Fatalf("read = %+v, %v; want 1 collection", got, err)
	}
	if got, _ := l.read(); got.collections != 1 {
		t.Fatalf("nothing new: %+v, want still 1 collection", got)
	}
	// A klog line that fell between the parts of a collection's line, and
	// a collection line still being written when the log is read.
	appendLog("gc I1129 12:00:01.000000   1 proxier.go:1] \"Synced\" services=2\n" +
		"2 @1.5s 1%: 0.01+3+0.01 ms clock\n" +
		"I1129 12:00:02.000000   1 proxier.go:1] \"Synced\" mentions gc 3 in passing\n" +
		"g")
	if got, _ := l.read(); got.collections != 2 {
		t.Fatalf("%+v, want 2 collections: the interrupted line is one, a line mentioning gc none", got)
	}
	appendLog("c 3 @2.0s 1%: 0.01+3+0.01 ms clock\n")
	if got, _ := l.read(); got.collections != 3 {
		t.Fatalf("%+v, want 3 collections once the split line ends", got)
	}
}

func TestProxyLogFollowsListings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hnsproxy.log")
	appendLog := appender(t, path)
	appendLog("I1203 09:00:00.000000   1 sync.go:122] \"Synced\" services=1\n")
	l := &proxyLog{path: path}
	before, err := l.read()
	if err != nil || before.listing() {
		t.Fatalf("read = %+v, %v; want no listing", before, err)
	}
	// A start line that lands in a collection line's parts, a line that
	// only quotes the message, and an end line still being written.
	appendLog("gc 4 @9.1s I1203 09:00:01.000000   1 repair.go:60] \"HNS listing started\" listing=\"Drift repair\"\n" +
		"1%: 0.01+3+0.01 ms clock\n" +
		"I1203 09:00:01.100000   1 sync.go:122] \"Synced\" note=\"HNS listing ended\"\n" +
		"I1203 09:00:02.000000   1 repair.go:66] \"HNS listing en")
	during, err := l.read()
	if err != nil || !during.listing() || during.collections != 1 || !during.listingLines(before) {
		t.Fatalf("read = %+v, %v; want a listing under way and 1 collection", during, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.awaitNoListing(context.Background(), time.Millisecond, time.Minute)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("awaitNoListing returned (%v) while the listing is under way", err)
	case <-time.After(50 * time.Millisecond):
	}
	appendLog("ded\" listing=\"Drift repair\" failed=false seconds=1.2\n")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	after, _ := l.read()
	if after.listing() || after.listingsStarted != 1 || after.listingsEnded != 1 || after.listingLines(after) {
		t.Fatalf("read = %+v; want one listing started and ended", after)
	}
	if _, err := (&proxyLog{path: path}).awaitNoListing(context.Background(), time.Millisecond, time.Millisecond); err != nil {
		t.Fatalf("a log whose listings all ended: %v", err)
	}
	appendLog("I1203 09:01:00.000000   1 repair.go:60] \"HNS listing started\" listing=\"Drift repair\"\n")
	if _, err := l.awaitNoListing(context.Background(), time.Millisecond, 5*time.Millisecond); err == nil || !strings.Contains(err.Error(), "under way") {
		t.Fatalf("a listing that never ends: err = %v, want one saying it is under way", err)
	}
}

func TestProxyLogWaitsForARepairThatFoundObjectsGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hnsproxy.log")
	appendLog := appender(t, path)
	// A repair that found something before the bench looks: not the one
	// it waits for.
	appendLog("I1203 17:36:25.541206   1 drifttally.go:54] \"Drift repair found objects of hnsproxy's gone or changed in HNS; repairing them (each is logged at --v=2)\" loadBalancersGone=1\n")
	l := &proxyLog{path: path}
	since, err := l.read()
	if err != nil || since.driftFound != 1 {
		t.Fatalf("read = %+v, %v; want 1 repair that found objects", since, err)
	}
	if _, err := l.awaitDriftFound(context.Background(), since, time.Millisecond, 5*time.Millisecond); err == nil {
		t.Fatal("no repair since: want awaitDriftFound to time out")
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.awaitDriftFound(context.Background(), since, time.Millisecond, time.Minute)
		done <- err
	}()
	// Each object's own line, and a line quoting the message, are not the
	// summary; the summary arrives in two writes.
	appendLog("I1203 17:41:05.603722   1 repair.go:143] \"Load balancer vanished from HNS; recreating it\" key=\"10.96.239.90:80/tcp\"\n" +
		"I1203 17:41:05.603750   1 sync.go:122] \"Synced\" note=\"Drift repair found objects of hnsproxy's gone or changed in HNS\"\n" +
		"I1203 17:41:05.603794   1 drifttally.go:54] \"Drift repair found objects of hnsproxy's gone")
	select {
	case err := <-done:
		t.Fatalf("awaitDriftFound returned (%v) before the summary line ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	appendLog(" or changed in HNS; repairing them (each is logged at --v=2)\" loadBalancersGone=9990\n")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, _ := l.read(); got.driftFound != 2 {
		t.Fatalf("read = %+v, want 2 repairs that found objects", got)
	}
}

func TestProxyLogReadsWhenARepairsWorkWasDone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hnsproxy.log")
	appendLog := appender(t, path)
	// A repair's work done before the bench looks: not the one it waits for.
	appendLog("I1204 03:08:29.847327   1 repairwork.go:171] \"Drift repair's work done\" logger=\"reconciler.reconciler\" objects=1 syncs=1 seconds=0.016860626\n")
	l := &proxyLog{path: path}
	since, err := l.read()
	if err != nil || since.workDone != 1 {
		t.Fatalf("read = %+v, %v; want 1 work done", since, err)
	}
	// A chunk's line is not the end of the work.
	appendLog("I1204 03:12:37.315425   1 repairwork.go:168] \"Synced part of a drift repair's work; the rest follows in the next Sync\" logger=\"reconciler.reconciler\" took=22 left=9542 nextChunk=44\n")
	if _, err := l.awaitWorkDone(context.Background(), since, time.Millisecond, 5*time.Millisecond); err == nil {
		t.Fatal("no work done yet: want awaitWorkDone to time out")
	}
	appendLog("I1204 03:13:02.847327   1 repairwork.go:171] \"Drift repair's work done\" logger=\"reconciler.reconciler\" objects=29981 syncs=871 seconds=80.516860626\n")
	got, err := l.awaitWorkDone(context.Background(), since, time.Millisecond, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got.workDone != 2 || got.lastWorkSyncs != 871 || got.lastWorkSeconds != 80.516860626 {
		t.Fatalf("read = %+v, want a second work done, in 871 syncs and 80.516860626 s", got)
	}
}
