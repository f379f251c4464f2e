//go:build linux

package framework

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// WindowsService is a node's hnsproxy.exe run by Wine's Service Control
// Manager with --windows-service, as an install that runs kube-proxy as a
// Windows service (not HostProcess) has it: started by `sc start`, stopped
// by `sc stop`.
//
// It lives in a Wine prefix of its own. As on Windows, a service gets the
// system environment (Session Manager\Environment in the registry), not its
// caller's, so the node's HNS bridge address is set there; Wine reads it
// when the prefix boots, so the prefix is shut down after the write. A
// holder process then boots it and keeps it up: Wine's services.exe stops
// every service when the prefix's last ordinary process exits.
type WindowsService struct {
	Name    string
	w       *wine
	env     []string
	prefix  string
	holder  *exec.Cmd
	holdIn  io.WriteCloser
	healthz string
}

// ServiceStatus is what `sc query` reports.
type ServiceStatus struct {
	State                          string // RUNNING, STOPPED, ...
	Win32ExitCode, ServiceExitCode int
}

// StartAsWindowsService installs the stopped proxy's binary, with its
// flags and --windows-service, as the Windows service name and starts it
// through the SCM. It returns once /healthz answers 200.
func (p *Proxy) StartAsWindowsService(ctx context.Context, name string) (*WindowsService, error) {
	if p.wine == nil {
		return nil, fmt.Errorf("hnsproxy %s is not a Windows-lane proxy", p.Node)
	}
	if p.proc.alive() {
		return nil, fmt.Errorf("hnsproxy %s is running (pid %d): stop it first", p.Node, p.proc.pid)
	}
	prefix := filepath.Join(filepath.Dir(p.log), "wineprefix-scm")
	w, err := runWinePrefix(p.wine.build, prefix)
	if err != nil {
		return nil, err
	}
	_, _, env := w.command("", nil, p.wineEnv...)
	s := &WindowsService{Name: name, w: w, env: env, prefix: prefix, healthz: p.HealthzURL()}
	for _, kv := range p.wineEnv {
		k, v, _ := strings.Cut(kv, "=")
		if _, err := s.run("reg", "add", systemEnvironment, "/v", k, "/d", v, "/f"); err != nil {
			return nil, err
		}
	}
	if err := s.killPrefix(); err != nil {
		return nil, err
	}
	holderLog := filepath.Join(filepath.Dir(p.log), name+"-service.log")
	if err := s.boot(holderLog); err != nil {
		return nil, err
	}
	// cmd.exe's prompt: the holder has booted the prefix and its
	// services.exe, which read the system environment as they started.
	err = Poll(ctx, scTimeout, 100*time.Millisecond, func(context.Context) error {
		if b, _ := os.ReadFile(holderLog); !bytes.Contains(b, []byte(">")) {
			return fmt.Errorf("the holder has not booted the Wine prefix %s yet", prefix)
		}
		return nil
	})
	if err != nil {
		return nil, s.shutdown(err)
	}
	cmdline, err := windowsCommandLine(append([]string{windowsPath(p.bin)}, append(p.Args(), "--windows-service")...))
	if err != nil {
		return nil, s.shutdown(err)
	}
	if _, err := s.sc("create", name, "binPath=", cmdline); err != nil {
		return nil, s.shutdown(err)
	}
	if _, err := s.sc("start", name); err != nil {
		return nil, s.shutdown(err)
	}
	readyCtx, cancel := context.WithTimeout(ctx, proxyReadyWait)
	defer cancel()
	err = Poll(readyCtx, proxyReadyWait, 200*time.Millisecond, func(ctx context.Context) error {
		if st, err := s.Query(); err != nil || st.State == "STOPPED" {
			return fmt.Errorf("service %s: %+v %v", name, st, err)
		}
		return httpGetOK(ctx, http.DefaultClient, s.healthz, "")
	})
	if err != nil {
		return nil, s.shutdown(fmt.Errorf("service %s not ready: %w", name, err))
	}
	return s, nil
}

// boot starts the holder process that boots the prefix and keeps
// services.exe running: cmd.exe reading a pipe that stays open.
func (s *WindowsService) boot(logPath string) error {
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	s.holder = exec.Command(s.w.loader, "cmd")
	s.holder.Env = s.env
	s.holder.Stdout, s.holder.Stderr = logFile, logFile
	if s.holdIn, err = s.holder.StdinPipe(); err != nil {
		return err
	}
	return s.holder.Start()
}

// systemEnvironment is where Windows keeps the environment services get.
const systemEnvironment = `HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment`

// sc runs Wine's sc.exe in the service's prefix.
func (s *WindowsService) sc(args ...string) (string, error) { return s.run("sc", args...) }

