package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/sim"
)

// polledWatcher runs a configWatcher on ticks the test gives.
type polledWatcher struct {
	ticks chan time.Time
	done  chan error
}

func startWatcher(t *testing.T, w *configWatcher) *polledWatcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &polledWatcher{ticks: make(chan time.Time), done: make(chan error, 1)}
	go func() { p.done <- w.wait(ctx, p.ticks) }()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// poll has the watcher read the file twice, what it takes to act on a
// change, and says whether it returned, and with what. A tick is taken
// only once the read before it is over, hence the third.
func (p *polledWatcher) poll() (stopped bool, err error) {
	for range 3 {
		select {
		case p.ticks <- time.Time{}:
		case err := <-p.done:
			p.done <- err // for the cleanup
			return true, err
		}
	}
	return false, nil
}

const (
	configV1 = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nwinkernel: {networkName: cbr0}\n"
	configV2 = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nwinkernel: {networkName: cbr0, enableDSR: true}\n"
)

// configMapVolume lays dir out as kubelet's atomic writer does for a
// ConfigMap with the key config.conf: config.conf -> ..data/config.conf,
// ..data -> a timestamped directory holding the files. It returns the
// path the daemon's --config names.
func configMapVolume(t *testing.T, dir, content string) string {
	t.Helper()
	writeConfigMapVersion(t, dir, "..2026_12_01_00_00_00.1", content)
	mustDo(t, os.Symlink("..2026_12_01_00_00_00.1", filepath.Join(dir, "..data")))
	mustDo(t, os.Symlink(filepath.Join("..data", "config.conf"), filepath.Join(dir, "config.conf")))
	return filepath.Join(dir, "config.conf")
}

