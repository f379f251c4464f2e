package remote

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Paths of the HNS API. Objects are addressed by ID; lookups by name use
// ?name=.
const (
	pathVersion       = "/version"
	pathOSBuild       = "/osbuild"
	pathInstance      = "/serviceinstance"
	pathNetworks      = "/networks"
	pathEndpoints     = "/endpoints"
	pathNamespaces    = "/namespaces"
	pathLoadBalancers = "/loadbalancers"

	pathDump   = "/dump"
	pathStats  = "/stats"
	pathNode   = "/node"
	pathTrace  = "/trace"
	pathFaults = "/faults"
	// pathRemoteSubnets replaces an overlay network's RemoteSubnetRoute
	// policies, as flannel does on Windows when nodes come and go.
	pathRemoteSubnets = "/remote-subnets"
)

// An ID travels as one path segment, which the router would clean away if
// it were empty, "." or "..": those would come back as a redirect or "page
// not found" instead of HNS's answer to such an ID. So dots travel escaped
// and an empty ID as emptyID, which no HNS ID can be (a GUID has no NUL).
// The router also takes a segment that is "/" once unescaped for a
// trailing slash, whatever its escaping, so the ID "/" travels as slashID.
const (
	emptyID = "\x00"
	slashID = "\x00/"
)

// idSegment is id as a path segment.
func idSegment(id string) string {
	switch id {
	case "":
		id = emptyID
	case "/":
		id = slashID
	}
	return strings.ReplaceAll(url.PathEscape(id), ".", "%2E")
}

// segmentID is the ID a path segment idSegment made carries.
func segmentID(segment string) string {
	switch segment {
	case emptyID:
		return ""
	case slashID:
		return "/"
	}
	return segment
}

