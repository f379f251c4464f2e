package sourcevip

import (
	"encoding/json"
	"fmt"

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
	var conf struct {
		Name string `json:"name"`
		IPAM struct {
			DataDir string `json:"dataDir"`
		} `json:"ipam"`
	}
	if err := json.Unmarshal(r.Conf, &conf); err != nil {
		return err
	}
	dir := hostlocalstore.Dir(conf.IPAM.DataDir, conf.Name)
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
