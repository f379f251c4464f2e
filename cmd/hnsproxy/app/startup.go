package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/nodeconfig"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/kubeip"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// Capabilities is what this node's HNS can do, as hnsproxy will use it.
type Capabilities = nodeconfig.Capabilities

// featureLine is one line of the start-up capability report.
type featureLine struct {
	name   string
	on     bool
	reason string
}

// capabilityEvents are the Node events checkCapabilities raises: a feature
// the configuration asks for and HNS lacks, and a known OS bug of the build.
type capabilityEvents struct {
	featureUnavailable func(feature, why string)
	osBug              func(bug, what string)
}

// startupHNS is what hnsproxy asks HNS before its reconciler exists:
// reconciler.StartupCalls in the daemon, each call with the call deadline.
type startupHNS interface {
	GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error)
	Version(ctx context.Context) (hnslb.Version, error)
	OSBuild(ctx context.Context) (hnslb.OSBuild, error)
	GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error)
}

// checkCapabilities reads HNS's version and the OS build, decides which
// features hnsproxy uses, and logs each with the reason. Missing API v2, or
// overlay without remote subnet support, is fatal; asking for DSR where HNS
// lacks it is a warning (featureUnavailable is told) and DSR stays off; a
// known OS bug is a warning and an event (osBug), worked around unless
// --os-bug-workarounds=none.
func checkCapabilities(ctx context.Context, c startupHNS, cfg *options.Config, network *hnslb.Network, ev capabilityEvents) (Capabilities, error) {
	logger := klog.FromContext(ctx)
	v, err := readVersion(ctx, c, networkPoll, networkLogEvery, cfg.HNS.NetworkWaitTimeout)
	if err != nil {
		if hnsHung(err) {
			return Capabilities{}, fmt.Errorf("reading the HNS version: %w: %s", err, hungHint)
		}
		return Capabilities{}, fmt.Errorf("reading the HNS version: %w", err)
	}
	build, err := c.OSBuild(ctx)
	if err != nil {
		// Not fatal: the cap falls back to the HNS version and is learned.
		logger.Info("Warning: could not read the Windows build; the backend cap follows the HNS version and no OS bug workaround applies", "err", err)
	}
	caps := nodeconfig.CapabilitiesOf(v, build, network, cfg)
	f := hnslb.FeaturesFor(v)
	have := "have " + v.String()
	lines := []featureLine{{"HNS API v2", f.APIV2, "needs HNS >= 9.2, " + have}}
	if !f.APIV2 {
		report(logger, v, lines)
		return caps, fmt.Errorf("HNS %s is too old: hnsproxy needs the HNS v2 API (HNS >= 9.2, Windows Server 2019 or later)", v)
	}

	switch {
	case caps.WorksAround(hnslb.BugL2BridgeDSRPodToService):
		lines = append(lines, featureLine{"DSR", false, fmt.Sprintf("--enable-dsr, but OS build %s breaks pod-to-Service traffic with DSR on l2bridge (--os-bug-workarounds)", build)})
	case caps.DSR:
		lines = append(lines, featureLine{"DSR", true, "--enable-dsr, " + have})
	case cfg.Winkernel.EnableDSR:
		why := "needs HNS 9.3-9.x or >= 10.2, " + have
		lines = append(lines, featureLine{"DSR", false, why})
		logger.Info("Warning: --enable-dsr is set but this HNS cannot do DSR; ClusterIP load balancers are programmed without it", "hnsVersion", v)
		if ev.featureUnavailable != nil {
			ev.featureUnavailable("DSR (--enable-dsr)", why)
		}
	default:
		lines = append(lines, featureLine{"DSR", false, "--enable-dsr not set"})
	}
	lines = append(lines, featureLine{"DSR for externalTrafficPolicy Local", f.DSR, "needs HNS 9.3-9.x or >= 10.2, " + have})

	overlay := network != nil && network.Type == hnslb.NetworkTypeOverlay
	if overlay {
		lines = append(lines, featureLine{"Remote subnets (overlay)", f.RemoteSubnet, "needs HNS >= 9.2, " + have})
		if !f.RemoteSubnet {
			report(logger, v, lines)
			return caps, fmt.Errorf("network %q is overlay but HNS %s lacks remote subnet support (needs >= 9.2)", network.Name, v)
		}
		if cfg.Winkernel.SourceVIP == "" {
			return caps, fmt.Errorf("network %q is overlay: set --source-vip (winkernel.sourceVip) to the source VIP endpoint's IP", network.Name)
		}
		if vip, ok := kubeip.ParseAddr(cfg.Winkernel.SourceVIP); ok && intent.FamilyOf(vip) == intent.IPv6 {
			// Overlay serves IPv4 only: an IPv6 one would leave every load
			// balancer without its source VIP, SNAT to the node IP instead.
			return caps, fmt.Errorf("network %q is overlay, which carries no IPv6, and --source-vip %s is IPv6 (winkernel.sourceVip): set an IPv4 source VIP, or none to have one reserved through the CNI's IPAM", network.Name, cfg.Winkernel.SourceVIP)
		}
	}
	lines = append(lines,
		ipv6Line(f.IPv6DualStack, overlay, have),
		featureLine{"Session affinity (ClientIP)", f.SessionAffinity, "needs HNS >= 12.0, " + have},
		featureLine{featureModify, caps.Features.ModifyLoadBalancer, modifyReason(cfg.HNS.ModifyLoadBalancer, have)},
	)
	lines = append(lines, workaroundLines(logger, caps, ev.osBug)...)
	report(logger, v, lines)
	logger.Info("HNS backend cap per load balancer", "maxBackends", caps.Features.MaxBackends, "reason", caps.BackendCapReason, "osBuild", build.String())
	metrics.SetBackendCap(caps.Features.MaxBackends, backendCapSource(caps))

	metrics.HNSInfo.WithLabelValues(v.String()).Set(1)
	for _, l := range lines {
		metrics.HNSFeatureEnabled.WithLabelValues(l.name).Set(boolGauge(l.on))
	}
	remoteEndpointNames(false) // until HNS shows it keeps them
	return caps, nil
}

