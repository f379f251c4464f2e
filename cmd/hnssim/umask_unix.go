//go:build unix

package main

import "syscall"

// privateFiles makes files this process creates owner-only from birth, so
// the socket is never reachable by others, not even before Listen's chmod.
func privateFiles() { syscall.Umask(0o077) }
