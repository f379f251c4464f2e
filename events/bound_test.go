package events

import "testing"

// TestBoundPlacesAStreakAndWhatOutlastsIt walks one kind of problem
// through a streak and what comes after it: ten on their objects, one on
// the Node, the rest nowhere while more than ten have it; those raised
// nowhere owed once ten or fewer do; one that lasts silences nothing.
func TestBoundPlacesAStreakAndWhatOutlastsIt(t *testing.T) {
	var b Bound[int]
	have := map[int]bool{}
	round := func(keys ...int) (onObject, onNode int) {
		b.Round(have)
		for k := range have {
			if b.Owed(k) {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			switch b.Next(k) {
			case OnObject:
				onObject++
			case OnNode:
				onNode++
			}
		}
		return onObject, onNode
	}
	check := func(when string, gotObject, gotNode, wantObject, wantNode int) {
		t.Helper()
		if gotObject != wantObject || gotNode != wantNode {
			t.Errorf("%s: %d on objects and %d on the Node, want %d and %d", when, gotObject, gotNode, wantObject, wantNode)
		}
	}

	// One at a time up to thirty: the first ten on their objects (no
	// streak yet), the eleventh on the Node, the rest nowhere.
	total, node := 0, 0
	for k := range 30 {
		have[k] = true
		o, n := round(k)
		total, node = total+o, node+n
	}
	check("thirty, one at a time", total, node, MaxRaisedOneByOne, 1)
	o, n := round()
	check("the same thirty again", o, n, 0, 0)

	// All but five end; of those five, the ones raised nowhere are owed.
	for k := range 25 {
		delete(have, k)
	}
	o, n = round()
	check("five left", o, n, 5, 0)
	o, n = round()
	check("the five again", o, n, 0, 0)

	// Four of them end; the one left lasts. Problems that come and go
	// beside it are each raised on their objects, however many.
	for k := 25; k < 29; k++ {
		delete(have, k)
	}
	round()
	for k := 100; k < 100+3*MaxRaisedOneByOne; k++ {
		have[k] = true
		o, n = round(k)
		check("one beside the lasting one", o, n, 1, 0)
		delete(have, k)
	}
}

// TestBoundEndsItsStreakAtExactlyTheBound pins the edge: a streak lasts
// while MaxRaisedOneByOne+1 objects have the problem, and ends when
// MaxRaisedOneByOne do, which makes those of them raised nowhere owed.
func TestBoundEndsItsStreakAtExactlyTheBound(t *testing.T) {
	var b Bound[int]
	have := map[int]bool{}
	for k := range 3 * MaxRaisedOneByOne {
		have[k] = true
	}
	b.Round(have)
	for k := range 3 * MaxRaisedOneByOne {
		b.Next(k) // ten on their objects, one on the Node, the rest nowhere
	}
	owed := func() (n int) {
		for k := range have {
			if b.Owed(k) {
				n++
			}
		}
		return n
	}
	// Keep the last MaxRaisedOneByOne+1, all raised nowhere.
	for k := range 2*MaxRaisedOneByOne - 1 {
		delete(have, k)
	}
	b.Round(have)
	if n := owed(); n != 0 {
		t.Errorf("%d of %d owed while more than %d have the problem, want none", n, len(have), MaxRaisedOneByOne)
	}
	delete(have, 2*MaxRaisedOneByOne-1)
	b.Round(have)
	if n := owed(); n != MaxRaisedOneByOne {
		t.Errorf("%d of %d owed once %d have the problem, want all", n, len(have), MaxRaisedOneByOne)
	}
}

// TestBoundHoveringAtTheBoundRaisesNothingTwice: ten lasting problems
// and an eleventh that comes and goes. Each time it comes it is placed
// once (the streak's Node Warning: the count crossed the bound again);
// the ten are never owed, so never raised again.
func TestBoundHoveringAtTheBoundRaisesNothingTwice(t *testing.T) {
	var b Bound[int]
	have := map[int]bool{}
	for k := range MaxRaisedOneByOne {
		have[k] = true
	}
	b.Round(have)
	for k := range MaxRaisedOneByOne {
		if p := b.Next(k); p != OnObject {
			t.Fatalf("problem %d of %d placed %v, want on its object", k+1, MaxRaisedOneByOne, p)
		}
	}
	const flaps = 5
	onNode := 0
	for range flaps {
		have[100] = true
		b.Round(have)
		for k := range MaxRaisedOneByOne {
			if b.Owed(k) {
				t.Fatalf("problem %d, raised on its object, owed again", k)
			}
		}
		switch b.Next(100) {
		case OnObject:
			t.Fatal("the eleventh placed on its object while eleven have the problem")
		case OnNode:
			onNode++
		}
		delete(have, 100)
		b.Round(have)
		for k := range MaxRaisedOneByOne {
			if b.Owed(k) {
				t.Fatalf("problem %d, raised on its object, owed again once ten have the problem", k)
			}
		}
	}
	if onNode != flaps {
		t.Errorf("%d Node Warnings for %d crossings of the bound, want one each", onNode, flaps)
	}
}
