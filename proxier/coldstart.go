package proxier

import "runtime/debug"

// releaseColdStart collects garbage and returns the freed memory to the
// OS once the first sync has ended. The cold start's working set (the
// informers' initial lists as they stream in, every Service computed at
// once, 20,000 HNS creates' documents and replies over the first sync) is
// still partly live, or allocated while a collection marks, at the
// collections that run during it, and the runtime lets the heap grow to
// twice what those found live (GOGC=100) before it collects again. Without
// a collection here, a quiet node's next one comes minutes later, after
// the heap has grown to that goal: at 10,000 Services on overlay the
// resident peak came 20 to 40 MiB after the first sync
// (docs/benchmarks.md). One collection here sets the goal from what the
// steady state keeps; it costs one collection of CPU, once per process.
func releaseColdStart() { debug.FreeOSMemory() }
