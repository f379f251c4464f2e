package reconciler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestAStartWhoseReadAnswersAnotherErrorStillDeletesWhatItOwns: Start's
// listing leaves out the objects the state file owns, among them those of
// a Service whose deletes wait for a retry, and HNS answers each
// read by ID with an error that is neither "not found" nor HNS being
// unreachable ("the parameter is incorrect", or a code HNS does not
// document). That answer says nothing of the object: it stays owned and is
// deleted by ID, so the deleted Service's load balancer and remote
// endpoint are gone once HNS answers again. Before,
// such an answer forgot them, and they stayed in HNS for good as another
// program's (TestRandomHistoriesConverge, seed 36, once histories drew
// listings that leave objects out).
func TestAStartWhoseReadAnswersAnotherErrorStillDeletesWhatItOwns(t *testing.T) {
	for _, code := range []hnslb.ErrorCode{hnslb.CodeInvalidParameter, 0x803b00ff} {
		t.Run(fmt.Sprintf("%#x", uint32(code)), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			want := e.threeServices()
			r0 := e.started(want...)
			// The third Service is deleted and its deletes fail: they wait
			// for a retry, and its key's declaration is withdrawn, so
			// nothing but ownership claims its objects after a restart.
			e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteLoadBalancer: 1, sim.OpDeleteEndpoint: 1}})
			remove(r0, want[2].Key)
			r0.Sync(ctx)
			if s, err := loadStateFrom(osFS{}, e.stateFile); err != nil || slices.Contains(s.CreatingLoadBalancers, want[2].Key) {
				t.Fatalf("state file %+v, %v; want no declaration of %s, which would claim its load balancer all the same", s, err, want[2].Key)
			}
			reads := []sim.Op{sim.OpGetLoadBalancer, sim.OpGetEndpoint}
			f := sim.Faults{LeftOutOfListings: 1, ErrorRate: map[sim.Op]float64{}, Codes: map[sim.Op][]hnslb.ErrorCode{}}
			for _, op := range reads {
				f.ErrorRate[op], f.Codes[op] = 1, []hnslb.ErrorCode{code}
			}
			e.restartWithout(want, f)
		})
	}
}