// featureIPv6 is IPv6's name in the start-up lines and hnsproxy_hns_feature_enabled.
const featureIPv6 = "IPv6 dual-stack"

// ipv6Line says whether IPv6 Services are served here: where HNS supports
// IPv6 dual stack and the network is not overlay (desired.Config.ServesFamily;
// kube-proxy's DualStackCompatible).
func ipv6Line(supported, overlay bool, have string) featureLine {
	if supported && overlay {
		return featureLine{featureIPv6, false, "HNS supports it (" + have + "), but overlay networks carry no IPv6: IPv4 only, as kube-proxy falls back to single-stack"}
	}
	return featureLine{featureIPv6, supported, "needs HNS >= 11.10 and a network that is not overlay, " + have}
}

// featureModify is the modify feature's name in the start-up lines and
// hnsproxy_hns_feature_enabled, which turns it off if HNS shows at run time
// that it cannot modify (modifyTurnedOff).
const featureModify = "Modify load balancer in place"

func modifyReason(mode reconciler.ModifyMode, have string) string {
	switch mode {
	case reconciler.ModifyEnabled:
		return "--hns-modify-load-balancer=enabled, " + have + "; a failed modify falls back to delete + create"
	case reconciler.ModifyDisabled:
		return "--hns-modify-load-balancer=disabled, " + have + "; updates are delete + create"
	}
	return "needs HNS >= 15.5 (15.4 accepts but ignores backend changes), " + have + "; otherwise delete + create, and turned off if HNS refuses it"
}

// modifyTurnedOff reports that the reconciler turned modify off (HNS
// refused it, or kept the backends of a modify it reported done).
func modifyTurnedOff() { metrics.HNSFeatureEnabled.WithLabelValues(featureModify).Set(0) }

