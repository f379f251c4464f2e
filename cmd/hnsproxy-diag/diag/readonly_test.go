package diag

import (
	"reflect"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestReadOnlyHasNoWrites: what ReadOnly returns has exactly hnslb.Reader's
// methods, so neither a call nor a type assertion reaches a write of the
// client behind it.
func TestReadOnlyHasNoWrites(t *testing.T) {
	r := ReadOnly(sim.New(sim.Options{Seed: 1}))
	if _, ok := r.(hnslb.Client); ok {
		t.Fatal("ReadOnly's value is an hnslb.Client")
	}
	reader := reflect.TypeFor[hnslb.Reader]()
	got := reflect.TypeOf(r)
	if got.NumMethod() != reader.NumMethod() {
		t.Errorf("%s has %d methods, hnslb.Reader %d", got, got.NumMethod(), reader.NumMethod())
	}
	for i := range got.NumMethod() {
		if _, ok := reader.MethodByName(got.Method(i).Name); !ok {
			t.Errorf("%s has method %s, which hnslb.Reader lacks", got, got.Method(i).Name)
		}
	}
	for _, write := range []string{"CreateLoadBalancer", "UpdateLoadBalancer", "DeleteLoadBalancer", "CreateEndpoint", "DeleteEndpoint",
		"CreateNetwork", "DeleteNetwork", "CreateNamespace", "DeleteNamespace", "AddNamespaceEndpoint", "RemoveNamespaceEndpoint"} {
		if _, ok := reader.MethodByName(write); ok {
			t.Errorf("hnslb.Reader has the write %s", write)
		}
	}
	if got.Kind() != reflect.Struct || got.Field(0).IsExported() {
		t.Errorf("%s must hold the client in an unexported field", got)
	}
}

// TestReadWritesNothing: a whole diagnosis and trace through ReadOnly make
// no write call to HNS.
func TestReadWritesNothing(t *testing.T) {
	f := newFixture(t)
	f.hns.ResetCounters()
	in := f.read()
	Diagnose(in)
	if _, err := Trace(in, mustPacket(t, client+":40000", frontendIP+":80", "tcp")); err != nil {
		t.Fatal(err)
	}
	c := f.hns.Counters()
	for op, results := range c.Calls {
		if isWrite(op) {
			t.Errorf("%s called %v", op, results)
		}
	}
	if c.Calls[sim.OpListLoadBalancers][sim.ResultOK] == 0 {
		t.Errorf("no ListLoadBalancers counted: the counters do not see the reads (%v)", c.Calls)
	}
}

func isWrite(op sim.Op) bool {
	switch op {
	case sim.OpGetLoadBalancer, sim.OpListLoadBalancers, sim.OpGetEndpoint, sim.OpListEndpoints, sim.OpGetNetwork,
		sim.OpListNetworks, sim.OpGetNamespace, sim.OpListNamespaces, sim.OpVersion:
		return false
	}
	return true
}
