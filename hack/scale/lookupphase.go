package main

import (
	"context"
	"fmt"
	"time"

	"github.com/hnsproxy/hnsproxy/internal/nearestrank"
)

// lookupVIP is the external IP the lookup phase gives a Service.
const lookupVIP = "203.0.113.10"

// lookupReport is the lookup phase: readiness flips made while a new tenant
// frontend waited for the listing that checks it, their network programming
// latency (wall), and the frontend's own, from its API write to the end of
// the sync that programmed it.
type lookupReport struct {
	Changes    int     `json:"changes"`
	WallMsP50  float64 `json:"wall_ms_p50"`
	WallMsP99  float64 `json:"wall_ms_p99"`
	WallMsMax  float64 `json:"wall_ms_max"`
	FrontendMs float64 `json:"frontend_ms"`
}

// changesDuringLookup measures readiness flips made while a new tenant
// frontend waits for what only a listing of HNS tells: a Service given an
// external IP, which hnsproxy declares and creates only once a listing
// begun after it shows no foreign load balancer there (docs/reliability.md,
// "What a Sync needs listed"). Each flip is timed from its API write to the
// end of the first sync by which every write made so far was carried,
// whatever that sync left pending; the flips end with the first sync that
// leaves nothing pending (the frontend programmed). With -hns-latency a
// listing at 10,000 Services lasts seconds. The external IP is taken away
// again after.
func changesDuringLookup(ctx context.Context, o options, c *cluster, n *node, rep *report) error {
	if o.duringLookup == 0 {
		return nil
	}
	progress("an external IP for one Service, and up to %d single-endpoint changes while it waits for a listing", o.duringLookup)
	n.drain()
	given, taken := c.externalIPChanges(lookupVIP)
	start := n.clock.Now() // the clock of ev.stats.End, which a repair phase steps
	written, carried := 0, 0
	write := func(ch change) error {
		delivered := n.delivered.Load()
		for i, w := range ch.writes {
			n.awaitDelivery(delivered + int64(i))
			if err := n.apply(ctx, w); err != nil {
				return fmt.Errorf("%s: writing the API: %w", ch.kind, err)
			}
		}
		written += len(ch.writes)
		return nil
	}
	// carriedAll waits for the sync by which every write so far was carried.
	carriedAll := func() (syncEvent, error) {
		return n.waitSync(ctx, false, func(ev syncEvent) bool {
			carried += ev.stats.EndpointChanges + ev.stats.ServiceChanges
			return carried >= written
		})
	}
	if err := write(given); err != nil {
		return err
	}
	var walls []time.Duration
	programmed, end := false, start
	for !programmed && len(walls) < o.duringLookup {
		t0 := n.clock.Now()
		if err := write(c.nextChange()); err != nil {
			return err
		}
		ev, err := carriedAll()
		if err != nil {
			return fmt.Errorf("a change while a frontend waits for a listing: %w", err)
		}
		walls = append(walls, ev.stats.End.Sub(t0))
		programmed, end = ev.stats.Result.Pending == 0, ev.stats.End
	}
	if !programmed {
		ev, err := n.waitSync(ctx, true, func(syncEvent) bool { return true })
		if err != nil {
			return fmt.Errorf("the external IP's frontend: %w", err)
		}
		end = ev.stats.End
	}
	r := &lookupReport{Changes: len(walls), FrontendMs: ms(end.Sub(start)),
		WallMsP50: ms(nearestrank.Percentile(walls, 50)), WallMsP99: ms(nearestrank.Percentile(walls, 99)),
		WallMsMax: ms(nearestrank.Percentile(walls, 100))}
	rep.DuringLookup = r
	progress("%d changes while the frontend waited: wall p50 %.1fms p99 %.1fms max %.1fms; the frontend programmed after %.0fms",
		r.Changes, r.WallMsP50, r.WallMsP99, r.WallMsMax, r.FrontendMs)
	if _, err := measure(ctx, n, taken); err != nil {
		return fmt.Errorf("taking the external IP away: %w", err)
	}
	n.drain()
	verify(c, n, rep, "after the changes while a frontend waited for a listing")
	return nil
}
