#!/usr/bin/env bash
# `make lint`: gofmt, no silent test skips, a tidy go.mod, the import rules, go vet and
# staticcheck over the whole module (the e2e suite included), a
# dead-code check of the production packages, then the known-vulnerability
# check (hack/vulncheck.sh, for Linux and Windows). The tools
# come at pinned versions from hack/install-tools.sh. GOOS=windows vet is
# hack/verify-windows.sh's, so it is not repeated here.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
# shellcheck source=hack/go-toolchain.sh
. "${ROOT}/hack/go-toolchain.sh"
TOOLS="$(hack/install-tools.sh)"

echo "lint: gofmt"
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [[ -n "${unformatted}" ]]; then
	echo "lint: gofmt would change (run gofmt -w):" >&2
	sed 's/^/  /' <<<"${unformatted}" >&2
	exit 1
fi

# No test skips where nothing would notice: `go test ./...` hides a skip,
# so a test that skips on Linux passes CI unrun. A skip may only sit where a
# runner fails on it in CI: *_windows_test.go (hack/wine-test.sh fails on any
# skip but skipUnderWine's) and the e2e framework's Windows-lane helper
# (e2e/framework/testing.go: it fails instead when CI is set).
echo "lint: no silent test skips"
skips="$(git grep -nE '\.Skip(f|Now)?\(|testing\.Short\(\)' -- '*.go' \
	':!*_windows_test.go' ':!e2e/framework/testing.go' || true)"
if [[ -n "${skips}" ]]; then
	echo "lint: a test skips where CI would not notice (fail it instead, or say what it needs in t.Fatal):" >&2
	sed 's/^/  /' <<<"${skips}" >&2
	exit 1
fi

# go.mod and go.sum say what the code imports, nothing more and nothing
# less: a module dropped by hand, or one kept that nothing imports, shows
# here. hack/build.sh builds host-local from this module, which go.mod's
# tool line keeps (a plain tidy without it dropped the module once).
echo "lint: go mod tidy -diff"
if ! tidy="$(go mod tidy -diff 2>&1)"; then
	echo "lint: go.mod or go.sum is not tidy (run go mod tidy):" >&2
	sed 's/^/  /' <<<"${tidy}" >&2
	exit 1
fi

# The import rules docs/architecture.md states: the desired state is pure
# (no client-go, no reconciler), and the vocabulary package is a leaf.
echo "lint: import rules"
mod="$(go list -m)"
rules_failed=0
check_deps() { # package, forbidden pattern, why
	local bad
	bad="$(go list -deps "$1" | grep -E "$2" || true)"
	if [[ -n "${bad}" ]]; then
		echo "lint: $1 must not depend on ${3}:" >&2
		sed 's/^/  /' <<<"${bad}" >&2
		rules_failed=1
	fi
}
check_deps ./proxier/desired "^(k8s.io/client-go|${mod}/(reconciler|sim|proxier$|cmd))" "client-go, the reconciler, the simulator or the daemon"
check_deps ./intent "^(k8s.io/|${mod}/(reconciler|sim|proxier|cmd|vfp))" "Kubernetes or any package above the vocabulary"
check_deps ./reconciler "^(k8s.io/api/|k8s.io/client-go/(kubernetes|informers|listers|tools)|${mod}/(proxier|sim|cmd))" "Kubernetes objects or clients, the proxier or the simulator"
check_deps ./cmd/hnsproxy-diag/diag "^${mod}/(sim|proxier$|cmd/hnsproxy/app$)" "the simulator or the daemon (it reads HNS through hnslb.Reader)"
[[ "${rules_failed}" == 0 ]] || exit 1

# The e2e suite carries the e2e build tag and `make bench-e2e`'s command the
# benche2e tag; no file is excluded by both, so one tagged pass covers every
# package and test.
echo "lint: go vet -tags e2e,benche2e ./..."
go vet -tags e2e,benche2e ./...

echo "lint: staticcheck -tags e2e,benche2e ./..."
"${TOOLS}/staticcheck" -tags e2e,benche2e ./...

# Dead code: functions no program of the module reaches (every main package
# is a root, tests are not). Only production packages are reported: the e2e
# framework, hack/ and packages named *test (helpers for tests, as
# net/http/httptest) are test tooling, and _test files are never roots here.
# Callers in _windows.go files are not seen: this runs for the host GOOS.
echo "lint: deadcode ./..."
# Captured first, so a deadcode failure fails lint instead of reading as "none".
all="$("${TOOLS}/deadcode" -f '{{range .Funcs}}{{printf "%s %s: unreachable func: %s\n" $.Path .Position .Name}}{{end}}' ./...)"
found="$(grep -vE "^${mod}/((e2e/framework|hack)(/| )|[^ ]*test )" <<<"${all}" || true)"

fail=0
while read -r pkg where _ _ name; do
	[[ -n "${pkg}" ]] || continue
	echo "${where} unreachable func: ${name}" >&2
	fail=1
done <<<"${found}"
if [[ "${fail}" != 0 ]]; then
	echo "lint: dead code in production packages (above): delete it, or move a test-only helper into the tests" >&2
	exit 1
fi

echo "lint: known vulnerabilities (hack/vulncheck.sh)"
hack/vulncheck.sh
echo "lint: ok"
