package cni

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// SupportedVersions are the CNI spec versions hnscni answers: all of them,
// as win-bridge and win-overlay do (Flannel's Windows default is 0.2.0).
var SupportedVersions = version.All

// Main runs one CNI command from the environment and stdin and exits.
func Main() {
	skel.PluginMainFuncs(commands(), SupportedVersions, "CNI plugin hnscni (HNS l2bridge and overlay networks)")
}

// commands are hnscni's CNI commands; DEL reads the configuration as a
// release needs it (parseReleaseConfig).
func commands() skel.CNIFuncs {
	return skel.CNIFuncs{
		Add:    command(parseConfig, cmdAdd),
		Del:    command(parseReleaseConfig, cmdDel),
		Check:  command(parseConfig, cmdCheck),
		GC:     command(parseConfig, cmdGC),
		Status: command(withoutWarnings(parseConfig), cmdStatus),
	}
}

// withoutWarnings is parse for STATUS, which says nothing of the
// configuration: containerd runs it on a 1.1.0 configuration each time the
// kubelet asks for the runtime's status (every 5 seconds) and copies the
// plugin's stderr into its log, so the warnings every ADD writes would
// repeat there forever.
func withoutWarnings(parse func([]byte) (*NetConf, error)) func([]byte) (*NetConf, error) {
	return func(stdin []byte) (*NetConf, error) {
		n, err := parse(stdin)
		if n != nil {
			n.warnings = nil
		}
		return n, err
	}
}

// guid is an HNS namespace ID, which Windows runtimes pass as CNI_NETNS.
var guid = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// namespaceID validates CNI_NETNS as an HNS namespace GUID.
func namespaceID(netns string) (string, error) {
	id := strings.Trim(netns, "{}")
	if !guid.MatchString(id) {
		return "", types.NewError(types.ErrInvalidNetNS, "CNI_NETNS must be an HNS namespace GUID", netns)
	}
	return id, nil
}

// session is one command's parsed configuration and HNS connection.
type session struct {
	conf *NetConf
	hns  hnsClient
	args *skel.CmdArgs
	net  *hnslb.Network // the configured network, once looked up
	// answer is given once: by the command, or by run when it gives up,
	// after giveUp; finished has f's error once it returns (tests wait on it).
	answer   answerOnce
	giveUp   onGiveUp
	finished <-chan error
}

func newSession(args *skel.CmdArgs, parse func([]byte) (*NetConf, error)) (*session, error) {
	n, err := parse(args.StdinData)
	if err != nil {
		return nil, err
	}
	// A plugin's stdout is its result; runtimes log its stderr.
	for _, w := range n.warnings {
		fmt.Fprintln(os.Stderr, "hnscni: warning:", w)
	}
	c, err := connect(n)
	if err != nil {
		return nil, err
	}
	return &session{conf: n, hns: hnsClient{c}, args: args}, nil
}

// command runs f for one CNI command with the configuration parse reads,
// an HNS client and the command's deadlines (deadline.go).
func command(parse func([]byte) (*NetConf, error), f func(ctx context.Context, s *session) error) func(*skel.CmdArgs) error {
	return func(args *skel.CmdArgs) error {
		s, err := newSession(args, parse)
		if err != nil {
			return err
		}
		if err := s.run(f); err != nil {
			return withWarnings(err, s.conf.warnings)
		}
		return nil
	}
}

// withWarnings adds the configuration's warnings to a failed command's
// error details. libcni, which containerd and CRI-O run plugins through,
// copies a plugin's stderr to the runtime's own only after a command that
// succeeded; after one that failed it reports the error on stdout and
// drops stderr, so a warning that may explain the failure (a setting
// ignored as an unknown field) would be seen nowhere.
func withWarnings(err error, warnings []string) error {
	if len(warnings) == 0 {
		return err
	}
	// As skel reads an error: a *types.Error, wrapped or not (errors.As:
	// GC's one failure comes in an errors.Join), as it is, anything else
	// as an internal error with its whole message.
	var e *types.Error
	if !errors.As(err, &e) {
		e = types.NewError(types.ErrInternal, err.Error(), "")
	}
	details := "hnscni warnings: " + strings.Join(warnings, "; ")
	if e.Details != "" {
		details = e.Details + "; " + details
	}
	return &types.Error{Code: e.Code, Msg: e.Msg, Details: details}
}
