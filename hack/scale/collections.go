package main

import "runtime/metrics"

// collectionWatch tells whether a garbage collection ran beside a change.
// Its marking runs on the other processor (and on idle ones) while the
// change runs and is charged to the change, which then costs several times
// its own CPU; `gc_cycles` alone cannot say which changes a collection
// overlapped, nor see one still marking when a phase ends.
//
// The runtime publishes no "marking now" flag, but it records every GC
// stop-the-world pause: one ends sweep termination and starts the mark, one
// ends mark termination. So a collection is marking when the pauses
// outnumber twice the completed cycles. A mark termination that finds work
// left resumes the mark (Go issue 27993) and adds a pause; such a pause is
// taken for one when a third open pause shows up. Until then a collection
// that resumed and ended between two looks reads as one ended and another
// begun (the same counts, and far the likelier): a few changes counted as
// beside a collection that was not there, never the reverse.
type collectionWatch struct {
	resumed uint64 // pauses seen beyond two per cycle
}

// look reads the runtime's counts: the GC pauses so far and whether a
// collection is marking now.
func (w *collectionWatch) look() (pauses uint64, marking bool) {
	s := []metrics.Sample{{Name: "/sched/pauses/total/gc:seconds"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	for _, n := range s[0].Value.Float64Histogram().Counts {
		pauses += n
	}
	return pauses, w.observe(pauses, s[1].Value.Uint64())
}

// observe is look's rule on given counts.
func (w *collectionWatch) observe(pauses, cycles uint64) (marking bool) {
	closed := 2*cycles + w.resumed
	if pauses < closed { // not expected: resumed is counted only from pauses seen
		w.resumed -= min(w.resumed, closed-pauses)
		return false
	}
	if open := pauses - closed; open > 1 {
		w.resumed += open - 1
	}
	return pauses > 2*cycles+w.resumed
}

// besideCollection is whether a collection marked at some point between two
// looks: one was marking at the first, or one started or ended since.
func besideCollection(pauses0 uint64, marking0 bool, pauses1 uint64) bool {
	return marking0 || pauses1 != pauses0
}
