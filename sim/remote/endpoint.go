package remote

import (
	"fmt"
	"strings"
)

// UnixScheme prefixes an HNS endpoint served by hnssim: unix:///run/hnssim.sock.
const UnixScheme = "unix://"

// ParseEndpoint returns the socket path of a "unix:///path" HNS endpoint.
// Other forms (the in-process "sim", the real HNS) are the caller's business
// and are rejected here.
func ParseEndpoint(endpoint string) (string, error) {
	path, ok := strings.CutPrefix(endpoint, UnixScheme)
	if !ok {
		return "", fmt.Errorf("hns endpoint %q: want %s/absolute/path", endpoint, UnixScheme)
	}
	// unix:///C:/x names a Windows path.
	if len(path) >= 4 && path[0] == '/' && path[2] == ':' {
		path = path[1:]
	}
	if path == "" || !isAbs(path) {
		return "", fmt.Errorf("hns endpoint %q: socket path must be absolute", endpoint)
	}
	return path, nil
}

// isAbs accepts "/x" everywhere and "C:\x" or "C:/x" for Windows paths, which
// unix sockets on Windows use; filepath.IsAbs would depend on the build OS.
func isAbs(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}
