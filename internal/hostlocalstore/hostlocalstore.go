// Package hostlocalstore reads the address store of host-local, the
// reference IPAM plugin (containernetworking/plugins
// plugins/ipam/host-local/backend/disk): under the IPAM's dataDir one
// directory per network (the configuration's name), in it one file per
// reserved address, named by the address, that holds the attachment that
// reserved it, "<containerID>\r\n<ifname>" (the container ID alone when
// written before host-local recorded the interface). It only reads:
// reservations are made and released by running host-local.
package hostlocalstore

import (
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/plugins/plugins/ipam/host-local/backend/disk"
)

// defaultDataDir is where host-local keeps its store when the
// configuration names no dataDir (disk.New's default, unexported there).
const defaultDataDir = "/var/lib/cni/networks"

// Dir is the directory host-local keeps the reservations of a network
// configuration (conf, the JSON a plugin is given) in: its name under the
// ipam section's dataDir, host-local's default where it names none.
func Dir(conf []byte) (string, error) {
	var c struct {
		Name string `json:"name"`
		IPAM struct {
			DataDir string `json:"dataDir"`
		} `json:"ipam"`
	}
	if err := json.Unmarshal(conf, &c); err != nil {
		return "", err
	}
	return filepath.Join(cmp.Or(c.IPAM.DataDir, defaultDataDir), c.Name), nil
}

// Reservations are the addresses reserved in dir and who holds each; none
// when dir does not exist.
func Reservations(dir string) (map[netip.Addr]types.GCAttachment, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[netip.Addr]types.GCAttachment{}
	for _, e := range entries {
		// The lock and last_reserved_ip.<range> files share the directory.
		// An address's file is named as net.IP prints it, ':' escaped as
		// '_' on Windows (disk.GetEscapedPath).
		a, err := netip.ParseAddr(strings.ReplaceAll(e.Name(), "_", ":"))
		if err != nil || !e.Type().IsRegular() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // released since the listing
		}
		if err != nil {
			return nil, err
		}
		out[a.Unmap()] = parse(raw)
	}
	return out, nil
}

func parse(raw []byte) types.GCAttachment {
	id, ifName, _ := strings.Cut(strings.TrimSpace(string(raw)), disk.LineBreak)
	return types.GCAttachment{ContainerID: id, IfName: ifName}
}
