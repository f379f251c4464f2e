package cni_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestDelReleasesUnderAConfigurationADDRefuses: containerd hands DEL the
// configuration it reads now, not the one the pod was added with. One
// edited under running pods into something ADD refuses (a misspelt field,
// a bad CIDR, an unknown mode, a mode of another network type) still names
// the network and the IPAM, and DEL, which the spec asks to complete
// whatever else is wrong, removes the pod's endpoint and releases its
// address, as the reference plugins do. So does one whose field DEL does
// not read has the wrong JSON type ("loopbackDSR": "true", a list for
// "clusterCIDR"), which ADD refuses as malformed (code 6).
func TestDelReleasesUnderAConfigurationADDRefuses(t *testing.T) {
	n1, conf := l2bridgeNode(t, 64)
	rt := newRuntime(t, conf)
	for _, c := range []struct {
		name    string
		edit    map[string]any
		addCode int // what ADD answers under it
	}{
		{"misspelt-field", map[string]any{"serviceCIRD": "10.96.0.0/12"}, 7},
		{"bad-CIDR", map[string]any{"clusterCIDR": "10.244.0.0/33"}, 7},
		{"unknown-mode", map[string]any{"mode": "l2brigde"}, 7},
		// Calico's "usePodCidr" has DEL read the network's subnet, the
		// network being of another type than the mode names.
		{"mode-of-another-network-type", map[string]any{"mode": "overlay",
			"ipam": map[string]any{"type": "host-local", "subnet": "usePodCidr", "dataDir": conf.dataDir}}, 7},
		{"clusterCIDR-as-a-list", map[string]any{"clusterCIDR": []string{"10.244.0.0/16"}}, 6},
		{"loopbackDSR-as-a-string", map[string]any{"loopbackDSR": "true"}, 6},
		{"two-fields-of-the-wrong-type", map[string]any{"loopbackDSR": "true", "vxlanPort": -1}, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := pod{id: c.name, netns: n1.createNamespace(t)}
			rt.add(t, p)
			edited := conf
			edited.extra = c.edit
			if err := rt.cni.DelNetworkList(context.Background(), newRuntime(t, edited).list, p.rt()); err != nil {
				t.Fatalf("DEL under the edited configuration: %v", err)
			}
			if got := names(n1.dump(t)); len(got) != 0 {
				t.Errorf("endpoints left %v", got)
			}
			if got := allocated(t, conf.dataDir); len(got) != 0 {
				t.Errorf("addresses left %v", got)
			}
			if _, err := rt.cni.AddNetworkList(context.Background(), newRuntime(t, edited).list, pod{id: "new", netns: n1.createNamespace(t)}.rt()); cniCode(err) != c.addCode {
				t.Errorf("ADD under the edited configuration: %v, want code %d", err, c.addCode)
			}
		})
	}
}

// TestDelWithAPrevResultThatDoesNotParse: libcni hands DEL the ADD's result
// converted to the configuration's version; a runtime that does not (here a
// 0.4.0 result in a 1.1.0 configuration) still gets its pod released, as
// DEL reads prevResult only where the network is gone.
func TestDelWithAPrevResultThatDoesNotParse(t *testing.T) {
	n1, conf := l2bridgeNode(t, 65)
	p := pod{id: "p1", netns: n1.createNamespace(t)}
	newRuntime(t, conf).add(t, p)
	conf.extra = map[string]any{"prevResult": map[string]any{"cniVersion": "0.4.0", "ips": []any{}}}
	if err, _ := newSandbox(t).run(t, map[string]string{"CNI_COMMAND": "DEL", "CNI_CONTAINERID": p.id}, conf.pluginJSON(t)); err != nil {
		t.Fatalf("DEL: %+v", err)
	}
	if got := names(n1.dump(t)); len(got) != 0 {
		t.Errorf("endpoints left %v", got)
	}
	if got := allocated(t, conf.dataDir); len(got) != 0 {
		t.Errorf("addresses left %v", got)
	}
}

// TestDelRefusesAWrongTypeInAFieldItReads: a configuration whose field
// DEL reads has the wrong JSON type ("network" as a list) is refused (code
// 6), the pod left as it is: which network to release it on is not known.
// (A wrong type in a field DEL does not read releases the pod:
// TestDelReleasesUnderAConfigurationADDRefuses.)
func TestDelRefusesAWrongTypeInAFieldItReads(t *testing.T) {
	n1, conf := l2bridgeNode(t, 68)
	rt := newRuntime(t, conf)
	p := pod{id: "network-as-a-list", netns: n1.createNamespace(t)}
	rt.add(t, p)
	edited := conf
	edited.extra = map[string]any{"network": []string{"cbr0"}, "loopbackDSR": "true"}
	if err := rt.cni.DelNetworkList(context.Background(), newRuntime(t, edited).list, p.rt()); cniCode(err) != 6 {
		t.Errorf("DEL with the network's name as a list: %v, want code 6", err)
	}
	if got := names(n1.dump(t)); len(got) != 1 {
		t.Errorf("endpoints after the refused DEL %v, want the pod's", got)
	}
	rt.del(t, p)
}

