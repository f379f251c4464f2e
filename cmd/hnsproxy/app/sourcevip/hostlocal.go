package sourcevip

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/hnsproxy/hnsproxy/internal/hostlocalstore"
	"github.com/hnsproxy/hnsproxy/internal/sourcevipipam"
)

// hostLocalHolds says whether host-local's store still reserves the
// record's address for hnsproxy's attachment. A configuration older than
// CNI 0.4.0 has no IPAM CHECK (Flannel's Windows configurations say 0.2.0
// or 0.3.0), but a store wiped since the reservation (as after a reboot,
// when the pods' reservations would otherwise stay taken) keeps no pod off
// the address, and the record alone cannot tell.
func (r record) hostLocalHolds() error {
	dir, err := hostlocalstore.Dir(r.Conf)
	if err != nil {
		return err
	}
	reserved, err := hostlocalstore.Reservations(dir)
	if err != nil {
		return err
	}
	// A host-local before it recorded the interface wrote the container ID alone.
	if h, ok := reserved[r.Address]; !ok || h.ContainerID != sourcevipipam.ContainerID || h.IfName != sourcevipipam.IfName && h.IfName != "" {
		return fmt.Errorf("host-local's store %s does not reserve %s for %s", dir, r.Address, sourcevipipam.ContainerID)
	}
	return nil
}

// storeMoved says why the reservation no longer keeps the network's pods
// off its address although the network and its subnet are the same
// (movedOff), "" while it does: the node's CNI configuration now names
// another IPAM plugin, or keeps host-local's addresses in another store
// (the configuration renamed, another dataDir). The old store still holds
// the address, so CHECK passes, and the new one may hand it to a pod. A
// configuration hnsproxy cannot read now says nothing against the record.
func (r record) storeMoved(o Options) string {
	in, err := findIPAM(o.ConfDir, o.Network, o.Subnet)
	switch {
	case err != nil:
		return ""
	case in.Type != r.Type:
		return "the node's CNI configuration now names another IPAM plugin"
	case r.Type != "host-local":
		return ""
	}
	was, err := hostlocalstore.Dir(r.Conf)
	if err != nil {
		return ""
	}
	now, err := hostlocalstore.Dir(in.Conf)
	if err != nil || sameDir(was, now) {
		return ""
	}
	return "the node's CNI configuration keeps the pods' addresses in another host-local store"
}

// sameDir compares two store paths as the file system does: Windows
// ignores case.
func sameDir(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}
