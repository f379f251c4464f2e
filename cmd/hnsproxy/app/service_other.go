//go:build !windows

package app

import (
	"context"
	"fmt"
	"runtime"
)

// runAsWindowsService refuses --windows-service off Windows: there is no
// Service Control Manager to run under.
func runAsWindowsService(func(context.Context) error) error {
	return fmt.Errorf("--windows-service runs hnsproxy under the Windows Service Control Manager, which %s does not have: drop the flag", runtime.GOOS)
}
