package app

import (
	"context"
	"fmt"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// debugView is what /debug/hns shows: per Service port ("namespace/name:port"),
// the desired load balancers, the HNS IDs realized for them and their
// state; load balancers being removed are under "" (no owner).
type debugView struct {
	Node       string         `json:"node"`
	Network    string         `json:"network"`
	NetworkID  string         `json:"networkID"`
	HNSVersion string         `json:"hnsVersion"`
	OSBuild    string         `json:"osBuild"`
	BackendCap backendCapView `json:"backendCap"`
	// OSBugs are the known bugs of this build that can hurt this node, and
	// whether hnsproxy works around each (--os-bug-workarounds).
	OSBugs          map[string]bool                `json:"osBugs"`
	Services        map[string][]reconciler.Status `json:"services"`
	RemoteEndpoints []reconciler.EndpointStatus    `json:"remoteEndpoints"`
	// StatusGathering: the first look (or the first after ten minutes with
	// none) met a sync in progress, and the statuses come with its end; the
	// two lists are empty for that reason, not because there is nothing.
	StatusGathering bool `json:"statusGathering,omitempty"`
}

// backendCapView is the backend cap in use and why.
type backendCapView struct {
	Max    int    `json:"max"`
	Reason string `json:"reason"`
}

// backendCapOf is the cap in use: the start-up decision, or one the
// reconciler learned since (it only ever lowers an unfixed cap).
func backendCapOf(caps Capabilities, learned int) backendCapView {
	if learned > 0 && !caps.BackendCapFixed && learned < caps.Features.MaxBackends {
		return backendCapView{Max: learned, Reason: fmt.Sprintf("learned: HNS refused more than %d backends with 0x57 and accepted %d (start-up default %d: %s)",
			learned, learned, caps.Features.MaxBackends, caps.BackendCapReason)}
	}
	return backendCapView{Max: caps.Features.MaxBackends, Reason: caps.BackendCapReason}
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
			OSBuild:    deps.Capabilities.OSBuild.String(),
			BackendCap: backendCapOf(deps.Capabilities, snap.LearnedBackendCap),
			OSBugs:     map[string]bool{},
			Services:   map[string][]reconciler.Status{},

			StatusGathering: snap.Gathering,
		}
		for _, b := range deps.Capabilities.Workarounds {
			v.OSBugs[string(b)] = true
		}
		for _, b := range deps.Capabilities.Ignored {
			v.OSBugs[string(b)] = false
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
