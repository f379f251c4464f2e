# hnsproxy build and test entry points. `make test` is what CI runs.
SHELL := /bin/bash
GO    ?= go
PKGS  := ./...
export GOFLAGS := -buildvcs=false
# go.mod names the Go release to build with; hack/go-toolchain.sh says why.
export GOTOOLCHAIN ?= auto

# Under CI the stages whose builds no other stage reuses (race-built unit
# tests; GOOS=windows vet, test compiles and Wine test binaries; fuzz-
# instrumented tests) each build into a cache of their own, removed when the
# stage ends, so the run's disk peak holds one of them rather than all; every
# stage ends by printing the disk's use (hack/stage-end.sh, docs/e2e.md).
ifeq ($(CI),true)
unit: export GOCACHE := $(CURDIR)/_output/gocache/race
windows wine: export GOCACHE := $(CURDIR)/_output/gocache/windows
fuzz: export GOCACHE := $(CURDIR)/_output/gocache/fuzz
STAGE_END := hack/stage-end.sh
else
STAGE_END := @: stage-end
endif

.PHONY: all deps build lint unit windows wine e2e test demo bench bench-e2e soak soak-short soak-short-overlay fuzz clean

all: build

## deps: the Debian packages the tests use (wine, mingw-w64, gcc), and the Prometheus release go.mod requires (prometheus, promtool; hack/build-prometheus.sh); a no-op when present
deps:
	hack/install-deps.sh
	hack/build-prometheus.sh >/dev/null

## build: every binary into _output/bin (hack/build.sh; VERSION overrides the stamp)
build:
	hack/build.sh

## lint: gofmt, import rules, go vet, staticcheck, the production dead-code check and govulncheck for Linux and Windows (tools pinned by hack/install-tools.sh)
lint:
	hack/lint.sh
	$(STAGE_END) $@

## unit: unit tests (no control plane), with the race detector: the reconciler, the proxier and the CNI run goroutines on shared state; and bench-e2e's own, behind its build tag
unit:
	$(GO) test -count=1 -race $(PKGS)
	$(GO) test -count=1 -race -tags benche2e ./e2e/benche2e
	$(STAGE_END) $@ drop

## windows: GOOS=windows build, vet and test compile of every package
windows:
	hack/verify-windows.sh
	$(STAGE_END) $@

## wine: run the Windows-only tests (hcn JSON equality) under Wine
wine:
	hack/wine-test.sh
	$(STAGE_END) $@ drop

## e2e: end-to-end tests on a real kube-apiserver and etcd
e2e:
	hack/e2e.sh
	$(STAGE_END) $@

## test: everything CI runs
test: deps lint unit windows wine e2e fuzz soak-short soak-short-overlay

## demo: the main job; a control plane, simulated Windows nodes, Services, HNS tables
demo:
	hack/demo.sh

## fuzz: every fuzz target briefly (FUZZTIME, default 10s each)
fuzz:
	hack/fuzz.sh
	$(STAGE_END) $@ drop

## soak-short: the fault soak in its CI length
soak-short:
	SOAK_DURATION=45s hack/soak.sh
	$(STAGE_END) $@

## soak-short-overlay: the same on a VXLAN overlay cluster (remote endpoints, source VIP)
soak-short-overlay:
	SOAK_NETWORK=overlay SOAK_DURATION=45s hack/soak.sh
	$(STAGE_END) $@

## soak: fault soak of the real binaries (SOAK_DURATION, default 3m); JSON report on the last line
soak:
	hack/soak.sh

## bench: benchmarks and the scale harness
bench:
	hack/bench.sh

## bench-e2e: the real hnsproxy process at scale against a real control plane (BENCH_SERVICES, BENCH_ENDPOINTS)
bench-e2e:
	hack/bench-e2e.sh

clean:
	rm -rf _output
