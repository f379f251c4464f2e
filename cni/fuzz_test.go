package cni

import (
	"encoding/json"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/utils"
)

// FuzzPluginInput runs hnscni's front door in-process, exactly as main
// does (skel's dispatcher over the CNI_* environment and stdin, then the
// plugin's own parsing), with HNS unreachable so nothing is ever created.
// Every outcome must be success or a CNI error with a code and a message;
// nothing may panic. On the way it checks the pure parts: a configuration
// parseConfig accepts is fully valid and builds an endpoint document whose
// policies are JSON objects; a namespace ID namespaceID accepts is a bare
// GUID; and every container ID and interface name skel accepts makes an
// endpoint name GC recognises as hnscni's.
func FuzzPluginInput(f *testing.F) {
	good := `{"cniVersion":"1.1.0","name":"pods","type":"hnscni","mode":"l2bridge","network":"cbr0",` +
		`"clusterCIDR":"10.244.0.0/16","serviceCIDR":"10.96.0.0/12","outboundNATExceptions":["192.168.0.0/24"],` +
		`"loopbackDSR":true,"ipam":{"type":"host-local","subnet":"10.244.1.0/24"},` +
		`"runtimeConfig":{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"udp","hostIP":"192.168.0.10"}],"dns":{"servers":["10.96.0.10"]}},` +
		`"capabilities":{"dns":true,"portMappings":true},"dns":{"nameservers":["1.1.1.1"]}}`
	guid := "0b9e1f9e-5a5e-4c57-9c0b-0123456789ab"
	for _, c := range []struct{ stdin, cmd, id, netns, ifName string }{
		{good, "ADD", "c1", guid, "eth0"},
		{good, "DEL", "c1", "", "eth0"},
		{good, "CHECK", "abc.def-1_2", "{" + strings.ToUpper(guid) + "}", "eth_0"},
		{good, "GC", "", "", ""},
		{good, "STATUS", "", "", ""},
		{good, "VERSION", "", "", ""},
		{strings.Replace(good, "l2bridge", "overlay", 1), "ADD", "../x", guid, "eth0"},
		{strings.Replace(good, `"cbr0"`, `"  "`, 1), "ADD", "a/b", "/var/run/netns/x", "a:b"},
		{`{"cniVersion":"0.4.0","name":"pods","type":"hnscni","mode":"overlay","network":"vxlan0","ipam":{"type":"x"},"providerAddress":"10.0.0.300"}`, "ADD", strings.Repeat("x", 300), guid, strings.Repeat("e", 16)},
		{`{"cniVersion":"1.1.0","name":"pods","prevResult":{"ips":[{"address":"10.244.1.5/24"}]},"mode":"l2bridge","network":"n","ipam":{"type":"x"}}`, "CHECK", "c", guid, "eth0"},
		{`{"cniVersion":"1.1.0","name":"p","mode":"l2bridge","network":"n","ipam":{"type":"x"},"runtimeConfig":{"portMappings":[{"hostPort":70000,"containerPort":0}]}}`, "ADD", "c", guid, "."},
		{`{`, "FROB", "", "", ""},
		{`null`, "ADD", "c", guid, "eth0"},
	} {
		f.Add([]byte(c.stdin), c.cmd, c.id, c.netns, c.ifName)
	}
	f.Fuzz(func(t *testing.T, stdin []byte, command, containerID, netns, ifName string) {
		for _, s := range []string{command, containerID, netns, ifName} {
			if strings.ContainsRune(s, 0) {
				return // the environment cannot carry NUL
			}
		}
		checkNames(t, containerID, ifName)
		checkNamespaceID(t, netns)
		checkParsedConfig(t, stdin)

		env := map[string]string{
			"CNI_COMMAND": command, "CNI_CONTAINERID": containerID, "CNI_NETNS": netns, "CNI_IFNAME": ifName,
			"CNI_PATH": filepath.Join(t.TempDir(), "no-plugins"), EnvHNSEndpoint: "unix://" + filepath.Join(t.TempDir(), "no-hns.sock"),
		}
		if err := runPlugin(t, env, stdin); err != nil && (err.Code == 0 || err.Msg == "") {
			t.Fatalf("CNI error without a code or message: %+v", err)
		}
	})
}

