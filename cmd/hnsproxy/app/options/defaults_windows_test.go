package options

import "testing"

// On Windows the state file lives under ProgramData and a Linux-style
// unix:///path still names the hnssim socket.
func TestWindowsDefaults(t *testing.T) {
	if got := DefaultStateFile(); got != `C:\ProgramData\hnsproxy\state.json` {
		t.Errorf("DefaultStateFile() = %q", got)
	}
	cfg, _ := mustParse(t, kubeNetwork, "--hns-endpoint=unix:///run/hnssim.sock")
	if p, ok := cfg.HNS.UnixSocket(); !ok || p != "/run/hnssim.sock" || cfg.StateFile != DefaultStateFile() {
		t.Errorf("socket %q %v, state file %q", p, ok, cfg.StateFile)
	}
}
