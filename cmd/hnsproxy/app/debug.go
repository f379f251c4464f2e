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

// StatusSource is also what debugSource reads.
func debugSource(cfg *options.Config, deps *Deps, src StatusSource) metrics.DebugSource {
	return func(context.Context) (any, error) {
		v := debugView{
			Node:       cfg.NodeName,
			Network:    deps.Network.Name,
			NetworkID:  deps.Network.ID,
			HNSVersion: deps.Capabilities.Features.Version.String(),
			Services:   map[string][]reconciler.Status{},
		}
		// The reconciler's order is kept (keys by intent.CompareLBKeys,
		// endpoints by intent.CompareIPs): one order everywhere.
		for _, s := range src.Statuses() {
			v.Services[s.Owner] = append(v.Services[s.Owner], s)
		}
		v.RemoteEndpoints = src.EndpointStatuses()
		return v, nil
	}
}
