package cni

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// primaryIfName is the interface a runtime gives a pod's first network
// (containerd and the kubelet both use eth0).
const primaryIfName = "eth0"

// endpointName names the HNS endpoint of one attachment as the reference
// plugins do, "<containerID>_<network>", so a node can switch between them
// and hnscni with pods running. That name has no room for a second
// interface of one pod on one network: any interface but eth0 gets
// "<containerID>_<network>:<ifname>". CNI forbids ":" in container IDs and
// interface names, so the last ":" separates the interface and the name
// reads back unambiguously (for network names without ":").
func endpointName(containerID, network, ifName string) string {
	if ifName == primaryIfName || ifName == "" {
		return containerID + "_" + network
	}
	return containerID + "_" + network + ":" + ifName
}

// checkIfName refuses an interface name with a backslash. CNI's own check
// (skel) refuses only '/', ':', whitespace and names over 15 bytes, but on
// Windows a backslash is a path separator, and the name becomes part of
// the endpoint's. No runtime gives one: kubelet and containerd say eth0.
func checkIfName(ifName string) error {
	if strings.ContainsRune(ifName, '\\') {
		return types.NewError(types.ErrInvalidEnvironmentVariables, "CNI_IFNAME must not contain a backslash", ifName)
	}
	return nil
}

// legacyEndpointName is the name earlier hnscni releases gave an
// attachment, "<containerID>_<ifname>"; DEL, CHECK and GC still find it.
func legacyEndpointName(containerID, ifName string) string {
	return containerID + "_" + strings.ReplaceAll(ifName, "_", ":")
}

// containerIDPattern is what CNI allows in a container ID.
var containerIDPattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$`)

// attachmentOf inverts endpointName; ok is false for a name it does not build.
func attachmentOf(name, network string) (containerID, ifName string, ok bool) {
	if cid, found := strings.CutSuffix(name, "_"+network); found && containerIDPattern.MatchString(cid) {
		return cid, primaryIfName, true
	}
	if i := strings.LastIndexByte(name, ':'); i > 0 {
		cid, found := strings.CutSuffix(name[:i], "_"+network)
		if ifName := name[i+1:]; found && containerIDPattern.MatchString(cid) && ifNamePattern.MatchString(ifName) {
			return cid, ifName, true
		}
	}
	return "", "", false
}

// legacyAttachmentOf inverts legacyEndpointName.
func legacyAttachmentOf(name string) (containerID, ifName string, ok bool) {
	i := strings.LastIndexByte(name, '_')
	if i <= 0 || !containerIDPattern.MatchString(name[:i]) || !legacyIfName.MatchString(name[i+1:]) {
		return "", "", false
	}
	return name[:i], strings.ReplaceAll(name[i+1:], ":", "_"), true
}

// legacyIfName is an interface name as legacy names carry it ("_" as ":");
// ifNamePattern one as CNI allows it.
var (
	legacyIfName  = regexp.MustCompile(`^[^_/\s]{1,15}$`)
	ifNamePattern = regexp.MustCompile(`^[^:/\s]{1,15}$`)
)

// ours reports whether hnscni made an endpoint: a local endpoint named as
// endpointName or legacyEndpointName name them, with the MAC endpointMAC
// derives from its address. HNS endpoints carry no owner tag; both marks
// together do not happen by chance. Without IPAM, HNS picks the MAC, and
// the name is the only mark.
func (n *NetConf) ours(e *hnslb.Endpoint) bool {
	if e.IsRemote() {
		return false
	}
	_, _, named := attachmentOf(e.Name, n.Network)
	if n.hnsIPAM() {
		// Earlier releases always had IPAM, so no legacy name is ours here.
		return named
	}
	if _, _, legacy := legacyAttachmentOf(e.Name); !named && !legacy {
		return false
	}
	ip, ok := macSource(e)
	return ok && strings.EqualFold(e.MacAddress, endpointMAC(n.macPrefix, ip))
}

// macSource is the address endpointMACFor derived e's MAC from: its IPv4
// address if it has one, as ADD lists a pod's addresses IPv4 first. Not
// simply the first HNS lists: which order HNS answers a dual-stack
// endpoint's addresses in is not published (docs/simulator.md, echo
// reorder).
func macSource(e *hnslb.Endpoint) (netip.Addr, bool) {
	var first netip.Addr
	for _, c := range e.IpConfigurations {
		a, err := netip.ParseAddr(c.IpAddress)
		switch {
		case err != nil:
			continue
		case a.Unmap().Is4():
			return a, true
		case !first.IsValid():
			first = a
		}
	}
	return first, first.IsValid()
}

// endpointMAC derives the MAC from the pod address, as win-overlay does
// (the prefix, "0E-2A" by default, and the IPv4 address's four bytes; the
// last four for IPv6): unique per address on a node, and stable across
// re-creations of the endpoint.
func endpointMAC(prefix string, ip netip.Addr) string {
	b := ip.As16()
	return fmt.Sprintf("%s-%02X-%02X-%02X-%02X", prefix, b[12], b[13], b[14], b[15])
}

// cniMAC is an HNS MAC ("0E-2A-...") in the colon form CNI results use.
func cniMAC(hnsMAC string) string {
	hw, err := net.ParseMAC(strings.ReplaceAll(hnsMAC, "-", ":"))
	if err != nil {
		return hnsMAC
	}
	return hw.String()
}
