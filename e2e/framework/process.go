//go:build linux

package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one control-plane binary, started by us or (for a detached
// control plane) by an earlier invocation and found again by PID.
type process struct {
	name    string
	bin     string
	pid     int
	logPath string
	exited  chan struct{} // closed when our child exits; nil if not our child
}

// startProcess runs bin with args, appending its output to logPath. A
// detached process gets its own session and outlives the caller (the shell
// script's use); otherwise the kernel kills it when the caller dies, so a
// crashed or timed-out test leaves nothing running.
func startProcess(name, bin string, args, env []string, logPath string, detach bool) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	// The kernel sends Pdeathsig when the thread that forked the child
	// exits, not the process, and the Go runtime retires threads whose
	// goroutine ends while locked to them. So fork from a thread locked for
	// the child's whole life.
	started := make(chan error)
	p := &process{name: name, bin: bin, logPath: logPath, exited: make(chan struct{})}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		defer logFile.Close()
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("starting %s: %w", name, err)
			return
		}
		p.pid = cmd.Process.Pid
		started <- nil
		_ = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// findProcess returns the process recorded by an earlier invocation.
func findProcess(name, bin string, pid int, logPath string) *process {
	return &process{name: name, bin: bin, pid: pid, logPath: logPath}
}

// alive reports whether the process still runs. For a process we did not
// start, the PID must still belong to bin: a recycled PID is never signalled.
func (p *process) alive() bool {
	if p == nil || p.pid <= 0 {
		return false
	}
	if p.exited != nil {
		select {
		case <-p.exited:
			return false
		default:
			return true
		}
	}
	// The exe link, not cmdline: the kernel sets the link before an exec
	// closes the parent's wait pipe, but fills in the argument pages only
	// after, so a cmdline read right after Start can still be empty.
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.pid))
	if err != nil {
		return false
	}
	want, err := filepath.EvalSymlinks(p.bin)
	if err != nil || exe != want {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return false
	}
	// Field 3, after the parenthesised command name, is the state; Z is a
	// zombie that merely awaits its parent's wait().
	_, rest, _ := bytes.Cut(stat, []byte(") "))
	return !bytes.HasPrefix(rest, []byte("Z"))
}

// stop sends SIGTERM, waits for a clean exit (etcd and the apiserver both
// shut down gracefully on it), and falls back to SIGKILL.
func (p *process) stop(grace time.Duration) error {
	if !p.alive() {
		return nil
	}
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s (pid %d): %w", p.name, p.pid, err)
	}
	if p.waitExit(grace) {
		return nil
	}
	if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s (pid %d): %w", p.name, p.pid, err)
	}
	if !p.waitExit(10 * time.Second) {
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.pid)
	}
	return nil
}

func (p *process) waitExit(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for p.alive() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// waitReady polls ready until it succeeds, the process exits, or ctx ends.
// Failures carry the tail of the process log, which says why.
func (p *process) waitReady(ctx context.Context, ready func(context.Context) error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		if !p.alive() {
			return fmt.Errorf("%s exited before it was ready; log %s:\n%s", p.name, p.logPath, logTail(p.logPath, 25))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %v); log %s:\n%s", p.name, ctx.Err(), err, p.logPath, logTail(p.logPath, 25))
		case <-tick.C:
		}
	}
}

func logTail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// freePort returns an unused 127.0.0.1 port below the kernel's ephemeral
// range. A port from bind(":0") is an ephemeral one, which any outgoing
// connection on the machine (etcd's, the apiserver's, a proxy's) may take
// as its local port the moment we close our probe; a Windows binary under
// Wine binds without SO_REUSEADDR and then cannot listen there for as long
// as that connection lives. Below the range only listeners compete, and
// this process hands each port out once. Another process may still take
// it before ours binds, so callers retry a start that fails.
func freePort() (int, error) {
	lo, hi := listenPortRange()
	portsGiven.Lock()
	defer portsGiven.Unlock()
	var lastErr error
	for range 200 {
		port := lo + rand.IntN(hi-lo+1)
		if portsGiven.m[port] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			lastErr = err
			continue
		}
		l.Close()
		portsGiven.m[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("no free 127.0.0.1 port in %d-%d: %v", lo, hi, lastErr)
}

// portsGiven are the ports freePort handed out in this process.
var portsGiven = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

// listenPortRange is where freePort looks: from 10000 up to just below
// the kernel's ephemeral range (net.ipv4.ip_local_port_range).
func listenPortRange() (lo, hi int) {
	lo, hi = 10000, 32767
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) == 2 {
		if eph, err := strconv.Atoi(f[0]); err == nil && eph-1 > lo+1000 {
			hi = eph - 1
		}
	}
	return lo, hi
}