// TestDelLeavesALegacyNamedEndpointOfAnotherNetwork: DEL finds an
// attachment's endpoint under the name earlier hnscni releases gave it,
// "<containerID>_<ifname>", only on the configured network. That name
// carries no network, so one on another network is another network's
// pod (or another agent's endpoint) and stays, attached and holding its
// address, when the runtime DELs the attachment on this network.
func TestDelLeavesALegacyNamedEndpointOfAnotherNetwork(t *testing.T) {
	ctx := context.Background()
	n1, conf := l2bridgeNode(t, 65)
	other, err := n1.client.CreateNetwork(ctx, &hnslb.Network{Name: "other", Type: hnslb.NetworkTypeL2Bridge, SchemaVersion: hnslb.V2,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.245.65.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	p := pod{id: "elsewhere", netns: n1.createNamespace(t)}
	// As an earlier hnscni wired it on the other network: MAC from the address.
	wireByHand(t, n1, other.ID, p, &hnslb.Endpoint{Name: p.id + "_eth0", MacAddress: "0E-2A-0A-F5-41-07",
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.245.65.7", PrefixLength: 24}}})

	newRuntime(t, conf).del(t, p)

	if e := endpointByName(n1.dump(t), p.id+"_eth0"); e == nil || e.HostComputeNamespace == "" {
		t.Errorf("DEL on cbr0 removed or detached %s_eth0, the other network's endpoint: %+v", p.id, e)
	}
}

// TestDelCompletesWhenItsDetachAnswersNotFound: a detach HNS answers "not
// found" (the namespace gone, or the endpoint no longer in it) leaves
// nothing to detach; DEL goes on, deletes the endpoint and releases the
// address, and succeeds.
func TestDelCompletesWhenItsDetachAnswersNotFound(t *testing.T) {
	n1, conf := l2bridgeNode(t, 66)
	rt := newRuntime(t, conf)
	p := pod{id: "detached", netns: n1.createNamespace(t)}
	rt.add(t, p)
	n1.hnssim(t, "faults", "--error-rate", "RemoveNamespaceEndpoint=1", "--error-code", "0x490")
	rt.del(t, p)
	n1.hnssim(t, "faults")
	if s := n1.dump(t); len(s.Endpoints) != 0 || len(allocated(t, conf.dataDir)) != 0 {
		t.Errorf("after DEL: endpoints %v, addresses %v", names(s), allocated(t, conf.dataDir))
	}
}

// TestDelReleasesUnderARefusedConfigurationNamingTheNetworkByName: a
// reference configuration names its HNS network by "name" alone, without
// "network". Edited into one ADD refuses (a misspelt field), it still
// names the network, and DEL removes the pod and releases its address.
func TestDelReleasesUnderARefusedConfigurationNamingTheNetworkByName(t *testing.T) {
	n1 := startNode(t, "n1", "--network-name", "pods", "--network-type", "l2bridge", "--subnet", "10.244.69.0/24")
	conf := netConf{version: "1.1.0", mode: "l2bridge", subnet: "10.244.69.0/24", socket: n1.socket, dataDir: t.TempDir()}
	p := pod{id: "by-name", netns: n1.createNamespace(t)}
	newRuntime(t, conf).add(t, p)
	var edited map[string]any
	if err := json.Unmarshal(conf.pluginJSON(t), &edited); err != nil {
		t.Fatal(err)
	}
	delete(edited, "network")
	edited["serviceCIRD"] = "10.96.0.0/12"
	stdin, err := json.Marshal(edited)
	if err != nil {
		t.Fatal(err)
	}
	if err, _ := newSandbox(t).run(t, map[string]string{"CNI_COMMAND": "DEL", "CNI_CONTAINERID": p.id}, stdin); err != nil {
		t.Fatalf("DEL: %+v", err)
	}
	if got := names(n1.dump(t)); len(got) != 0 {
		t.Errorf("endpoints left %v", got)
	}
	if got := allocated(t, conf.dataDir); len(got) != 0 {
		t.Errorf("addresses left %v", got)
	}
}
