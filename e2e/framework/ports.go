//go:build linux

package framework

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ListenerOwner returns the node whose hnsproxy holds the IPv4 TCP
// listening socket on port, the one a client of 127.0.0.1 reaches. Every
// node's hnsproxy opens health-check node ports on the same machine here,
// and (as kube-proxy does) on every address, so only one of them gets each
// port; this tells which. Only IPv4: each family's health server listens on
// its own socket (tcp4, tcp6), so two nodes' hnsproxy may each hold one
// family's listener on the same port.
func (c *Cluster) ListenerOwner(port int) (*Node, error) {
	inodes, err := listeningInodes(port, "/proc/net/tcp")
	if err != nil {
		return nil, err
	}
	if len(inodes) == 0 {
		return nil, fmt.Errorf("nothing listens on IPv4 TCP port %d", port)
	}
	for _, n := range c.Nodes {
		pid := n.Proxy.PID()
		if pid == 0 {
			continue
		}
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
			if err == nil && inodes[target] {
				return n, nil
			}
		}
	}
	return nil, fmt.Errorf("TCP port %d is held by a process other than the nodes' hnsproxy", port)
}

// listeningInodes are the "socket:[inode]" names of sockets listening on
// port, from the given /proc/net tables (tcp for IPv4, tcp6 for IPv6).
func listeningInodes(port int, tables ...string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, file := range tables {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			p, err := strconv.ParseUint(hexPort, 16, 16)
			if err == nil && int(p) == port {
				out["socket:["+fields[9]+"]"] = true
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
