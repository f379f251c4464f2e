package options

import (
	"fmt"

	"github.com/spf13/pflag"
)

// linuxOnlyFlags are kube-proxy flags for iptables, ipvs, nftables,
// conntrack and Linux process settings. They parse as kube-proxy parses them
// so existing DaemonSet arguments keep working, and do nothing.
var linuxOnlyFlags = []string{
	"iptables-masquerade-bit", "masquerade-all", "iptables-localhost-nodeports",
	"ipvs-sync-period", "ipvs-min-sync-period", "ipvs-scheduler", "ipvs-exclude-cidrs", "ipvs-strict-arp",
	"ipvs-tcp-timeout", "ipvs-tcpfin-timeout", "ipvs-udp-timeout",
	"detect-local-mode", "pod-bridge-interface", "pod-interface-name-prefix", "nodeport-addresses",
	"oom-score-adj", "conntrack-max-per-core", "conntrack-min",
	"conntrack-tcp-timeout-established", "conntrack-tcp-timeout-close-wait", "conntrack-tcp-be-liberal",
	"conntrack-udp-timeout", "conntrack-udp-timeout-stream", "init-only",
}

func (o *Options) addLinuxOnlyFlags(fs *pflag.FlagSet) {
	c := o.flagConfig
	const noEffect = " (Linux only; no effect in hnsproxy.)"
	fs.Int32Var(c.IPTables.MasqueradeBit, "iptables-masquerade-bit", *c.IPTables.MasqueradeBit, "The bit of the fwmark space to mark packets requiring SNAT with."+noEffect)
	fs.BoolVar(&c.IPTables.MasqueradeAll, "masquerade-all", c.IPTables.MasqueradeAll, "SNAT all traffic sent via Service cluster IPs."+noEffect)
	fs.BoolVar(c.IPTables.LocalhostNodePorts, "iptables-localhost-nodeports", *c.IPTables.LocalhostNodePorts, "Allow NodePort services to be accessed via localhost."+noEffect)
	fs.DurationVar(&c.IPVS.SyncPeriod.Duration, "ipvs-sync-period", c.IPVS.SyncPeriod.Duration, "IPVS resync interval."+noEffect)
	fs.DurationVar(&c.IPVS.MinSyncPeriod.Duration, "ipvs-min-sync-period", c.IPVS.MinSyncPeriod.Duration, "Minimum IPVS resync interval."+noEffect)
	fs.StringVar(&c.IPVS.Scheduler, "ipvs-scheduler", c.IPVS.Scheduler, "The ipvs scheduler type."+noEffect)
	fs.StringSliceVar(&c.IPVS.ExcludeCIDRs, "ipvs-exclude-cidrs", c.IPVS.ExcludeCIDRs, "CIDRs the ipvs proxier should not touch."+noEffect)
	fs.BoolVar(&c.IPVS.StrictARP, "ipvs-strict-arp", c.IPVS.StrictARP, "Enable strict ARP."+noEffect)
	fs.DurationVar(&c.IPVS.TCPTimeout.Duration, "ipvs-tcp-timeout", c.IPVS.TCPTimeout.Duration, "IPVS TCP idle timeout."+noEffect)
	fs.DurationVar(&c.IPVS.TCPFinTimeout.Duration, "ipvs-tcpfin-timeout", c.IPVS.TCPFinTimeout.Duration, "IPVS TCP FIN timeout."+noEffect)
	fs.DurationVar(&c.IPVS.UDPTimeout.Duration, "ipvs-udp-timeout", c.IPVS.UDPTimeout.Duration, "IPVS UDP timeout."+noEffect)
	fs.StringVar((*string)(&c.DetectLocalMode), "detect-local-mode", string(c.DetectLocalMode), "Mode to use to detect local traffic."+noEffect)
	fs.StringVar(&c.DetectLocal.BridgeInterface, "pod-bridge-interface", c.DetectLocal.BridgeInterface, "A bridge interface name."+noEffect)
	fs.StringVar(&c.DetectLocal.InterfaceNamePrefix, "pod-interface-name-prefix", c.DetectLocal.InterfaceNamePrefix, "An interface name prefix."+noEffect)
	fs.StringSliceVar(&c.NodePortAddresses, "nodeport-addresses", c.NodePortAddresses, "CIDRs of node IPs that accept NodePort connections (kube-proxy on Windows ignores it too)."+noEffect)
	fs.Int32Var(c.OOMScoreAdj, "oom-score-adj", *c.OOMScoreAdj, "The oom-score-adj value for the proxy process."+noEffect)
	fs.Int32Var(c.Conntrack.MaxPerCore, "conntrack-max-per-core", *c.Conntrack.MaxPerCore, "Maximum NAT connections to track per CPU core."+noEffect)
	fs.Int32Var(c.Conntrack.Min, "conntrack-min", *c.Conntrack.Min, "Minimum number of conntrack entries."+noEffect)
	fs.DurationVar(&c.Conntrack.TCPEstablishedTimeout.Duration, "conntrack-tcp-timeout-established", c.Conntrack.TCPEstablishedTimeout.Duration, "Idle timeout for established TCP connections."+noEffect)
	fs.DurationVar(&c.Conntrack.TCPCloseWaitTimeout.Duration, "conntrack-tcp-timeout-close-wait", c.Conntrack.TCPCloseWaitTimeout.Duration, "NAT timeout for TCP connections in CLOSE_WAIT."+noEffect)
	fs.BoolVar(&c.Conntrack.TCPBeLiberal, "conntrack-tcp-be-liberal", c.Conntrack.TCPBeLiberal, "Liberal TCP tracking."+noEffect)
	fs.DurationVar(&c.Conntrack.UDPTimeout.Duration, "conntrack-udp-timeout", c.Conntrack.UDPTimeout.Duration, "Idle timeout for UNREPLIED UDP connections."+noEffect)
	fs.DurationVar(&c.Conntrack.UDPStreamTimeout.Duration, "conntrack-udp-timeout-stream", c.Conntrack.UDPStreamTimeout.Duration, "Idle timeout for ASSURED UDP connections."+noEffect)
	fs.BoolVar(&o.InitOnly, "init-only", o.InitOnly, "kube-proxy: privileged initialization, then exit. Not implemented on Windows: an error, as with kube-proxy.")
}

// linuxOnlyWarnings names each Linux-only flag that was set.
func linuxOnlyWarnings(fs *pflag.FlagSet) []string {
	var out []string
	for _, name := range linuxOnlyFlags {
		if name != "init-only" && changed(fs, name) {
			out = append(out, fmt.Sprintf("flag --%s is Linux-only and has no effect in hnsproxy", name))
		}
	}
	return out
}