// httpStatus is the status a failed call answers with. Clients read the
// code from the body; the status only helps people reading with curl.
func httpStatus(err error) int {
	switch {
	case hnslb.IsNotFound(err):
		return http.StatusNotFound
	case hnslb.IsAddressRefused(err), hnslb.IsPortAlreadyExists(err):
		return http.StatusConflict
	case hnslb.IsInvalidParameter(err):
		return http.StatusBadRequest
	case hnslb.IsNotImplemented(err):
		return http.StatusNotImplemented
	case hnslb.IsUnavailable(err):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// wireError is an *hnslb.Error on the wire.
type wireError struct {
	Op      string
	Code    hnslb.ErrorCode
	Message string
}

// NodeInfo is what a served node says about itself: the packet model needs
// a node's name, its host addresses (also its overlay provider address) and
// the HNS network its pods are on.
type NodeInfo struct {
	Name        string   `json:"name"`
	IPs         []string `json:"ips,omitempty"`
	NetworkName string   `json:"networkName,omitempty"`
}

// PeerNode is another node's state shipped with a trace request, so one
// server can trace a packet across several nodes.
type PeerNode struct {
	NodeInfo
	HNS *hnslb.Snapshot `json:"hns"`
}

// TraceRequest asks the served node to trace a packet. Protocol is "tcp",
// "udp", "icmp" or "icmpv6"; Src may omit the port.
type TraceRequest struct {
	Src      string     `json:"src"`
	Dst      string     `json:"dst"`
	Protocol string     `json:"protocol"`
	Ingress  string     `json:"ingress,omitempty"`
	Peers    []PeerNode `json:"peers,omitempty"`
}

// FaultsRequest changes the simulator's injected faults. ErrorRate keys are
// operation names ("*" for all); Errors are HNS codes a failing call draws
// from (empty: HNS unavailable). Restart, when positive, makes every call
// fail as unavailable for that long, after dropping what RestartLoses names
// (a sim.RestartLoss: "" keeps every object). Latency, when set, replaces the latency
// of one hcn RPC (a call waits it once per RPC it costs). Hang and HangReply
// name operations ("*" for all) whose calls are held before they reach HNS,
// or after HNS applied them, until a request without them (sim.Faults.Hang).
type FaultsRequest struct {
	ErrorRate map[string]float64 `json:"errorRate,omitempty"`
	Errors    []hnslb.ErrorCode  `json:"errors,omitempty"`
	// Committed is the share (0..1) of failed writes HNS applied anyway.
	Committed float64  `json:"committed,omitempty"`
	Restart   Duration `json:"restart,omitempty"`
	// RestartLoses is what the restart drops (sim.RestartLosses; the
	// server refuses any other).
	RestartLoses string    `json:"restartLoses,omitempty"`
	Latency      *Duration `json:"latency,omitempty"`
	Hang         []string  `json:"hang,omitempty"`
	HangReply    []string  `json:"hangReply,omitempty"`
	// TakenPorts are "tcp/PORT" or "udp/PORT": ports on which HNS refuses
	// new load balancer frontends while no load balancer holds them
	// (sim.Faults.TakenPorts; the server refuses any other form).
	TakenPorts []string `json:"takenPorts,omitempty"`
	// ReservedAddresses are IP addresses on which HNS refuses new endpoints
	// as invalid or reserved while no endpoint holds them
	// (sim.Faults.ReservedAddresses; the server refuses what is not an IP).
	ReservedAddresses []string `json:"reservedAddresses,omitempty"`
	// KeptOnDelete is the share (0..1) of load balancer and endpoint
	// deletes HNS reports done while keeping the object
	// (sim.Faults.KeptOnDelete).
	KeptOnDelete float64 `json:"keptOnDelete,omitempty"`
	// KeptDeletes is how many of the next load balancer and endpoint
	// deletes HNS reports done while keeping the object
	// (sim.Faults.KeptDeletes; 0..MaxFaultKeptDeletes).
	KeptDeletes int `json:"keptDeletes,omitempty"`
	// PartialCreates is the share (0..1) of failed load balancer creates
	// that leave a load balancer without port mappings, holding its
	// frontend unseen if PartialHoldsFrontend (sim.Faults.PartialCreates).
	PartialCreates       float64 `json:"partialCreates,omitempty"`
	PartialHoldsFrontend bool    `json:"partialHoldsFrontend,omitempty"`
	// ListedTwice and LeftOutOfListings are the shares (0..1) of objects a
	// listing answers twice or leaves out (sim.Faults.ListedTwice,
	// sim.Faults.LeftOutOfListings).
	ListedTwice       float64 `json:"listedTwice,omitempty"`
	LeftOutOfListings float64 `json:"leftOutOfListings,omitempty"`
	// LeftOutInARow, above 0, is the most listings in a row that leave out
	// one object (sim.Faults.LeftOutInARow).
	LeftOutInARow int `json:"leftOutInARow,omitempty"`
	// GetsLeaveOut makes gets by ID or by name leave objects out as
	// listings do (sim.Faults.GetsLeaveOut).
	GetsLeaveOut bool `json:"getsLeaveOut,omitempty"`
}

// Limits of FaultsRequest: a fault window or latency beyond these is a
// mistake (a unit slip), not a scenario.
const (
	MaxFaultRestart = time.Hour
	MaxFaultLatency = time.Minute
	// MaxFaultHangs bounds Hang and HangReply: there are fewer operations.
	MaxFaultHangs = 32
	// MaxFaultKeptDeletes bounds KeptDeletes: more is KeptOnDelete 1.
	MaxFaultKeptDeletes = 1000
	// MaxFaultLeftOutInARow bounds LeftOutInARow: more is no bound at all.
	MaxFaultLeftOutInARow = 1000
)

// Validate refuses nonsense: probabilities outside 0..1 (or NaN), a code 0,
// negative or absurd restart windows and latencies.
func (f FaultsRequest) Validate() error {
	for op, rate := range f.ErrorRate {
		if !(rate >= 0 && rate <= 1) {
			return fmt.Errorf("errorRate[%q] = %v: must be within 0..1", op, rate)
		}
	}
	// A failure's code is never 0 (S_OK), and the wire reads an error
	// without a code as no HNS error: a client would take it for HNS down.
	for i, code := range f.Errors {
		if code == 0 {
			return fmt.Errorf("errors[%d] = 0: a failure's code is never 0 (S_OK)", i)
		}
	}
	for field, share := range map[string]float64{"committed": f.Committed, "keptOnDelete": f.KeptOnDelete, "partialCreates": f.PartialCreates,
		"listedTwice": f.ListedTwice, "leftOutOfListings": f.LeftOutOfListings} {
		if !(share >= 0 && share <= 1) {
			return fmt.Errorf("%s = %v: must be within 0..1", field, share)
		}
	}
	if f.LeftOutInARow < 0 || f.LeftOutInARow > MaxFaultLeftOutInARow {
		return fmt.Errorf("leftOutInARow = %d: must be within 0..%d", f.LeftOutInARow, MaxFaultLeftOutInARow)
	}
	if f.KeptDeletes < 0 || f.KeptDeletes > MaxFaultKeptDeletes {
		return fmt.Errorf("keptDeletes = %d: must be within 0..%d", f.KeptDeletes, MaxFaultKeptDeletes)
	}
	if r := time.Duration(f.Restart); r < 0 || r > MaxFaultRestart {
		return fmt.Errorf("restart = %v: must be within 0..%v", r, MaxFaultRestart)
	}
	if f.RestartLoses != "" && f.Restart <= 0 {
		return fmt.Errorf("restartLoses = %q without a restart", f.RestartLoses)
	}
	if f.Latency != nil {
		if l := time.Duration(*f.Latency); l < 0 || l > MaxFaultLatency {
			return fmt.Errorf("latency = %v: must be within 0..%v", l, MaxFaultLatency)
		}
	}
	if len(f.TakenPorts) > MaxFaultHangs {
		return fmt.Errorf("takenPorts names %d ports: at most %d", len(f.TakenPorts), MaxFaultHangs)
	}
	if len(f.ReservedAddresses) > MaxFaultHangs {
		return fmt.Errorf("reservedAddresses names %d addresses: at most %d", len(f.ReservedAddresses), MaxFaultHangs)
	}
	for field, ops := range map[string][]string{"hang": f.Hang, "hangReply": f.HangReply} {
		if len(ops) > MaxFaultHangs {
			return fmt.Errorf("%s names %d operations: at most %d", field, len(ops), MaxFaultHangs)
		}
		for _, op := range ops {
			if op == "" {
				return fmt.Errorf("%s names an empty operation", field)
			}
		}
	}
	return nil
}

// Duration is a time.Duration written as "1.5s" in JSON.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// RemoteSubnetsRequest replaces the RemoteSubnetRoute policies of a network.
type RemoteSubnetsRequest struct {
	Network string                                 `json:"network"`
	Routes  []hnslb.RemoteSubnetRoutePolicySetting `json:"routes"`
}
