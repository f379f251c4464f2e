package sourcevip

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/internal/atomicfile"
	"github.com/hnsproxy/hnsproxy/internal/sourcevipipam"
)

// Options say where the node's CNI files are and which network needs a VIP.
type Options struct {
	// ConfDir and BinDir are the node's CNI configuration and plugin
	// directories (containerd's conf_dir and bin_dir).
	ConfDir, BinDir string
	// Network is the HNS network's name; Subnet its pod subnet.
	Network string
	Subnet  netip.Prefix
	// Record is the reservation record's path (RecordFile).
	Record string
}

// record is what the reservation record file holds.
type record struct {
	Address netip.Addr      `json:"address"`
	Type    string          `json:"ipamType"`
	Conf    json.RawMessage `json:"conf"`
	Result  json.RawMessage `json:"result"`
	Source  string          `json:"source"`
	// Network and Subnet are the HNS network's name and subnet when the
	// address was reserved (empty in a record from before they were kept).
	Network string       `json:"network,omitempty"`
	Subnet  netip.Prefix `json:"subnet"`
}

// movedOff says why the reservation no longer serves the network o names,
// "" while it does. hnsproxy moved to another network (another
// --network-name): that network's pods take addresses from its own IPAM
// configuration and store, which do not hold this one. The network's subnet
// is not the one the address was reserved in and does not hold it (the
// network made again with another subnet). An address outside an unchanged
// subnet is kept: an IPAM that does not follow the network's subnet
// (calico-ipam allocates from Calico's pool) would otherwise get a new one
// at each start.
func (r record) movedOff(o Options) string {
	switch {
	case r.Network != "" && !strings.EqualFold(r.Network, o.Network):
		return "hnsproxy now uses another HNS network"
	case o.Subnet.IsValid() && r.Subnet != o.Subnet && !o.Subnet.Contains(r.Address):
		return "the HNS network's subnet changed and no longer holds it"
	}
	return ""
}

// RecordFile is the reservation record beside hnsproxy's state file.
func RecordFile(stateFile string) string {
	return filepath.Join(filepath.Dir(stateFile), "source-vip.json")
}

// Reserve returns the node's source VIP: the recorded one if the IPAM
// still holds it for hnsproxy (IPAM CHECK, from CNI 0.4.0; before,
// host-local's store) and it still serves the network (movedOff) from the
// store the network's pods take addresses from (storeMoved), else a new
// reservation (IPAM ADD), recorded before it is used. A plugin cut short
// by ctx's end (the daemon stopping) says nothing of the IPAM: Reserve
// then returns ctx's error, so the stop reads as a stop, not a failure.
// Nor does one killed at its deadline (ipamCallTimeout): Reserve returns
// that error at once, keeping the record, and the start fails.
func Reserve(ctx context.Context, o Options) (netip.Addr, error) {
	logger := klog.FromContext(ctx)
	r, err := readRecord(o.Record)
	var moved string
	if err == nil {
		moved = cmp.Or(r.movedOff(o), r.storeMoved(o))
	}
	switch {
	case moved != "":
		// The old IPAM still holds the address, so CHECK passes, but the
		// network's pods may be given it, or the answers to load balancers
		// that SNAT to it be routed to whichever node has the old subnet now.
		logger.Info("Warning: the recorded source VIP no longer serves the HNS network; releasing it and reserving again",
			"why", moved, "address", r.Address, "reservedOn", r.Network, "reservedIn", r.Subnet, "network", o.Network, "subnet", o.Subnet)
		if err := r.release(ctx, o.BinDir); errors.Is(err, errIPAMHung) {
			return netip.Addr{}, err
		}
	case err == nil:
		err = r.check(ctx, o.BinDir)
		if err == nil {
			logger.Info("Using the recorded source VIP", "address", r.Address, "ipam", r.Type, "record", o.Record)
			return r.Address, nil
		}
		if ctx.Err() != nil {
			return netip.Addr{}, ctx.Err()
		}
		if errors.Is(err, errIPAMHung) {
			return netip.Addr{}, err // not lost: the record and the reservation stay
		}
		// The IPAM lost it (its store wiped): release what is left and reserve again.
		logger.Info("Warning: the IPAM no longer holds the recorded source VIP; reserving again", "address", r.Address, "err", err)
		if err := r.release(ctx, o.BinDir); errors.Is(err, errIPAMHung) {
			return netip.Addr{}, err
		}
	case errors.Is(err, errRecordDamaged):
		// Which address it named is lost; the reservation below releases
		// the attachment's (IPAM DEL) before it reserves again.
		logger.Info("Warning: the source VIP record is damaged; reserving again", "err", err)
	case !errors.Is(err, fs.ErrNotExist):
		return netip.Addr{}, err
	}
	in, err := findIPAM(o.ConfDir, o.Network, o.Subnet)
	if err != nil {
		return netip.Addr{}, err
	}
	r = record{Type: in.Type, Conf: in.Conf, Source: in.Source, Network: o.Network, Subnet: o.Subnet}
	// A start killed or stopped between its ADD and its record left the
	// IPAM holding an address for hnsproxy's attachment, never used (the
	// record comes first), and host-local refuses a second ADD for one
	// attachment ("duplicate allocation is not allowed"): every later
	// start would fail. DEL, which CNI requires to succeed when there is
	// nothing to release, gives such a reservation back first.
	if err := r.release(ctx, o.BinDir); errors.Is(err, errIPAMHung) {
		return netip.Addr{}, err
	} else if err != nil && ctx.Err() == nil {
		logger.Info("Warning: IPAM DEL of an unrecorded source VIP reservation failed; reserving anyway", "ipam", in.Type, "err", err)
	}
	res, err := r.add(ctx, o.BinDir)
	if err != nil {
		if ctx.Err() != nil {
			return netip.Addr{}, ctx.Err()
		}
		return netip.Addr{}, fmt.Errorf("IPAM %s ADD (CNI configuration %s): %w", in.Type, in.Source, err)
	}
	if r.Address, err = firstIPv4(res); err == nil {
		if r.Result, err = json.Marshal(res); err == nil {
			err = writeRecord(o.Record, r)
		}
	}
	if err != nil {
		_ = r.release(ctx, o.BinDir)
		return netip.Addr{}, err
	}
	logger.Info("Reserved the overlay source VIP through the node's CNI IPAM", "address", r.Address, "ipam", in.Type, "cniConfig", in.Source, "containerID", sourcevipipam.ContainerID)
	return r.Address, nil
}

