//go:build linux

// Package framework runs a real control plane for end-to-end tests and the
// demo: etcd and kube-apiserver (built by hack/build-controlplane.sh) on
// 127.0.0.1 only, with RBAC on, an admin user and the `system:kube-proxy`
// user, and it registers simulated Windows Node objects.
//
// The same code backs hack/controlplane.sh (through cmd/controlplane), so the
// Go tests and the shell see one control plane, not two look-alikes. It is
// Linux-only: it ties the child processes' lifetime to the caller through
// Linux process attributes.
package framework
