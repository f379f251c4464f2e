package proctest

import (
	"os/exec"
	"runtime"
	"syscall"
)

// Start starts cmd with the kernel set to kill it when this process dies,
// and returns what cmd.Wait answers once it exits. The kernel sends the
// signal (Pdeathsig) when the thread that forked the child exits, not the
// process, and the Go runtime retires a thread whose goroutine ends locked
// to it, so the child is forked, and waited for, from a thread locked for
// the child's whole life.
func Start(cmd *exec.Cmd) (<-chan error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started, exited := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}