// featureEndpointNames is, in hnsproxy_hns_feature_enabled, whether HNS
// keeps the names of remote endpoints, which then need no declaration in
// the state file before their create: 0 until a reply or listing shows it.
const featureEndpointNames = "Remote endpoint names kept (creates need no state file fsync)"

// remoteEndpointNames reports what the reconciler learnt of HNS keeping
// remote endpoint names.
func remoteEndpointNames(kept bool) {
	metrics.HNSFeatureEnabled.WithLabelValues(featureEndpointNames).Set(boolGauge(kept))
}

// workaroundLines tells, for each known OS bug of this build that can hurt
// this node, what hnsproxy does: a warning, a Node event and the metric.
func workaroundLines(logger klog.Logger, caps Capabilities, osBug func(bug, what string)) []featureLine {
	var lines []featureLine
	tell := func(bug hnslb.OSBug, on bool, what string) {
		logger.Info("Warning: this Windows build has a known dataplane bug", "osBuild", caps.OSBuild.String(), "bug", bug, "workaround", on, "what", what)
		if osBug != nil {
			osBug(string(bug), what)
		}
		metrics.OSBugWorkaround.WithLabelValues(string(bug)).Set(boolGauge(on))
		lines = append(lines, featureLine{"Workaround for " + string(bug), on, what})
	}
	for _, bug := range caps.Workarounds {
		tell(bug, true, workaroundText[bug])
	}
	for _, bug := range caps.Ignored {
		tell(bug, false, "not worked around (--os-bug-workarounds=none): "+bugEffect[bug])
	}
	return lines
}

// What each workaround does, and what each bug breaks when left.
var (
	workaroundText = map[hnslb.OSBug]string{
		hnslb.BugL2BridgeDSRPodToService: "ClusterIP load balancers are programmed without DSR (backends see the node address, not the client pod's); externalTrafficPolicy Local keeps DSR",
		hnslb.BugOverlayNodePortRemote:   "NodePort load balancers of externalTrafficPolicy Cluster Services use only this node's endpoints when it has any",
	}
	bugEffect = map[hnslb.OSBug]string{
		hnslb.BugL2BridgeDSRPodToService: "pod-to-Service traffic through DSR load balancers on l2bridge may fail",
		hnslb.BugOverlayNodePortRemote:   "NodePort traffic this node forwards to another node may fail",
	}
)

// backendCapSource is the BackendCap metric's label for caps.
func backendCapSource(caps Capabilities) string {
	switch {
	case caps.BackendCapFixed:
		return metrics.BackendCapFromFlag
	case caps.OSBuild.Known():
		return metrics.BackendCapFromOSBuild
	default:
		return metrics.BackendCapFromHNSVersion
	}
}

