package sim

import (
	"context"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The calls every object kind shares: lookup, get, list and delete by ID.

// find returns the stored object with id; a malformed ID is an invalid
// parameter, an unknown one notFound (CodeNotFound, ERROR_NOT_FOUND, what
// hcn's IsElementNotFoundError tests, unless an error variant says
// otherwise: HNS.notFound).
func find[T any](op Op, kind string, s *store[T], id string, notFound hnslb.ErrorCode) (*T, error) {
	if err := checkID(op, kind, id); err != nil {
		return nil, err
	}
	o, ok := s.get(id)
	if !ok {
		return nil, hnsError(op, notFound, "%s %s", kind, id)
	}
	return o, nil
}

func getByID[T any](ctx context.Context, h *HNS, op Op, kind string, s *store[T], id string, clone func(*T) *T) (*T, error) {
	var out *T
	err := h.call(ctx, op, func() error {
		o, err := find(op, kind, s, id, h.notFound(kind))
		switch {
		case err != nil:
			return err
		case h.leftOutOfGet(id):
			return hnsError(op, h.notFound(kind), "%s %s", kind, id)
		}
		out = clone(o)
		h.chargeList(1)
		return nil
	})
	return result(out, err)
}

// list returns copies of the objects keep accepts (nil keeps all), charged as hcn charges.
func list[T any](ctx context.Context, h *HNS, op Op, s *store[T], keep func(*T) bool, clone func(*T) *T) ([]T, error) {
	return listChecked(ctx, h, op, s, nil, keep, clone)
}

// listChecked is list, answering check's error instead when check (nil:
// none) fails under the same lock.
func listChecked[T any](ctx context.Context, h *HNS, op Op, s *store[T], check func() error, keep func(*T) bool, clone func(*T) *T) ([]T, error) {
	var out []T
	err := h.call(ctx, op, func() error {
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		// Sized once: a list of 20,000 endpoints grown by append leaves
		// twice its size in garbage, which the scale harness would count.
		out = make([]T, 0, s.len())
		s.eachKeyed(func(id string, o *T) {
			if keep == nil || keep(o) {
				for range h.listedTimes(id) {
					out = append(out, *clone(o))
				}
			}
		})
		h.chargeList(len(out))
		return nil
	})
	return result(out, err)
}

// deleteByID finds the object and hands it to remove.
func deleteByID[T any](ctx context.Context, h *HNS, op Op, kind string, s *store[T], id string, remove func(*T)) error {
	return h.call(ctx, op, func() error {
		o, err := find(op, kind, s, id, h.notFound(kind))
		if err == nil {
			remove(o)
		}
		return err
	})
}

// result drops what a call produced when it failed (a committed fault runs
// the call and then fails it).
func result[T any](out T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}
