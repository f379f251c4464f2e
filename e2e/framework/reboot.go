//go:build linux

package framework

import (
	"context"
	"errors"
	"os"
	"path/filepath"
)

// ReplaceHNS stops the node's hnssim and starts a fresh one on the same
// socket, with only the network its provisioning creates: what HNS holds
// after a node reboot (hnssim keeps no state without --state). hnsproxy
// is left as it is; a reboot also restarts it (Proxy.Restart).
func (c *Cluster) ReplaceHNS(ctx context.Context, n *Node) error {
	if c.Spec.Windows {
		return errors.New("ReplaceHNS: the Windows lane's hnssim also serves the node's HCN bridge; not supported there")
	}
	if err := n.Sim.Stop(); err != nil {
		return err
	}
	if err := os.Remove(n.Sim.Socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	binDir, err := Tools()
	if err != nil {
		return err
	}
	n.Sim, err = startHNSSim(ctx, filepath.Join(binDir, HNSSimBin), n.dir, n.Spec.Name, c.hnssimArgs(n.Spec))
	return err
}
