package remote

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// Listen creates the server's unix socket, readable and writable by its
// owner only. A stale socket left by a dead server is replaced; a live one
// is an error, so two servers never fight over one path; anything else at
// path (a file, a directory, a link) is left alone and is an error.
func Listen(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("listen %s: exists and is not a socket (%v); refusing to replace it", path, fi.Mode().Type())
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("listen %s: another server is serving there", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("listen %s: remove stale socket: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("listen %s: chmod: %w", path, err)
	}
	return l, nil
}
