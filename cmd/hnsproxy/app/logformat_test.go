package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"k8s.io/component-base/cli"
)

// runAsHNSProxy, set in a child process of this test binary, makes it run
// the hnsproxy command with the arguments after "--" (logging setup is
// process-global, so it is tested in a process of its own).
const runAsHNSProxy = "HNSPROXY_TEST_RUN_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(runAsHNSProxy) != "" {
		cmd := NewCommand()
		cmd.SetArgs(os.Args[len(os.Args)-countArgs():])
		os.Exit(cli.Run(cmd)) // as cmd/hnsproxy's main
	}
	os.Exit(m.Run())
}

func countArgs() int {
	for i, a := range os.Args {
		if a == "--" {
			return len(os.Args) - i - 1
		}
	}
	return 0
}

// kube-proxy's --logging-format=json is accepted and every log line is a
// JSON object, the warnings about the configuration too (here a feature
// gate hnsproxy ignores): a log pipeline parsing JSON would reject or
// mangle a text line among them.
func TestLoggingFormatJSON(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--",
		"--logging-format=json", "-v=1", "--hns-endpoint=sim", "--network-name=cbr0",
		"--feature-gates=SomeLinuxOnlyGate=true",
		"--kubeconfig="+t.TempDir()+"/missing.kubeconfig")
	cmd.Env = append(os.Environ(), runAsHNSProxy+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run() // the missing kubeconfig ends it after logging starts
	lines := 0
	out := stderr.String() // scanning drains the buffer
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		// component-base's cli.Run logs this before flags are parsed,
		// only in a -race build (cli/withrace.go); releases have no such line.
		if line == "" || strings.HasSuffix(line, "] Data race detection enabled") {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Errorf("not a JSON line: %q: %v", line, err)
			continue
		}
		if _, ok := obj["msg"]; !ok {
			t.Errorf("JSON line without msg: %q", line)
		}
		lines++
	}
	if lines == 0 {
		t.Fatalf("no JSON log lines; stderr:\n%s", out)
	}
	if !strings.Contains(out, `SomeLinuxOnlyGate`) {
		t.Errorf("the ignored feature gate is not logged:\n%s", out)
	}
	if strings.Contains(out, "unsupported logging format") {
		t.Errorf("json format refused:\n%s", out)
	}
}
