package cni_test

import (
	"context"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
)

// TestIPAMGivingTwoAddressesOfOneFamilyIsRefused: hnscni wires at most one
// address of each family per pod (one HNS endpoint, one default route per
// family). An IPAM config with two range sets of one family is a
// configuration error, whichever the family, and the addresses IPAM gave
// are returned.
func TestIPAMGivingTwoAddressesOfOneFamilyIsRefused(t *testing.T) {
	for name, ranges := range map[string][]string{
		"two IPv4": {"10.244.1.0/24", "10.245.1.0/24"},
		"two IPv6": {"10.244.1.0/24", "fd00:10:244:1::/64", "fd00:10:245:1::/64"},
	} {
		t.Run(name, func(t *testing.T) {
			n1 := startNode(t, "n1", "--node-ip", "192.168.10.1", "--node-ip", "fd00:192:168:10::1",
				"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.1.0/24", "--subnet", "fd00:10:244:1::/64")
			conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.1.0/24", socket: n1.socket, dataDir: t.TempDir()}
			var sets [][]map[string]string
			for _, r := range ranges {
				sets = append(sets, []map[string]string{{"subnet": r}})
			}
			conf.extra = map[string]any{"ipam": map[string]any{"type": "host-local", "ranges": sets, "dataDir": conf.dataDir}}
			rt := newRuntime(t, conf)
			_, err := rt.cni.AddNetworkList(context.Background(), rt.list, pod{id: "x", netns: n1.createNamespace(t)}.rt())
			if cniCode(err) != int(types.ErrInvalidNetworkConfig) {
				t.Fatalf("ADD with %s range sets: %v, want code %d", name, err, types.ErrInvalidNetworkConfig)
			}
			if got := allocated(t, conf.dataDir); len(got) != 0 {
				t.Errorf("addresses left %v", got)
			}
			if s := n1.dump(t); len(s.Endpoints) != 0 {
				t.Errorf("endpoints left %v", names(s))
			}
		})
	}
}
