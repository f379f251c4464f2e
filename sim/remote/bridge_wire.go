package remote

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// The HCN bridge's frames are netstrings (`<length>:<bytes>,`), chosen
// because the C side (hack/wine/hnsbridge.h) writes and parses them in a
// few lines, with no JSON escaping of the documents they carry.
//
//	request:  function, target, document
//	response: HRESULT (8 hex digits), output, result (HNS's error document)

// bridgeRequestFields and bridgeResponseFields are the frames' field counts.
const (
	bridgeRequestFields  = 3
	bridgeResponseFields = 3
)

// readNetstrings reads n netstrings of at most max bytes each.
func readNetstrings(r *bufio.Reader, n int, max int) ([]string, error) {
	out := make([]string, 0, n)
	for range n {
		head, err := r.ReadString(':')
		if err != nil {
			return nil, fmt.Errorf("netstring %d: length: %w", len(out), err)
		}
		size, err := strconv.Atoi(head[:len(head)-1])
		if err != nil || size < 0 || size > max || len(head) > 11 {
			return nil, fmt.Errorf("netstring %d: bad length %q", len(out), head)
		}
		body := make([]byte, size+1)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("netstring %d: %w", len(out), err)
		}
		if body[size] != ',' {
			return nil, fmt.Errorf("netstring %d: no terminating comma", len(out))
		}
		out = append(out, string(body[:size]))
	}
	return out, nil
}

// writeNetstrings writes each field as a netstring.
func writeNetstrings(w io.Writer, fields ...string) error {
	bw := bufio.NewWriter(w)
	for _, f := range fields {
		if _, err := fmt.Fprintf(bw, "%d:%s,", len(f), f); err != nil {
			return err
		}
	}
	return bw.Flush()
}