func report(logger klog.Logger, v hnslb.Version, lines []featureLine) {
	for _, l := range lines {
		state := "off"
		if l.on {
			state = "on"
		}
		logger.Info("HNS feature", "feature", l.name, "state", state, "reason", l.reason, "hnsVersion", v.String())
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// readVersion reads HNS's version, retrying transient failures (HNS
// restarting, a reply lost) and any code HNS answers every poll for up to
// timeout, logging the first failure and then one every logEvery: the
// network was just found, so HNS is there, one failed call must not end
// hnsproxy, and a read carries no input of ours for a code like 0x57 to be
// about.
func readVersion(ctx context.Context, c startupHNS, poll, logEvery, timeout time.Duration) (hnslb.Version, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	var lastLog time.Time
	for attempt := 1; ; attempt++ {
		v, err := c.Version(ctx)
		answered := new(*hnslb.Error)
		if err == nil || !hnslb.IsTransient(err) && !errors.As(err, answered) || !time.Now().Add(poll).Before(deadline) {
			return v, err
		}
		// Paced as the wait for the network is: a poll a second for
		// minutes would otherwise be a log line a second.
		if attempt == 1 || time.Since(lastLog) >= logEvery {
			lastLog = time.Now()
			klog.FromContext(ctx).Info("Reading the HNS version failed; retrying", "err", err, "attempt", attempt,
				"waited", time.Since(start).Round(time.Second), "timeout", timeout)
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// waitForNetwork polls HNS for the named network (the CNI creates it,
// sometimes after hnsproxy starts) until ready accepts it (nil: any),
// logging every logEvery, and fails after timeout with what it last saw
// rather than hanging.
func waitForNetwork(ctx context.Context, c startupHNS, name string, poll, logEvery, timeout time.Duration, ready func(*hnslb.Network) error) (*hnslb.Network, error) {
	logger := klog.FromContext(ctx)
	start := time.Now()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	lastLog := start
	var lastErr error
	for attempt := 1; ; attempt++ {
		n, err := c.GetNetworkByName(ctx, name)
		if err == nil && ready != nil {
			if why := ready(n); why != nil {
				err = &networkNotReady{id: n.ID, err: why}
			}
		}
		if err == nil {
			logger.Info("Found the HNS network", "name", n.Name, "id", n.ID, "type", n.Type, "waited", time.Since(start).Round(time.Millisecond))
			return n, nil
		}
		lastErr = err
		if attempt == 1 || time.Since(lastLog) >= logEvery {
			lastLog = time.Now()
			logger.Info("Waiting for the HNS network", "name", name, "attempt", attempt,
				"waited", time.Since(start).Round(time.Second), "timeout", timeout, "why", networkWaitReason(err))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			what := "did not appear"
			if notUsable(lastErr) {
				what = "was not usable"
			}
			return nil, fmt.Errorf("HNS network %q %s within %v (%s; last error: %w): %s",
				name, what, timeout, networkWaitReason(lastErr), lastErr, networkWaitHint(lastErr))
		case <-ticker.C:
		}
	}
}

// networkNotReady is a network found that ready did not accept yet.
type networkNotReady struct {
	id  string
	err error
}

func (e *networkNotReady) Error() string {
	return fmt.Sprintf("network %s found, not usable yet: %v", e.id, e.err)
}

func (e *networkNotReady) Unwrap() error { return e.err }

func notUsable(err error) bool { return errors.As(err, new(*networkNotReady)) }

func networkWaitReason(err error) string {
	if notReady := (*networkNotReady)(nil); errors.As(err, &notReady) {
		return "the network is there, not usable yet: " + notReady.err.Error()
	}
	switch {
	case hnsHung(err):
		return "HNS did not answer within the call deadline (--hns-call-timeout): HNS may be hung"
	case hnslb.IsNotFound(err):
		return "no network by that name yet"
	case hnslb.IsUnavailable(err):
		return "HNS is unavailable or restarting"
	case errors.Is(err, context.DeadlineExceeded):
		return "HNS did not answer in time"
	default:
		return "HNS error"
	}
}

// networkWaitHint is what to check when the network never showed.
func networkWaitHint(err error) string {
	switch {
	case hnsHung(err):
		return hungHint
	case notUsable(err):
		return "HNS gives an overlay network its provider address (the host's management IP), and the host's vEthernet adapter that address, seconds after the CNI made it; check the host's network adapter and the CNI's log"
	}
	return "check --network-name / KUBE_NETWORK and that the CNI plugin created the network"
}

// hungHint is what to do about an HNS that does not answer.
const hungHint = "HNS takes calls but does not answer them; restarting the hns service clears a hung HNS (kubernetes/aks-engine#4315)"

// hnsHung reports a call abandoned at its deadline, or not made because
// earlier ones were (reconciler.StartupCalls).
func hnsHung(err error) bool {
	code, ok := hnslb.CodeOf(err)
	return ok && code == hnslb.CodeTimeout
}
