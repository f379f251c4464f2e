package desired

import "github.com/hnsproxy/hnsproxy/intent"

// perFamily holds one value per IP family, set or not. A Service has at most
// two families, so ForService keeps its per-family facts here rather than in
// maps: at 10,000 Services the maps were a fifth of the mapping's garbage.
type perFamily[T any] struct {
	v   [2]T
	set [2]bool
}

func famIndex(f intent.IPFamily) int {
	if f == intent.IPv6 {
		return 1
	}
	return 0
}

func (p *perFamily[T]) get(f intent.IPFamily) T { return p.v[famIndex(f)] }

func (p *perFamily[T]) has(f intent.IPFamily) bool { return p.set[famIndex(f)] }

func (p *perFamily[T]) put(f intent.IPFamily, v T) {
	i := famIndex(f)
	p.v[i], p.set[i] = v, true
}

func (p *perFamily[T]) any() bool { return p.set[0] || p.set[1] }
