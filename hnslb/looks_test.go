package hnslb

import (
	"errors"
	"testing"
)

// TestGetLooking: a get answered "not found" is asked again, SilentLooks
// times in all; any other answer ends the looks at once.
func TestGetLooking(t *testing.T) {
	notFound := &Error{Op: OpGetEndpoint, Code: CodeNotFound}
	other := errors.New("the RPC server is unavailable")
	for _, c := range []struct {
		name      string
		answers   []error
		wantAsked int
		wantErr   error
	}{
		{"found at once", []error{nil}, 1, nil},
		{"found at the second look", []error{notFound, nil}, 2, nil},
		{"found at the last look", []error{notFound, notFound, nil}, 3, nil},
		{"gone", []error{notFound, notFound, notFound, nil}, SilentLooks, notFound},
		{"another error ends the looks", []error{notFound, other, nil}, 2, other},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := 0
			v, err := GetLooking(func() (int, error) {
				err := c.answers[asked]
				asked++
				if err != nil {
					return 0, err
				}
				return asked, nil
			})
			if asked != c.wantAsked || !errors.Is(err, c.wantErr) {
				t.Errorf("asked %d times, answered %d, %v; want %d times, %v", asked, v, err, c.wantAsked, c.wantErr)
			}
		})
	}
}
