package app

import (
	"context"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// debugView is what /debug/hns shows: per Service port ("namespace/name:port"),
// the desired load balancers, the HNS IDs realized for them and their
// state; load balancers being removed are under "" (no owner).
type debugView struct {
	Node            string                         `json:"node"`
	Network         string                         `json:"network"`
	NetworkID       string                         `json:"networkID"`
	HNSVersion      string                         `json:"hnsVersion"`
	Services        map[string][]reconciler.Status `json:"services"`
	RemoteEndpoints []reconciler.EndpointStatus    `json:"remoteEndpoints"`
}

// StatusSnapshotSource publishes the reconciler's status without taking the
// lock a sync holds while it talks to HNS (reconciler.Reconciler has it).
type StatusSnapshotSource interface {
	StatusSnapshot() *reconciler.StatusSnapshot
}

// ctxCheckEvery is how many load balancers debugSource groups between
// looks at its context, so a huge node stops soon after the client leaves.
const ctxCheckEvery = 256

// debugSource reads the last published status, never the reconciler's
// lock, so /debug/hns answers while a sync waits on HNS; it stops with the
// request's context.
func debugSource(cfg *options.Config, deps *Deps, src StatusSnapshotSource) metrics.DebugSource {
	return func(ctx context.Context) (any, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		snap := src.StatusSnapshot()
		v := debugView{
			Node:       cfg.NodeName,
			Network:    deps.Network.Name,
			NetworkID:  deps.Network.ID,
			HNSVersion: deps.Capabilities.Features.Version.String(),
			Services:   map[string][]reconciler.Status{},
		}
		// The reconciler's order is kept (load balancers by key, remote
		// endpoints by IP): one order everywhere.
		for i, s := range snap.LoadBalancers {
			if i%ctxCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			v.Services[s.Owner] = append(v.Services[s.Owner], s)
		}
		// [] rather than null before the first publish.
		v.RemoteEndpoints = append([]reconciler.EndpointStatus{}, snap.RemoteEndpoints...)
		return v, nil
	}
}
