package sourcevip

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/internal/sourcevipipam"
)

// The test binary stands in for an IPAM plugin (hungIPAM) that hangs on
// the CNI command hangOn names and hands every other to host-local.
const (
	hangOnEnv    = "SOURCEVIP_TEST_HANG_ON"
	hostLocalEnv = "SOURCEVIP_TEST_HOST_LOCAL"
	hungIPAM     = "hung-ipam"
)

// runAsIPAM, in the test binary run as an IPAM plugin (the runtime sets
// CNI_COMMAND), is that plugin; it returns the exit code.
func runAsIPAM() int {
	if os.Getenv("CNI_COMMAND") == os.Getenv(hangOnEnv) {
		time.Sleep(time.Minute) // hung: the caller's deadline kills it
		return 1
	}
	cmd := exec.Command(os.Getenv(hostLocalEnv))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return 1
	}
	return 0
}

// hungNode is node with hungIPAM as the configuration's IPAM plugin,
// hanging on hangOn.
func hungNode(t *testing.T, hangOn string) (Options, string) {
	t.Helper()
	o, store := node(t, "10-hnscni.conflist", strings.Replace(hnscniList, `"type": "host-local"`, `"type": "`+hungIPAM+`"`, 1))
	bin := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	name := hungIPAM
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	copyFile(t, self, filepath.Join(bin, name))
	o.BinDir = bin
	t.Setenv(hostLocalEnv, filepath.Join(binDir, "host-local"))
	t.Setenv(hangOnEnv, hangOn)
	return o, store
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// reserveWithin is Reserve, failing the test if it has not returned
// within limit (without the deadline it never returns).
func reserveWithin(t *testing.T, o Options, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Reserve(context.Background(), o)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("Reserve has not returned %s after it began: a hung IPAM plugin holds the start", limit)
		return nil
	}
}

// TestAHungIPAMPluginFailsTheStartAtItsDeadline: an IPAM plugin that never
// answers (host-local blocked on its store's lock, a plugin waiting on a
// datastore) held the start for ever, /livez answering 200 all along, so
// no probe restarted it and no log said why. Each call now has a deadline
// (a pod's whole sandbox, its CNI ADD included, has the kubelet's four
// minutes): the plugin is killed there and the start fails with an error
// naming the plugin and the command, for the service manager to start
// hnsproxy again. A hung CHECK of a recorded reservation says nothing of
// the IPAM: the address stays recorded and reserved, neither released nor
// replaced by another.
func TestAHungIPAMPluginFailsTheStartAtItsDeadline(t *testing.T) {
	// Long enough for the calls handed to host-local through the test
	// binary (slow to start under the race detector), short for the hang.
	was := ipamCallTimeout
	ipamCallTimeout = 5 * time.Second
	t.Cleanup(func() { ipamCallTimeout = was })

	t.Run("ADD", func(t *testing.T) {
		o, store := hungNode(t, "ADD")
		err := reserveWithin(t, o, 40*time.Second)
		if err == nil || !strings.Contains(err.Error(), hungIPAM+" ADD did not answer within") {
			t.Errorf("Reserve with ADD hung = %v; want an error saying %s ADD did not answer", err, hungIPAM)
		}
		if got := held(t, store); len(got) != 0 {
			t.Errorf("host-local holds %v, want nothing", got)
		}
		if _, err := os.Stat(o.Record); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a record after the hung ADD: %v", err)
		}
	})

	t.Run("CHECK", func(t *testing.T) {
		o, store := hungNode(t, "none")
		vip, err := Reserve(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv(hangOnEnv, "CHECK")
		err = reserveWithin(t, o, 40*time.Second)
		if err == nil || !strings.Contains(err.Error(), hungIPAM+" CHECK did not answer within") {
			t.Errorf("Reserve with CHECK hung = %v; want an error saying %s CHECK did not answer", err, hungIPAM)
		}
		if got := held(t, store); len(got) != 1 || got[vip.String()] != sourcevipipam.ContainerID {
			t.Errorf("host-local holds %v after the hung CHECK, want only %s for %q", got, vip, sourcevipipam.ContainerID)
		}
		if got, err := Recorded(o.Record); err != nil || got != vip {
			t.Errorf("Recorded after the hung CHECK: %s, %v; want %s kept", got, err, vip)
		}
	})
}
