// Package e2e holds the end-to-end suite: real kube-apiserver and etcd (see
// e2e/framework), real hnsproxy binaries, simulated Windows hosts.
//
// Every test file carries the build tag `e2e`, so `go test ./...` (make unit)
// neither compiles nor runs them; hack/e2e.sh (make e2e) builds the control
// plane and runs `go test -tags e2e ./e2e/...`.
package e2e