// Release gives a recorded reservation back to its IPAM (IPAM DEL) and
// removes the record; without a record there is nothing to release.
func Release(ctx context.Context, recordFile, binDir string) (netip.Addr, error) {
	r, err := readRecord(recordFile)
	if errors.Is(err, fs.ErrNotExist) {
		return netip.Addr{}, nil
	}
	if errors.Is(err, errRecordDamaged) {
		return netip.Addr{}, fmt.Errorf("%w: remove it, or release the address by hand", err)
	}
	if err != nil {
		return netip.Addr{}, err
	}
	if err := r.release(ctx, binDir); err != nil {
		return netip.Addr{}, fmt.Errorf("releasing the source VIP %s (IPAM %s DEL): %w", r.Address, r.Type, err)
	}
	if err := os.Remove(recordFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return netip.Addr{}, err
	}
	return r.Address, nil
}

// Recorded is the source VIP the record holds, zero without a record. It
// only reads (hnsproxy-diag computes what the daemon programs with it).
func Recorded(recordFile string) (netip.Addr, error) {
	r, err := readRecord(recordFile)
	if errors.Is(err, fs.ErrNotExist) {
		return netip.Addr{}, nil
	}
	return r.Address, err
}

// check asks the IPAM whether it still holds the reservation. IPAM CHECK
// exists from CNI 0.4.0; before, host-local's store is read
// (hostLocalHolds), and another IPAM's record is trusted.
func (r record) check(ctx context.Context, binDir string) error {
	var probe struct {
		CNIVersion string `json:"cniVersion"`
	}
	_ = json.Unmarshal(r.Conf, &probe)
	if ok, err := version.GreaterThanOrEqualTo(probe.CNIVersion, "0.4.0"); err != nil || !ok {
		if r.Type == "host-local" {
			return r.hostLocalHolds()
		}
		return nil
	}
	var conf map[string]any
	if err := json.Unmarshal(r.Conf, &conf); err != nil {
		return err
	}
	var prev any
	if err := json.Unmarshal(r.Result, &prev); err != nil {
		return err
	}
	conf["prevResult"] = prev
	raw, err := json.Marshal(conf)
	if err != nil {
		return err
	}
	return r.run(ctx, "CHECK", binDir, raw)
}

func (r record) release(ctx context.Context, binDir string) error {
	return r.run(ctx, "DEL", binDir, r.Conf)
}

func (r record) add(ctx context.Context, binDir string) (types.Result, error) {
	path, args, err := r.invocation("ADD", binDir)
	if err != nil {
		return nil, err
	}
	var res types.Result
	err = withDeadline(ctx, r.Type, "ADD", func(ctx context.Context) (err error) {
		res, err = invoke.ExecPluginWithResult(ctx, path, r.Conf, args, nil)
		return err
	})
	return res, err
}

func (r record) run(ctx context.Context, command, binDir string, stdin []byte) error {
	path, args, err := r.invocation(command, binDir)
	if err != nil {
		return err
	}
	return withDeadline(ctx, r.Type, command, func(ctx context.Context) error {
		return invoke.ExecPluginWithoutResult(ctx, path, stdin, args, nil)
	})
}

// invocation is the IPAM plugin and its arguments, as a runtime would run
// it for hnsproxy's attachment (host-local needs no network namespace).
func (r record) invocation(command, binDir string) (string, *invoke.Args, error) {
	path, err := invoke.FindInPath(r.Type, []string{binDir})
	if err != nil {
		return "", nil, err
	}
	return path, &invoke.Args{Command: command, ContainerID: sourcevipipam.ContainerID, NetNS: "none", IfName: sourcevipipam.IfName, Path: binDir}, nil
}

// firstIPv4 is the IPv4 address of an IPAM result (HNS overlay is IPv4 only).
func firstIPv4(res types.Result) (netip.Addr, error) {
	cur, err := current.NewResultFromResult(res)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("IPAM result: %w", err)
	}
	for _, ipc := range cur.IPs {
		if v4 := ipc.Address.IP.To4(); v4 != nil {
			a, _ := netip.AddrFromSlice(v4)
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("IPAM result %v has no IPv4 address", cur.IPs)
}

func readRecord(path string) (record, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return record{}, err
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		return record{}, fmt.Errorf("source VIP record %s %w: %v", path, errRecordDamaged, err)
	}
	if !r.Address.IsValid() || r.Type == "" {
		return record{}, fmt.Errorf("source VIP record %s %w: it names no address or no IPAM", path, errRecordDamaged)
	}
	return r, nil
}

// errRecordDamaged marks a record file that holds no whole record: one
// hnsproxy did not write, or, before records reached the disk before their
// rename, one a power loss left empty.
var errRecordDamaged = errors.New("is damaged")

// writeRecord writes the record atomically and durably: a crash or a power
// loss leaves the old record or the new one.
func writeRecord(path string, r record) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, raw, 0o600)
}
