package desired

import (
	"sync"

	v1 "k8s.io/api/core/v1"
)

// Service builders are pooled between ForService calls, with their parse
// buffers: a cold start maps 10,000 Services, and their 100,000 parsed
// endpoints, allocated afresh for each Service and dropped after it, were
// a tenth of its allocations (and, on a heap still growing, as many page
// faults); the builder, its copy of the Config and the result it fills
// were three more per Service. Nothing a result holds points into them.
var builderPool = sync.Pool{New: func() any { return new(serviceBuilder) }}

func getBuilder(svc *v1.Service, cfg *Config, r ServiceResult) *serviceBuilder {
	b := builderPool.Get().(*serviceBuilder)
	b.svc, b.cfg, b.r = svc, *cfg, r
	return b
}

// put empties the builder, keeping only its buffers' memory, so the pool
// keeps nothing alive, and returns it to the pool.
func (b *serviceBuilder) put() {
	buf := b.buf
	buf.clear()
	*b = serviceBuilder{buf: buf}
	builderPool.Put(b)
}

// buffers are the parse buffers of one ForService call.
type buffers struct {
	sorted    []*EndpointSlice
	slices    []parsedSlice
	endpoints []endpoint
	picks     []portPick
}

// clear drops what the buffers point at (slices, hint lists, address
// texts), keeping their memory.
func (b *buffers) clear() {
	clear(b.sorted)
	clear(b.slices)
	clear(b.endpoints)
	clear(b.picks)
	b.sorted, b.slices, b.endpoints, b.picks = b.sorted[:0], b.slices[:0], b.endpoints[:0], b.picks[:0]
}

// grown is s emptied with room for n elements, reallocated only if it has less.
func grown[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}
