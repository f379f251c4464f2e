package sourcevip

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/containernetworking/cni/libcni"
)

// ipamInput is what the IPAM plugin reads on stdin for the reservation,
// and where it came from.
type ipamInput struct {
	// Type is the IPAM plugin's binary name.
	Type string
	// Conf is the plugin's network configuration as a runtime hands it to
	// the CNI plugin (the list's name and cniVersion, the "ipam" section
	// resolved as the CNI plugin resolves it), which IPAM plugins read.
	Conf json.RawMessage
	// Source is the configuration file.
	Source string
}

// findIPAM reads the node's CNI configuration in confDir and returns the
// IPAM input that reserves an address of subnet on the HNS network named
// network. The configuration is the first file (in name order, as
// containerd and the kubelet pick it) whose network is the HNS network,
// else the first file; a file before any loadable one is an error, as
// containerd stops there. How its first plugin's "ipam" is resolved:
//   - "type": "flannel" (no ipam: Flannel gives its delegate host-local over
//     the node's subnet with host-local's default store) → the same;
//   - Calico's "subnet": "usePodCidr" → the HNS network's subnet, as hnscni
//     and Calico resolve it;
//   - no ipam at all (HNS assigns pod addresses) → an error: there is no
//     IPAM to reserve through.
func findIPAM(confDir, network string, subnet netip.Prefix) (ipamInput, error) {
	files, err := libcni.ConfFiles(confDir, []string{".conf", ".conflist", ".json"})
	if err != nil {
		return ipamInput{}, fmt.Errorf("reading the CNI configuration directory %s: %w", confDir, err)
	}
	var chosen *libcni.NetworkConfigList
	var source string
	for _, f := range files {
		list, err := loadList(f)
		if err != nil && chosen == nil {
			// containerd (go-cni's loadFromConfDir) stops at it too: the
			// node's pods get no network until the file is fixed.
			return ipamInput{}, fmt.Errorf("CNI configuration %s: %w; containerd cannot load it either", f, err)
		}
		if err != nil {
			continue // containerd uses the loadable file before it and never reads this one
		}
		if chosen == nil {
			chosen, source = list, f
		}
		if names(list, network) {
			chosen, source = list, f
			break
		}
	}
	if chosen == nil {
		return ipamInput{}, fmt.Errorf("no CNI network configuration in %s", confDir)
	}
	var plugin map[string]any
	if err := json.Unmarshal(chosen.Plugins[0].Bytes, &plugin); err != nil {
		return ipamInput{}, fmt.Errorf("%s: %w", source, err)
	}
	ipam, _ := plugin["ipam"].(map[string]any)
	switch {
	case strings.EqualFold(fmt.Sprint(plugin["type"]), "flannel") && ipam == nil:
		ipam = map[string]any{"type": "host-local"}
		if subnet.IsValid() {
			ipam["subnet"] = subnet.String()
		}
	case ipam == nil || ipam["type"] == nil || ipam["type"] == "":
		return ipamInput{}, fmt.Errorf("%s names no IPAM plugin (HNS assigns the pods' addresses), so there is none to reserve the source VIP through", source)
	}
	if ipam["subnet"] == "usePodCidr" {
		if !subnet.IsValid() {
			return ipamInput{}, fmt.Errorf("%s: ipam subnet usePodCidr, and the HNS network has no subnet", source)
		}
		ipam["subnet"] = subnet.String()
	}
	plugin["ipam"] = ipam
	plugin["name"] = chosen.Name
	plugin["cniVersion"] = chosen.CNIVersion
	raw, err := json.Marshal(plugin)
	if err != nil {
		return ipamInput{}, err
	}
	return ipamInput{Type: fmt.Sprint(ipam["type"]), Conf: raw, Source: source}, nil
}

// loadList loads a configuration list, or a single configuration (a
// .conf) as the list of one a runtime makes of it.
func loadList(file string) (*libcni.NetworkConfigList, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if err := notUTF8(raw); err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if _, isList := doc["plugins"]; !isList {
		if raw, err = json.Marshal(map[string]any{"cniVersion": doc["cniVersion"], "name": doc["name"], "plugins": []any{doc}}); err != nil {
			return nil, err
		}
	}
	list, err := libcni.NetworkConfFromBytes(raw)
	if err == nil && len(list.Plugins) == 0 {
		err = errors.New("the list has no plugins")
	}
	return list, err
}

// notUTF8 explains a file saved the ways Windows tools save text that are
// not JSON to libcni (encoding/json, UTF-8 only, no byte order mark),
// where its own error would be an "invalid character" at the first byte.
func notUTF8(raw []byte) error {
	switch {
	case bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")):
		return errors.New("the file starts with a UTF-8 byte order mark (as Notepad's \"UTF-8\" before Windows 10 1903 and PowerShell 5.1's -Encoding UTF8 save it), which is not JSON: save it as UTF-8 without one")
	case len(raw) >= 2 && (raw[0] == 0 || raw[1] == 0 || bytes.HasPrefix(raw, []byte("\xff\xfe")) || bytes.HasPrefix(raw, []byte("\xfe\xff"))):
		// JSON starts with an ASCII character, which UTF-16 pairs with a NUL.
		return errors.New("the file is UTF-16 (as PowerShell 5.1's Out-File and > save text), which is not JSON: save it as UTF-8, e.g. with Set-Content or Out-File -Encoding ascii")
	}
	return nil
}

// names reports a configuration whose HNS network is network: the first
// plugin's "network" (hnscni), else the network's name (Flannel, the
// reference plugins, Calico). HNS network names match without regard to
// case.
func names(list *libcni.NetworkConfigList, network string) bool {
	var p struct {
		Network string `json:"network"`
	}
	_ = json.Unmarshal(list.Plugins[0].Bytes, &p)
	if p.Network != "" {
		return strings.EqualFold(p.Network, network)
	}
	return strings.EqualFold(list.Name, network)
}