// runPlugin runs the plugin's dispatcher in-process with env and stdin.
func runPlugin(t *testing.T, env map[string]string, stdin []byte) *types.Error {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	in, out := tempFile(t, stdin), tempFile(t, nil)
	saved := [3]*os.File{os.Stdin, os.Stdout, os.Stderr}
	os.Stdin, os.Stdout, os.Stderr = in, out, out
	defer func() { os.Stdin, os.Stdout, os.Stderr = saved[0], saved[1], saved[2] }()
	return skel.PluginMainFuncsWithError(commands(), SupportedVersions, "hnscni under test")
}

func tempFile(t *testing.T, content []byte) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stdio")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(content); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	return f
}

// checkNames: whatever skel and ADD let through names an endpoint GC
// recognises, that contains no path separator, and that reads back as the
// attachment (so no two attachments share an endpoint).
func checkNames(t *testing.T, containerID, ifName string) {
	t.Helper()
	if utils.ValidateContainerID(containerID) != nil || utils.ValidateInterfaceName(ifName) != nil || checkIfName(ifName) != nil {
		return
	}
	for _, network := range []string{"cbr0", "vxlan_0"} {
		name := endpointName(containerID, network, ifName)
		if strings.ContainsAny(name, `/\`) {
			t.Fatalf("endpoint name %q contains a path separator", name)
		}
		c, i, ok := attachmentOf(name, network)
		if ifName == "" {
			ifName = primaryIfName
		}
		if !ok || c != containerID || i != ifName {
			t.Fatalf("endpoint name %q reads back as (%q, %q, %v), not (%q, %q)", name, c, i, ok, containerID, ifName)
		}
	}
}

func checkNamespaceID(t *testing.T, netns string) {
	t.Helper()
	id, err := namespaceID(netns)
	if err != nil {
		if te, ok := err.(*types.Error); !ok || te.Code != types.ErrInvalidNetNS {
			t.Fatalf("namespaceID(%q): %v, want an invalid-netns CNI error", netns, err)
		}
		return
	}
	if !guid.MatchString(id) {
		t.Fatalf("namespaceID(%q) = %q, not a GUID", netns, id)
	}
}

// checkParsedConfig: a CNI error with a code and message, or a fully
// validated configuration whose endpoint document is well-formed.
func checkParsedConfig(t *testing.T, stdin []byte) {
	t.Helper()
	n, err := parseConfig(stdin)
	if err != nil {
		te, ok := err.(*types.Error)
		if !ok || te.Code == 0 || te.Msg == "" {
			t.Fatalf("parseConfig: %#v, want a CNI error", err)
		}
		return
	}
	if (n.Mode != "" && n.Mode != ModeL2Bridge && n.Mode != ModeOverlay) || strings.TrimSpace(n.Network) == "" {
		t.Fatalf("accepted an incomplete configuration: %+v", n)
	}
	if n.checkPortMappings() != nil {
		return // refused by ADD
	}
	for _, s := range n.natExceptionList() {
		if _, err := netip.ParsePrefix(s); err != nil {
			t.Fatalf("outbound NAT exception %q", s)
		}
	}
	for _, addr := range []string{"10.244.1.7/24", "fd00::7/64"} {
		p := netip.MustParsePrefix(addr)
		e := n.buildEndpoint(endpointSpec{name: "c_cbr0", addrs: []podAddr{{addr: p, gateway: p.Masked().Addr().Next()}},
			providerAddress: n.providerAddress, loopbackDSR: n.LoopbackDSR})
		for _, pol := range e.Policies {
			var m map[string]any
			if err := json.Unmarshal(pol.Settings, &m); err != nil {
				t.Fatalf("%s policy settings %s: %v", pol.Type, pol.Settings, err)
			}
		}
	}
}
