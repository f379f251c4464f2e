//go:build windows

package hcnclient

import (
	"context"
	"fmt"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// call runs one hcn operation and returns its failure as *hnslb.Error.
//
// hcn panics rather than failing when computenetwork.dll or one of its exports
// is missing (hcn's error constructor asserts that hcserror.New returned an
// *HcsError, but that passes a *windows.DLLError through). One HNS call must
// not take the daemon down, so the panic becomes an error as well.
func call(ctx context.Context, op string, fn func() error) (err error) {
	if err := ctx.Err(); err != nil {
		return &hnslb.Error{Op: op, Message: err.Error(), Err: err}
	}
	defer func() {
		if r := recover(); r != nil {
			perr := fmt.Errorf("hcn panicked: %v", r)
			err = &hnslb.Error{Op: op, Message: perr.Error(), Err: perr}
		}
	}()
	return mapError(op, fn())
}

// send converts obj to hcn's type H, hands it to fn, and converts the object
// HNS returns back to T, through JSON (convert).
func send[T, H any](ctx context.Context, op string, obj *T, fn func(*H) (*H, error)) (*T, error) {
	return sendConverted(ctx, op, obj, convertTo[T, H], fn, convertTo[H, T])
}

// sendConverted is send with the conversions to and from hcn's type given.
func sendConverted[T, H any](ctx context.Context, op string, obj *T, to func(*T) (*H, error), fn func(*H) (*H, error), from func(*H) (*T, error)) (*T, error) {
	if obj == nil {
		return nil, hnslb.NewError(op, hnslb.CodeInvalidParameter, "no object given")
	}
	var out *T
	err := call(ctx, op, func() error {
		h, err := to(obj)
		if err != nil {
			return err
		}
		created, err := fn(h)
		if err != nil {
			return err
		}
		out, err = from(created)
		return err
	})
	return out, err
}

// get runs an hcn lookup that returns one object and converts it to T
// with from.
func get[T, H any](ctx context.Context, op string, fn func() (*H, error), from func(*H) (*T, error)) (*T, error) {
	var out *T
	err := call(ctx, op, func() error {
		h, err := fn()
		if err != nil {
			return err
		}
		out, err = from(h)
		return err
	})
	return out, err
}

// list runs an hcn listing and converts every object to T.
func list[T, H any](ctx context.Context, op string, fn func() ([]H, error)) ([]T, error) {
	var out []T
	err := call(ctx, op, func() error {
		hs, err := fn()
		if err != nil {
			return err
		}
		converted, err := convert[[]T](hs)
		if err != nil {
			return err
		}
		out = *converted
		return nil
	})
	return out, err
}
