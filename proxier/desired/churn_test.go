package desired

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// indexSizes are the sizes of everything a State keeps per Service, load
// balancer, VIP or endpoint.
func (s *State) indexSizes() map[string]int {
	keys := 0
	for _, ks := range s.externalKeys {
		keys += len(ks)
	}
	return map[string]int{
		"LBs": len(s.LBs), "RemoteEndpoints": len(s.RemoteEndpoints), "Services": len(s.Services),
		"claims": len(s.claims), "clusterIPs": len(s.clusterIPs), "externalKeys": keys,
		"backendRefs": len(s.backendRefs), "vipRefs": len(s.vipRefs), "fixed": len(s.fixed),
	}
}

// TestChurnLeavesNothingOfDeletedServices sets generations of distinct
// Services (new names, conflicting external IPs, shared endpoints, overlay
// VIP endpoints) and deletes them, some changed in between: every index
// the State keeps is back to what an empty State holds.
func TestChurnLeavesNothingOfDeletedServices(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cfg := config()
	overlay(&cfg)
	s := NewState(cfg)
	empty := NewState(cfg).indexSizes()
	for g := range 20 {
		gen := randomInputs(rng, 40)
		var names []types.NamespacedName
		for i := range gen {
			svc := gen[i].Service.DeepCopy()
			svc.Name = fmt.Sprintf("g%d-%s", g, svc.Name)
			svc.UID = types.UID(svc.Name)
			gen[i].Service = svc
			r := ForService(gen[i], cfg)
			s.Set(r)
			names = append(names, r.Name)
		}
		// A quarter change (other endpoints, other external IPs) before they go.
		for i, in := range randomInputs(rng, 40)[:10] {
			in.Service.Name, in.Service.UID = gen[i].Service.Name, gen[i].Service.UID
			s.Set(ForService(in, cfg))
		}
		for _, n := range names {
			s.Delete(n)
		}
		got := s.indexSizes()
		for name, n := range got {
			if n != empty[name] {
				t.Errorf("generation %d: %s holds %d, an empty State %d", g, name, n, empty[name])
			}
		}
	}
}