func writeConfigMapVersion(t *testing.T, dir, version, content string) {
	t.Helper()
	mustDo(t, os.Mkdir(filepath.Join(dir, version), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(dir, version, "config.conf"), []byte(content), 0o644))
	mustDo(t, os.WriteFile(filepath.Join(dir, version, "kubeconfig.conf"), []byte("apiVersion: v1\nkind: Config\n"), 0o644))
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Every way a --config file gets new content stops the daemon, and only
// those: a ConfigMap edit as kubelet brings it into the pod's volume (on
// Linux a rename of ..data, on Windows ..data removed and linked again, the
// file unreadable in between), an edit in place, an editor's rename over
// the file. A file beside it that changes, or the file rewritten with the
// same bytes, stops nothing (kube-proxy exits on a rewrite: its fsnotify
// watch sees the write, not the content).
func TestConfigFileChangesThatStopTheDaemon(t *testing.T) {
	for _, tc := range []struct {
		name string
		// plain is a plain file in a directory; otherwise a ConfigMap volume.
		plain bool
		// steps change the directory; each is followed by one poll, and
		// only the last may stop the daemon.
		steps []func(t *testing.T, dir, path string)
		stops bool
	}{{
		name: "ConfigMap update, Linux kubelet renames ..data over the old link",
		steps: []func(*testing.T, string, string){func(t *testing.T, dir, _ string) {
			writeConfigMapVersion(t, dir, "..2026_12_01_00_05_00.2", configV2)
			mustDo(t, os.Symlink("..2026_12_01_00_05_00.2", filepath.Join(dir, "..data_tmp")))
			mustDo(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
			mustDo(t, os.RemoveAll(filepath.Join(dir, "..2026_12_01_00_00_00.1")))
		}},
		stops: true,
	}, {
		name: "ConfigMap update, Windows kubelet removes ..data, then links it again",
		steps: []func(*testing.T, string, string){func(t *testing.T, dir, _ string) {
			writeConfigMapVersion(t, dir, "..2026_12_01_00_05_00.2", configV2)
			mustDo(t, os.Symlink("..2026_12_01_00_05_00.2", filepath.Join(dir, "..data_tmp")))
			mustDo(t, os.Remove(filepath.Join(dir, "..data")))
		}, func(t *testing.T, dir, _ string) {
			mustDo(t, os.Symlink("..2026_12_01_00_05_00.2", filepath.Join(dir, "..data")))
			mustDo(t, os.Remove(filepath.Join(dir, "..data_tmp")))
			mustDo(t, os.RemoveAll(filepath.Join(dir, "..2026_12_01_00_00_00.1")))
		}},
		stops: true,
	}, {
		name:  "edited in place",
		plain: true,
		steps: []func(*testing.T, string, string){func(t *testing.T, _, path string) {
			mustDo(t, os.WriteFile(path, []byte(configV2), 0o644))
		}},
		stops: true,
	}, {
		name:  "an editor writes a new file and renames it over",
		plain: true,
		steps: []func(*testing.T, string, string){func(t *testing.T, dir, path string) {
			mustDo(t, os.WriteFile(filepath.Join(dir, ".config.conf.swp"), []byte(configV2), 0o644))
			mustDo(t, os.Rename(filepath.Join(dir, ".config.conf.swp"), path))
		}},
		stops: true,
	}, {
		name: "another key of the ConfigMap volume changes",
		steps: []func(*testing.T, string, string){func(t *testing.T, dir, _ string) {
			mustDo(t, os.WriteFile(filepath.Join(dir, "..2026_12_01_00_00_00.1", "kubeconfig.conf"), []byte("apiVersion: v1\nkind: Config\nclusters: []\n"), 0o644))
			mustDo(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644))
		}},
	}, {
		name:  "rewritten with the same bytes",
		plain: true,
		steps: []func(*testing.T, string, string){func(t *testing.T, _, path string) {
			mustDo(t, os.WriteFile(path, []byte(configV1), 0o644))
			later := time.Now().Add(time.Hour)
			mustDo(t, os.Chtimes(path, later, later))
		}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.conf")
			if tc.plain {
				mustDo(t, os.WriteFile(path, []byte(configV1), 0o644))
			} else {
				path = configMapVolume(t, dir, configV1)
			}
			p := startWatcher(t, newConfigWatcher(path, []byte(configV1), nil, nil))
			if stopped, err := p.poll(); stopped {
				t.Fatalf("the untouched file stopped the daemon: %v", err)
			}
			for i, step := range tc.steps {
				step(t, dir, path)
				stopped, err := p.poll()
				last := i == len(tc.steps)-1
				switch {
				case stopped && (!last || !tc.stops):
					t.Fatalf("step %d stopped the daemon: %v", i+1, err)
				case last && tc.stops && !stopped:
					t.Fatal("the new content did not stop the daemon")
				case stopped && !strings.Contains(err.Error(), "was updated"):
					t.Errorf("the daemon stopped with %v", err)
				}
			}
		})
	}
}

// The daemon stops on any change from the bytes its configuration was
// decoded from, not from what the file holds when the watch starts: a
// ConfigMap update landing in between still restarts it.
func TestConfigFileChangedBeforeTheWatchStartsStopsTheDaemon(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.conf")
	mustDo(t, os.WriteFile(path, []byte(configV1), 0o600))
	cfg := parseConfig(t, "--config="+path, "--hostname-override=win-1")
	mustDo(t, os.WriteFile(path, []byte(configV2), 0o600))
	p := startWatcher(t, newConfigWatcher(cfg.ConfigFile, cfg.ConfigFileContent, cfg.Recomplete, func(err error) { t.Errorf("rejected: %v", err) }))
	if stopped, err := p.poll(); !stopped || !strings.Contains(err.Error(), "was updated") {
		t.Errorf("wait = %v, %v; the file changed after the configuration was read and the daemon runs on with the old one", stopped, err)
	}
}

// An operator whose ConfigMap names a network the node does not have fixes
// it: hnsproxy, still waiting for that network, exits with the change
// rather than at --hns-network-timeout. The test's deadline only keeps a
// regression from hanging.
func TestConfigFileChangedWhileWaitingForTheNetworkStopsTheDaemon(t *testing.T) {
	pollConfigOften(t)
	head := "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n" +
		"healthzBindAddress: 127.0.0.1:" + freePort(t) + "\nmetricsBindAddress: \"\"\n"
	path := filepath.Join(t.TempDir(), "config.conf")
	mustDo(t, os.WriteFile(path, []byte(head+"winkernel: {networkName: cbr1}\n"), 0o600))
	cfg := parseConfig(t, "--config="+path, "--hostname-override=win-1",
		"--hns-network-timeout=1h", "--state-file="+t.TempDir()+"/state.json")
	mustDo(t, os.WriteFile(path, []byte(head+"winkernel: {networkName: cbr0}\n"), 0o600))
	hns := sim.New(sim.Options{})
	wireWinOne(t, hns) // cbr0, not the cbr1 the file named at start
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, cfg, fake.NewClientset(webOnTwoNodes()...), hns)
	if err == nil || !strings.Contains(err.Error(), "was updated") {
		t.Fatalf("run = %v, want the config file's change while it waited for the network", err)
	}
}

// pollConfigOften has the daemons the test runs read their config file
// every millisecond.
func pollConfigOften(t *testing.T) {
	saved := configPoll
	configPoll = time.Millisecond
	t.Cleanup(func() { configPoll = saved })
}
