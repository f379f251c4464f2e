package reconciler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// interruptedEchoes are the echoes these tests run under: exact, HNS
// answering no distribution, and every variant at once.
var interruptedEchoes = []string{"", sim.EchoDropDistribution, "all"}

// TestRestartAfterAnInterruptedStickyCreateWhoseServiceDroppedAffinity:
// hnsproxy sends a sticky load balancer's create, HNS applies it and the
// reply is lost, and hnsproxy dies before the next listing; while it is
// down the Service turns session affinity off. The start claims the load
// balancer from its declaration with no baseline to judge it by, and HNS
// may answer it without its distribution (the drop-distribution echo):
// read as listed it would match the Service without affinity and be kept,
// sticky until its Service next changes. The declaration records the
// distribution its create sent, so the start knows it was sent sticky and
// replaces it, on Windows Server 2025 and 2022 alike (hnsproxy modifies
// backends only). "standing" is a cluster IP whose key stood
// declared after an earlier create without affinity (ws2022): turning
// affinity on re-declares the key with the new distribution. Found by the
// overlay fault soak (seed 1, --echo=all, ws2025, 2026-12-02: "distribution
// 2, want 0" after five minutes of quiet).
func TestRestartAfterAnInterruptedStickyCreateWhoseServiceDroppedAffinity(t *testing.T) {
	type variant struct {
		profile  string
		origin   intent.Origin
		standing bool
	}
	var variants []variant
	for _, profile := range []string{sim.ProfileWS2025, sim.ProfileWS2022} {
		for _, origin := range []intent.Origin{intent.OriginClusterIP, intent.OriginExternalIP} {
			variants = append(variants, variant{profile, origin, false})
		}
	}
	variants = append(variants, variant{sim.ProfileWS2022, intent.OriginClusterIP, true})
	for _, v := range variants {
		for _, name := range interruptedEchoes {
			t.Run(fmt.Sprintf("%s/echo=%s/%v/standing=%v", v.profile, name, v.origin, v.standing), func(t *testing.T) {
				e := newEnv(t, v.profile)
				e.hns.SetEcho(parseEcho(t, name))
				sticky := e.backedLB("10.244.1.12", "203.0.113.5", false, v.origin, true)
				plain := sticky
				plain.Distribution = hnslb.DistributionNone
				var killed *Reconciler
				if v.standing {
					killed = e.started(plain)
				} else {
					killed = e.started()
				}
				upsert(killed, sticky)
				e.createApplied(killed, hnslb.CodeTimeout)
				if made := e.hnsLB(sticky.Key); made == nil {
					t.Fatal("HNS did not apply the create")
				} else if d := made.PortMappings[0].DistributionType; d != hnslb.DistributionSourceIP {
					t.Fatalf("HNS holds distribution %d after the sticky create, want %d", d, hnslb.DistributionSourceIP)
				}
				r, _ := e.start(e.hns, plain)
				e.converge(r)
				e.assertRealized([]intent.LB{plain})
				if d := e.hnsLB(plain.Key).PortMappings[0].DistributionType; d != hnslb.DistributionNone {
					t.Errorf("HNS holds distribution %d after the restart, want none: the Service dropped affinity", d)
				}
				if st := statusOf(r, plain.Key); st.State != StateDone {
					t.Errorf("status %+v, want done", st)
				}
			})
		}
	}
}

// TestRestartKeepsAnInterruptedCreateSentWithoutAffinity: the create of a
// load balancer without session affinity is applied, its reply lost, and
// hnsproxy dies; the Service is unchanged at the restart. Its declaration
// records that the create was sent without a distribution, so the load
// balancer HNS answers without one is the Service's as it is: kept, with
// no write and no moment without its frontend, on every build and echo.
// Before the declaration recorded it, Windows Server 2025 modified each
// such one once, as it might have been sent sticky.
func TestRestartKeepsAnInterruptedCreateSentWithoutAffinity(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2025, sim.ProfileWS2022, sim.ProfileWS2019} {
		for _, name := range interruptedEchoes {
			for _, origin := range []intent.Origin{intent.OriginClusterIP, intent.OriginExternalIP} {
				t.Run(fmt.Sprintf("%s/echo=%s/%v", profile, name, origin), func(t *testing.T) {
					e := newEnv(t, profile)
					e.hns.SetEcho(parseEcho(t, name))
					plain := e.backedLB("10.244.1.12", "203.0.113.5", false, origin, false)
					killed := e.started()
					upsert(killed, plain)
					e.createApplied(killed, hnslb.CodeTimeout)
					e.restartKeeps(plain)
				})
			}
		}
	}
}

