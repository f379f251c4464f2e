package reconciler

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// walk is a digest of what a full walk of a reconciler's status gave, learned
// cap included, and its counts.
type walk struct {
	digest [32]byte
	counts ObjectCounts
}

func walkOf(t *testing.T, r *Reconciler) walk {
	t.Helper()
	r.mu.Lock()
	learnedCap := r.learnedCap
	r.mu.Unlock()
	lbs, eps := r.Statuses(), r.EndpointStatuses()
	return walk{digestOf(t, lbs, eps, learnedCap), countsOf(lbs, eps)}
}

func digestOf(t *testing.T, lbs []Status, eps []EndpointStatus, learnedCap int) [32]byte {
	b, err := json.Marshal(struct {
		LBs []Status
		EPs []EndpointStatus
		Cap int
	}{nilIfEmpty(lbs), nilIfEmpty(eps), learnedCap})
	if err != nil {
		t.Error(err)
	}
	return sha256.Sum256(b)
}

// readUntil calls read over and over on a goroutine of its own until stop
// is closed; wg waits for it.
func readUntil(wg *sync.WaitGroup, stop <-chan struct{}, read func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			read()
		}
	}()
}

// Readers that run beside Syncs, Repairs and Lookups each get, every time,
// what a full walk of the status gave at one moment: not older than the
// last flush before their call, and never older than what they read
// before; or, the first look after the hand-over stopped, an empty
// snapshot that says it is Gathering. Between phases nobody reads while
// Services and pods come and go for longer than statusReaderIdle (the
// hand-over passes its bound, then stops); the gate keeps readers out
// while the test changes what is desired, so each moment a reader can
// meet is one the test walked.
func TestConcurrentReadersGetAWalkedStatus(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2025, sim.ProfileWS2022} {
		t.Run(profile, func(t *testing.T) {
			e, locals := threePods(t, profile)
			r := e.started()

			var (
				gate      sync.RWMutex // readers hold it shared; changes to the desired state, exclusively
				walksMu   sync.Mutex
				walks     []walk
				flushedAt atomic.Int64 // index of the walk of the last flush's moment
			)
			record := func(flushed bool) {
				w := walkOf(t, r)
				walksMu.Lock()
				walks = append(walks, w)
				n := int64(len(walks) - 1)
				walksMu.Unlock()
				if flushed {
					flushedAt.Store(n)
				}
			}
			record(true)

			type read struct {
				lo        int64
				gathering bool
				walk
			}
			stop := make(chan struct{})
			reads := make([][]read, 2)
			var wg sync.WaitGroup
			for i := range reads {
				readUntil(&wg, stop, func() {
					gate.RLock()
					lo := flushedAt.Load()
					s, counts := r.StatusSnapshot(), r.ObjectCounts()
					gate.RUnlock()
					reads[i] = append(reads[i], read{lo, s.Gathering, walk{digestOf(t, s.LoadBalancers, s.RemoteEndpoints, s.LearnedBackendCap), counts}})
				})
			}

			rng := rand.New(rand.NewPCG(3, 4))
			desired := map[intent.LBKey]intent.LB{}
			gen := 0
			paused := false // nobody reads: the test holds the gate
			change := func(f func()) {
				if !paused {
					gate.Lock()
					defer gate.Unlock()
				}
				f()
				record(false)
			}
			backend := func() intent.Backend {
				switch n := rng.IntN(6); n {
				case 0, 1:
					return loc(locals[rng.IntN(len(locals))])
				case 2: // maybe a pod of this node
					return unknownNode(locals[rng.IntN(len(locals))], "192.168.0.2")
				default: // a provider address that moves now and then
					ip := fmt.Sprintf("10.245.%d.%d", gen%250, rng.IntN(8))
					return rem(ip, fmt.Sprintf("192.168.0.%d", 2+rng.IntN(2)))
				}
			}
			for step := range 600 {
				// Steps 100 to 199 of every 200: Services and pods come and
				// go faster, and nobody reads (the hand-over passes its bound).
				if step%200 == 100 {
					gate.Lock()
					paused = true
				}
				if paused {
					// Eight Services replaced, then a Sync: the hand-over grows
					// by some 30 statuses a step.
					change(func() {
						for k := range desired {
							if len(desired) < 16 {
								break
							}
							delete(desired, k)
							r.Delete(k)
						}
						for range 8 {
							gen++
							l := lb(fmt.Sprintf("10.96.%d.%d", gen%250, rng.IntN(12)), 80, distinct([]intent.Backend{backend(), backend(), backend()})...)
							desired[l.Key] = l
							upsert(r, l)
						}
					})
					r.Sync(ctx)
					record(true)
					e.clock.Step(3*DefaultRetryBase + statusReaderIdle/40)
				}
				switch op := rng.IntN(12); {
				case op < 5:
					if rng.IntN(10) == 0 {
						gen++ // new frontends and pods
					}
					l := lb(fmt.Sprintf("10.96.%d.%d", gen%250, rng.IntN(12)), 80, distinct([]intent.Backend{backend(), backend(), backend()})...)
					change(func() { desired[l.Key] = l; upsert(r, l) })
				case op < 7:
					for k := range desired {
						change(func() { delete(desired, k); remove(r, k) })
						break
					}
				case op < 8:
					if s := r.Statuses(); len(s) > 0 {
						if id := s[rng.IntN(len(s))].RealizedID; id != "" {
							_ = e.hns.DeleteLoadBalancer(ctx, id)
						}
					}
					_ = r.Repair(ctx)
					record(true)
				case op < 9:
					_ = r.Lookup(ctx)
					record(true)
				default:
					if rng.IntN(3) == 0 {
						e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.AnyOp: 0.3}})
					}
					r.Sync(ctx)
					e.hns.SetFaults(sim.Faults{})
					record(true)
					e.clock.Step(3 * DefaultRetryBase)
				}
				if step%200 == 199 {
					if on, _, _, _ := handOverKept(r); on {
						t.Fatalf("step %d: nobody read for %v and the hand-over is still on", step, 100*(statusReaderIdle/40))
					}
					paused = false
					gate.Unlock()
				}
			}
			close(stop)
			wg.Wait()

			// Where each digest and each count was walked, in order.
			at, countedAt := map[[32]byte][]int64{}, map[ObjectCounts][]int64{}
			for i, w := range walks {
				at[w.digest] = append(at[w.digest], int64(i))
				countedAt[w.counts] = append(countedAt[w.counts], int64(i))
			}
			firstFrom := func(js []int64, lo int64) int64 {
				for _, j := range js {
					if j >= lo {
						return j
					}
				}
				return -1
			}
			total, gathering := 0, 0
			empty := digestOf(t, nil, nil, 0)
			for i, rs := range reads {
				prev := int64(0)
				for n, rd := range rs {
					if rd.gathering {
						if rd.digest != empty {
							t.Fatalf("reader %d, read %d: a snapshot that says it is Gathering holds statuses", i, n)
						}
						gathering++
						continue
					}
					lo := max(prev, rd.lo)
					found := firstFrom(at[rd.digest], lo)
					if found < 0 {
						t.Fatalf("reader %d, read %d: its snapshot is no walk at or after walk %d (walks where it is: %v)", i, n, lo, at[rd.digest])
					}
					// The counts were read after the snapshot, on their own.
					if firstFrom(countedAt[rd.counts], rd.lo) < 0 {
						t.Fatalf("reader %d, read %d: ObjectCounts %+v are no walk's at or after walk %d", i, n, rd.counts, rd.lo)
					}
					prev = found
				}
				total += len(rs)
			}
			t.Logf("%d walks, %d reads, %d of them Gathering", len(walks), total, gathering)
			assertSnapshotIsFullStatus(t, r)
		})
	}
}
