package hnslb

import (
	"context"
	"errors"
	"testing"
)

// oneLB answers GetLoadBalancerByID and DeleteLoadBalancer; any other call
// reaches the nil Client and panics, so the test notices it.
type oneLB struct {
	Client
	err error
}

func (o oneLB) GetLoadBalancerByID(_ context.Context, id string) (*LoadBalancer, error) {
	return &LoadBalancer{ID: id}, o.err
}

func (o oneLB) DeleteLoadBalancer(context.Context, string) error { return o.err }

// TestAroundMakesEachCallOnceUnderItsName: the wrapper hands around the
// call's name, makes the call once, and returns its value and error as they
// were; what it returns is no Walker, so a walk over it lists through it.
func TestAroundMakesEachCallOnceUnderItsName(t *testing.T) {
	ctx := context.Background()
	refused := NewError("get", CodeNotFound, "gone")
	var ops []string
	around := func(op string, call func() error) error {
		ops = append(ops, op)
		return call()
	}
	c := Around(oneLB{err: refused}, around)
	lb, err := c.GetLoadBalancerByID(ctx, "lb-1")
	if lb == nil || lb.ID != "lb-1" || !errors.Is(err, refused) {
		t.Errorf("GetLoadBalancerByID through Around: %+v, %v", lb, err)
	}
	if err := c.DeleteLoadBalancer(ctx, "lb-1"); !errors.Is(err, refused) {
		t.Errorf("DeleteLoadBalancer through Around: %v", err)
	}
	if want := []string{"get_load_balancer", "delete_load_balancer"}; len(ops) != 2 || ops[0] != want[0] || ops[1] != want[1] {
		t.Errorf("around saw %q, want %q", ops, want)
	}
	if _, ok := c.(Walker); ok {
		t.Error("Around's client is a Walker")
	}
}
