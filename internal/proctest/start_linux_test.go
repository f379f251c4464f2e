package proctest

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runAsParent makes this test binary the parent TestChildDiesWithItsParent
// kills: it starts a sleep with Start, prints its PID and waits.
const runAsParent = "PROCTEST_RUN_AS_PARENT"

func TestMain(m *testing.M) {
	if os.Getenv(runAsParent) != "" {
		cmd := exec.Command("sleep", "600")
		if _, err := Start(cmd); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(strconv.Itoa(cmd.Process.Pid) + "\n")
		select {}
	}
	os.Exit(m.Run())
}

// TestChildDiesWithItsParent: a process that starts a child with Start and
// is then killed, running no cleanup, takes the child with it.
func TestChildDiesWithItsParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), runAsParent+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's PID: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the parent printed %q, not a PID", line)
	}
	if !alive(pid) {
		t.Fatalf("the child %d is not running before its parent is killed", pid)
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	// The kernel kills the child as the parent's thread exits, and init
	// reaps it: poll until it is gone (a bound, not a timing).
	for deadline := time.Now().Add(time.Minute); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the child %d still ran a minute after its parent was killed", pid)
		}
	}
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name's closing parenthesis.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
