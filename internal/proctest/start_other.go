//go:build !linux

package proctest

import "os/exec"

// Start starts cmd and returns what cmd.Wait answers once it exits. Only
// Linux kills a child with its parent; elsewhere the child may outlive it.
func Start(cmd *exec.Cmd) (<-chan error, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited, nil
}
