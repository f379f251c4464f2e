// Package liveheap measures the Go heap that is live, for benchmarks that
// report what a structure holds (the collector sizes its goal, and so a
// process's resident size, from the live heap).
package liveheap

import "runtime"

// Bytes is the heap live after a collection. It collects twice: the
// second empties sync.Pools (encoding/json's buffers), which survive one.
func Bytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