// TestRestartAfterARetriedCreateThatDroppedAffinity: a sticky create's
// reply is lost and it made nothing; the Service turns affinity off, and
// the create tried again without it is applied with its reply lost too;
// then hnsproxy dies. The key was declared all along, and its declaration
// records the distribution of the create that was sent last, so the
// restart keeps the load balancer it claims, writing nothing; recorded as
// sticky still, it was replaced (ws2022) or modified (ws2025) for nothing.
func TestRestartAfterARetriedCreateThatDroppedAffinity(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2025, sim.ProfileWS2022} {
		for _, name := range interruptedEchoes {
			t.Run(fmt.Sprintf("%s/echo=%s", profile, name), func(t *testing.T) {
				e := newEnv(t, profile)
				e.hns.SetEcho(parseEcho(t, name))
				sticky := e.backedLB("10.244.1.12", "203.0.113.5", false, intent.OriginExternalIP, true)
				plain := sticky
				plain.Distribution = hnslb.DistributionNone
				killed := e.started()
				upsert(killed, sticky)
				e.createTried(killed, hnslb.CodeTimeout, 0)
				if e.hnsLB(sticky.Key) != nil {
					t.Fatal("HNS applied the first create")
				}
				upsert(killed, plain)
				e.hns.ResetCounters()
				e.createApplied(killed, hnslb.CodeTimeout)
				e.restartKeeps(plain)
			})
		}
	}
}

// TestRestartKeepsWhatADeclarationWithoutARecordClaims: a declaration an
// older hnsproxy journaled records no distribution, and the load balancer
// on its key is kube-proxy's, made after a rollback, without affinity as
// its Service. Where HNS answers no distribution and cannot modify, the
// start keeps it, as before declarations recorded what they sent: it
// cannot tell whether it is sticky, and replacing every such one would cut
// each frontend kube-proxy made.
func TestRestartKeepsWhatADeclarationWithoutARecordClaims(t *testing.T) {
	for _, name := range interruptedEchoes {
		t.Run("echo="+name, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			e.hns.SetEcho(parseEcho(t, name))
			plain := e.backedLB("10.244.1.12", "10.96.0.12", false, intent.OriginClusterIP, false)
			e.started()
			if _, err := e.hns.CreateLoadBalancer(ctx, BuildLB(&plain, e.localIDs())); err != nil {
				t.Fatal(err)
			}
			appendJournal(t, e.stateFile, journalRecord{Add: true, Kind: recordCreatingLB, Key: &plain.Key})
			e.restartKeeps(plain)
		})
	}
}

func parseEcho(t *testing.T, name string) sim.Echo {
	t.Helper()
	echo, err := sim.ParseEcho(name)
	if err != nil {
		t.Fatal(err)
	}
	return echo
}

// restartKeeps restarts hnsproxy on d, whose load balancer HNS holds
// already, and fails the test unless the restart keeps it, done, with no
// HNS write.
func (e *env) restartKeeps(d intent.LB) {
	e.t.Helper()
	made := e.hnsLB(d.Key)
	if made == nil {
		e.t.Fatal("HNS holds no load balancer before the restart")
	}
	e.hns.ResetCounters()
	r, _ := e.start(e.hns, d)
	e.converge(r)
	if c := e.counters(); c.Writes() != 0 {
		e.t.Errorf("the restart wrote to HNS: %v", c.Calls)
	}
	if got := e.hnsLB(d.Key); got == nil || !strings.EqualFold(got.ID, made.ID) {
		e.t.Errorf("load balancer %v after the restart, want %s kept", got, made.ID)
	}
	if st := statusOf(r, d.Key); st.State != StateDone {
		e.t.Errorf("status %+v, want done", st)
	}
}
