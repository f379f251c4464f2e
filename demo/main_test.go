//go:build linux

package main

import "testing"

// The demo takes no arguments: asked for help, or given one by mistake, it
// prints its usage instead of building and starting a control plane and two
// nodes that run until Ctrl-C.
func TestArgsExit(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		ok   bool
	}{
		{nil, 0, true},
		{[]string{"--help"}, 0, false},
		{[]string{"-h"}, 0, false},
		{[]string{"--oneshot"}, 2, false},
		{[]string{"--help", "extra"}, 2, false},
	} {
		if code, ok := argsExit(c.args); code != c.code || ok != c.ok {
			t.Errorf("argsExit(%q) = %d, %v; want %d, %v", c.args, code, ok, c.code, c.ok)
		}
	}
}