// run runs a Wine program in the service's prefix. Its output goes to a
// file, not a pipe: when it boots the prefix, services.exe inherits its
// output and would hold a pipe open for as long as it runs.
func (s *WindowsService) run(program string, args ...string) (string, error) {
	out, err := os.CreateTemp("", "sc-*.out")
	if err != nil {
		return "", err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), scTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.w.loader, append([]string{program}, args...)...)
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	b, err := os.ReadFile(out.Name())
	if err != nil {
		return "", err
	}
	if runErr != nil {
		return string(b), fmt.Errorf("%s %s: %w\n%s", program, strings.Join(args, " "), runErr, b)
	}
	return string(b), nil
}

// scTimeout bounds one sc.exe or reg.exe call (a first one boots the prefix).
const scTimeout = time.Minute

var (
	scState    = regexp.MustCompile(`STATE\s*:\s*\d+\s+(\w+)`)
	scWin32    = regexp.MustCompile(`WIN32_EXIT_CODE\s*:\s*(\d+)`)
	scSpecific = regexp.MustCompile(`SERVICE_EXIT_CODE\s*:\s*(\d+)`)
)

// Query is the service's status as `sc query` reports it.
func (s *WindowsService) Query() (ServiceStatus, error) {
	out, err := s.sc("query", s.Name)
	if err != nil {
		return ServiceStatus{}, err
	}
	var st ServiceStatus
	m := scState.FindStringSubmatch(out)
	if m == nil {
		return st, fmt.Errorf("sc query %s: no STATE in %q", s.Name, out)
	}
	st.State = m[1]
	if m := scWin32.FindStringSubmatch(out); m != nil {
		st.Win32ExitCode, _ = strconv.Atoi(m[1])
	}
	if m := scSpecific.FindStringSubmatch(out); m != nil {
		st.ServiceExitCode, _ = strconv.Atoi(m[1])
	}
	return st, nil
}

// Stop is `sc stop`; it returns the status once the service has stopped.
func (s *WindowsService) Stop() (ServiceStatus, error) {
	if _, err := s.sc("stop", s.Name); err != nil {
		return ServiceStatus{}, s.shutdown(err)
	}
	var st ServiceStatus
	err := Poll(context.Background(), stopGrace, 200*time.Millisecond, func(context.Context) error {
		var err error
		if st, err = s.Query(); err != nil {
			return err
		}
		if st.State != "STOPPED" {
			return fmt.Errorf("service %s is %s", s.Name, st.State)
		}
		return nil
	})
	return st, s.shutdown(err)
}

// PID is the service process's, found by its name and prefix; 0 if none.
func (s *WindowsService) PID() int {
	for pid, comm := range prefixProcesses(s.prefix) {
		if comm == HNSProxyExe {
			return pid
		}
	}
	return 0
}

// prefixProcesses are the processes (wineserver included) running in the
// Wine prefix, by PID, with their names.
func prefixProcesses(prefix string) map[int]string {
	out := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		environ, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, environ...), []byte("\x00WINEPREFIX="+prefix+"\x00")) {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(d, "comm"))
		pid, _ := strconv.Atoi(filepath.Base(d))
		out[pid] = strings.TrimSpace(string(comm))
	}
	return out
}

// killPrefix ends every process of the prefix, its wineserver last (which
// saves the registry), and waits until none is left.
func (s *WindowsService) killPrefix() error {
	server, err := exec.LookPath("wineserver")
	if err != nil {
		server = filepath.Join(filepath.Dir(s.w.loader), "wineserver64")
	}
	cmd := exec.Command(server, "-k")
	cmd.Env = s.env
	_ = cmd.Run() // fails when no wineserver runs: nothing to end
	return Poll(context.Background(), scTimeout, 100*time.Millisecond, func(context.Context) error {
		if left := prefixProcesses(s.prefix); len(left) > 0 {
			return fmt.Errorf("the Wine prefix %s still runs %v", s.prefix, left)
		}
		return nil
	})
}

// shutdown ends the holder and every process left in the prefix, and
// returns err (or, without one, a failure to end them).
func (s *WindowsService) shutdown(err error) error {
	if s.holder == nil || s.holder.Process == nil {
		return err
	}
	_ = s.holdIn.Close()
	done := make(chan struct{})
	go func() { _ = s.holder.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopGrace):
		_ = s.holder.Process.Kill()
		<-done
	}
	s.holder = nil
	if kerr := s.killPrefix(); err == nil {
		err = kerr
	}
	return err
}

// windowsCommandLine joins args into a Windows command line; the rig's
// arguments need no quoting, and one that would is refused.
func windowsCommandLine(args []string) (string, error) {
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"") {
			return "", fmt.Errorf("argument %q would need Windows quoting", a)
		}
	}
	return strings.Join(args, " "), nil
}
