package remote

import "time"

// SetBodyReadTimeout shortens how long a request body may take, for a test.
func SetBodyReadTimeout(d time.Duration) (restore func()) {
	old := bodyReadTimeout
	bodyReadTimeout = d
	return func() { bodyReadTimeout = old }
}
