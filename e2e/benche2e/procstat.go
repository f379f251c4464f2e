//go:build linux && benche2e

package main

import (
	"sync"
	"time"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// rssWatch samples a process's memory twice a second, following it across
// restarts (pid is asked each time), and keeps the highest peak seen. Each
// time the peak rises by a MiB or more it logs it with the bench's phase
// and what the resident set is made of (memBreakdown), so a run says which
// phase set it and with what.
type rssWatch struct {
	mu        sync.Mutex
	peakKiB   int64
	loggedKiB int64
	phase     string
	// quiet: the bench prices changes in hnsproxy's CPU now, and a
	// scrape of /metrics would be charged to one.
	quiet      bool
	metricsURL func() string
	stop       chan struct{}
	done       chan struct{}
}

func watchRSS(pid func() int, metricsURL func() string) *rssWatch {
	w := &rssWatch{phase: "first full sync", metricsURL: metricsURL, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			w.sample(pid())
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *rssWatch) sample(pid int) {
	if pid == 0 {
		return
	}
	if _, hwm, err := framework.ProcessMemory(pid); err == nil {
		w.mu.Lock()
		w.peakKiB = max(w.peakKiB, hwm)
		rose := w.peakKiB >= w.loggedKiB+1024
		if rose {
			w.loggedKiB = w.peakKiB
		}
		peak, phase, quiet := w.peakKiB, w.phase, w.quiet
		w.mu.Unlock()
		if rose && quiet {
			logf("hnsproxy's VmHWM rose to %.1f MiB during the %s", float64(peak)/1024, phase)
		} else if rose {
			logf("hnsproxy's VmHWM rose to %.1f MiB during the %s (%s)", float64(peak)/1024, phase, memBreakdown(pid, w.metricsURL()))
		}
	}
}

// setPhase names what the bench does from now on, for the peak's log.
func (w *rssWatch) setPhase(phase string) { w.set(phase, false) }

// setQuietPhase is setPhase for a phase in which nothing may ask hnsproxy
// anything: the peak's log leaves out the runtime's figures.
func (w *rssWatch) setQuietPhase(phase string) { w.set(phase, true) }

func (w *rssWatch) set(phase string, quiet bool) {
	w.mu.Lock()
	w.phase, w.quiet = phase, quiet
	w.mu.Unlock()
}

// peakMiB stops the watch and returns the highest VmHWM seen.
func (w *rssWatch) peakMiB() float64 {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return float64(w.peakKiB) / 1024
}

// rssMiB is the process's resident set now, in MiB.
func rssMiB(pid int) (float64, error) {
	rss, _, err := framework.ProcessMemory(pid)
	return float64(rss) / 1024, err
}
