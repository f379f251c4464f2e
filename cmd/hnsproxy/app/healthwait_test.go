package app

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/sim"
)

// TestHealthzUnhealthyWhileWaitingForTheNetwork: kube-proxy on Windows
// creates its proxier, which waits for the HNS network, before it serves
// /healthz, so a node without its network (a new node whose CNI is not up)
// never reads healthy to a cloud load balancer. hnsproxy serves from the
// start, for the liveness probe: /livez answers 200 and /healthz 503 until
// the network is there and the sync loop started, then 200.
func TestHealthzUnhealthyWhileWaitingForTheNetwork(t *testing.T) {
	hns := sim.New(sim.Options{}) // given, not named "sim", which would seed the network
	healthz := freePort(t)
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0",
		"--healthz-bind-address=127.0.0.1:"+healthz, "--metrics-port=0",
		"--hns-network-timeout=1h", "--state-file="+t.TempDir()+"/state.json")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, fake.NewClientset(webOnTwoNodes()...), hns) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	base := "http://127.0.0.1:" + healthz

	// Once the node is known, only the missing network can make /healthz unhealthy.
	answer := waitForAnswer(t, base+"/healthz", func(_ int, body string) bool { return strings.Contains(body, `"nodeEligible":true`) })
	if answer.code != http.StatusServiceUnavailable || !strings.Contains(answer.body, `"healthy":false`) {
		t.Errorf("/healthz while waiting for the HNS network = %d %s, want 503", answer.code, answer.body)
	}
	if a := waitForAnswer(t, base+"/livez", func(int, string) bool { return true }); a.code != http.StatusOK {
		t.Errorf("/livez while waiting for the HNS network = %d %s, want 200", a.code, a.body)
	}

	wireWinOne(t, hns)
	waitForAnswer(t, base+"/healthz", func(code int, _ string) bool { return code == http.StatusOK })
}

type httpAnswer struct {
	code int
	body string
}

// waitForAnswer polls url until it answers and done accepts the answer.
func waitForAnswer(t *testing.T, url string, done func(code int, body string) bool) httpAnswer {
	t.Helper()
	var last httpAnswer
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resp, err := http.Get(url)
		if err != nil {
			return false, nil // not listening yet
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		last = httpAnswer{code: resp.StatusCode, body: string(body)}
		return done(last.code, last.body), nil
	})
	if err != nil {
		t.Fatalf("%s: no answer as awaited (last %d %s): %v", url, last.code, last.body, err)
	}
	return last
}
