//go:build linux && benche2e

package main

import (
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
