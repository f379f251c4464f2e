package proxier

import "runtime/debug"

// releaseColdStart collects garbage and returns the freed memory to the
// OS once the first sync has ended. The collections during a cold start
// find its working set (the informers' initial lists as they stream in,
// every Service computed at once, the HNS creates' documents and replies)
// live, or allocated while they mark, and the runtime lets the heap grow
// to twice what they found (GOGC=100) before it collects again; on a quiet
// node that is minutes later. At 10,000 Services on overlay the collection
// at the first sync's end set a goal of 228 MiB where the steady state
// needs about 190, and the process grew from 230 to 253 MiB after that
// sync (docs/benchmarks.md). One collection here sets the goal from what
// the steady state keeps, once per process.
func releaseColdStart() { debug.FreeOSMemory() }
