package cni_test

import (
	"context"
	"testing"
)

// TestDelReleasesUnderAConfigurationADDRefuses: containerd hands DEL the
// configuration it reads now, not the one the pod was added with. One
// edited under running pods into something ADD refuses (a misspelt field,
// a bad CIDR, an unknown mode, a mode of another network type) still names
// the network and the IPAM, and DEL, which the spec asks to complete
// whatever else is wrong, removes the pod's endpoint and releases its
// address, as the reference plugins do.
func TestDelReleasesUnderAConfigurationADDRefuses(t *testing.T) {
	n1, conf := l2bridgeNode(t, 64)
	rt := newRuntime(t, conf)
	for _, c := range []struct {
		name string
		edit map[string]any
	}{
		{"misspelt-field", map[string]any{"serviceCIRD": "10.96.0.0/12"}},
		{"bad-CIDR", map[string]any{"clusterCIDR": "10.244.0.0/33"}},
		{"unknown-mode", map[string]any{"mode": "l2brigde"}},
		// Calico's "usePodCidr" has DEL read the network's subnet, the
		// network being of another type than the mode names.
		{"mode-of-another-network-type", map[string]any{"mode": "overlay",
			"ipam": map[string]any{"type": "host-local", "subnet": "usePodCidr", "dataDir": conf.dataDir}}},
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
			if _, err := rt.cni.AddNetworkList(context.Background(), newRuntime(t, edited).list, pod{id: "new", netns: n1.createNamespace(t)}.rt()); cniCode(err) != 7 {
				t.Errorf("ADD under the edited configuration: %v, want code 7", err)
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

// TestDelReleasesUnderAFieldOfTheWrongType: a configuration edited into
// one whose field DEL does not read has the wrong JSON type ("loopbackDSR":
// "true", a list for "clusterCIDR"), which ADD refuses as malformed (code
// 6), still names the network and the IPAM, and DEL releases the pod. A
// wrong type in a field DEL reads ("network" as a list) is still refused:
// which network to release on is not known.
func TestDelReleasesUnderAFieldOfTheWrongType(t *testing.T) {
	n1, conf := l2bridgeNode(t, 68)
	rt := newRuntime(t, conf)
	for _, c := range []struct {
		name string
		edit map[string]any
	}{
		{"clusterCIDR-as-a-list", map[string]any{"clusterCIDR": []string{"10.244.0.0/16"}}},
		{"loopbackDSR-as-a-string", map[string]any{"loopbackDSR": "true"}},
		{"two-fields", map[string]any{"loopbackDSR": "true", "vxlanPort": -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := pod{id: c.name, netns: n1.createNamespace(t)}
			rt.add(t, p)
			edited := conf
			edited.extra = c.edit
			if err := rt.cni.DelNetworkList(context.Background(), newRuntime(t, edited).list, p.rt()); err != nil {
				t.Fatalf("DEL under the edited configuration: %v (code %d)", err, cniCode(err))
			}
			if got := names(n1.dump(t)); len(got) != 0 {
				t.Errorf("endpoints left %v", got)
			}
			if got := allocated(t, conf.dataDir); len(got) != 0 {
				t.Errorf("addresses left %v", got)
			}
		})
	}
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
