package hnslb

import (
	"fmt"
	"strings"
)

// UnixScheme prefixes an HNS endpoint served over a unix socket (hnssim on
// Linux): unix:///run/hnssim.sock, or unix:///C:/ProgramData/hns.sock.
const UnixScheme = "unix://"

// ParseUnixEndpoint returns the socket path of a "unix:///path" HNS endpoint;
// the one parser hnsproxy's flags, hnscni's config and the hnssim client share.
// Other forms (the in-process "sim", the real HNS) are the caller's business
// and are rejected here.
func ParseUnixEndpoint(endpoint string) (string, error) {
	path, ok := strings.CutPrefix(endpoint, UnixScheme)
	if !ok {
		return "", fmt.Errorf("hns endpoint %q: want %s/absolute/path", endpoint, UnixScheme)
	}
	// unix:///C:/x names the Windows path C:/x, as URLs spell drive paths.
	if len(path) >= 3 && path[0] == '/' && isDriveLetter(path[1]) && path[2] == ':' {
		path = path[1:]
	}
	if !isAbs(path) {
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
	return len(p) >= 3 && isDriveLetter(p[0]) && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

func isDriveLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
