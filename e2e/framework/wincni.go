//go:build linux

package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

// On the Windows lane pods are wired by hnscni.exe under Wine, called
// through libcni as a runtime calls a plugin: libcni runs a launcher named
// hnscni from the node's CNI bin folder, which runs the .exe under Wine with
// the CNI paths as Windows paths. IPAM is HNS's own (no "ipam" section):
// HNS assigns each endpoint an address of the network's subnet.

// windowsCNILauncher writes the node's launcher into dir and returns dir.
func (w *wine) windowsCNILauncher(dir, exe string, bridgePort int) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	loader, argv, _ := w.command(exe, nil)
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# hnscni.exe under Wine, as libcni runs a CNI plugin (e2e/framework/wincni.go).\n")
	for _, kv := range append(append([]string{}, w.env...), fmt.Sprintf("%s=127.0.0.1:%d", envBridge, bridgePort)) {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s=%s\n", k, shellQuote(v))
	}
	b.WriteString("unset DISPLAY WAYLAND_DISPLAY\n")
	// CNI_PATH is a list of Linux folders; Windows lists folders with ';'.
	b.WriteString(`[ -z "$CNI_PATH" ] || CNI_PATH=$(printf '%s' "$CNI_PATH" | sed 's|:/|;Z:/|g; s|^/|Z:/|' | tr / '\\')` + "\nexport CNI_PATH\n")
	fmt.Fprintf(&b, "exec %s %s\n", shellQuote(loader), shellQuote(argv[0]))
	return dir, os.WriteFile(filepath.Join(dir, HNSCNIBin), []byte(b.String()), 0o755)
}

// silentPluginExit reports a CNI call whose plugin exited non-zero with
// nothing on stdout or stderr, libcni's "no error message". hnscni never
// does that: skel writes its every error as a CNI error on stdout (and
// says on stderr when it cannot). Under Wine it happened once in CI
// (exit status 1, TestWindowsLaneBackendCap, one ADD of 66) and not in
// 600 launches or 12 runs of that test here; what Wine did is not known,
// so the lane treats it as a runtime treats a failed sandbox.
func silentPluginExit(err error) bool {
	var cniErr *types.Error
	return errors.As(err, &cniErr) && strings.HasPrefix(cniErr.Msg, "netplugin failed with no error message")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// windowsCNIConfig is cniConfig for hnscni.exe: no hnsEndpoint (the real HNS
// path) and HNS's IPAM.
func windowsCNIConfig(conf []byte) ([]byte, error) {
	var list struct {
		CNIVersion string           `json:"cniVersion"`
		Name       string           `json:"name"`
		Plugins    []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal(conf, &list); err != nil {
		return nil, err
	}
	for _, p := range list.Plugins {
		delete(p, "hnsEndpoint")
		delete(p, "ipam")
	}
	return json.Marshal(list)
}

// CheckPod runs CNI CHECK for the pod through libcni, as a runtime does.
func (n *Node) CheckPod(ctx context.Context, p Pod) error {
	if err := n.net.cni.CheckNetworkList(ctx, n.net.list, runtimeConf(containerID(p.Name), p.Namespace)); err != nil {
		return fmt.Errorf("node %s: CNI CHECK %s: %w", n.Spec.Name, p.Name, err)
	}
	return nil
}

// GCPods runs CNI GC through libcni with the node's wired pods as the valid
// attachments, as a runtime does after it lost track of sandboxes.
func (n *Node) GCPods(ctx context.Context) error {
	var valid []types.GCAttachment
	for _, p := range n.Pods {
		valid = append(valid, types.GCAttachment{ContainerID: containerID(p.Name), IfName: "eth0"})
	}
	if err := n.net.cni.GCNetworkList(ctx, n.net.list, &libcni.GCArgs{ValidAttachments: valid}); err != nil {
		return fmt.Errorf("node %s: CNI GC: %w", n.Spec.Name, err)
	}
	return nil
}
