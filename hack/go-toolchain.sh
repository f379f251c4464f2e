# Sourced by every script that runs the go command; not run on its own.
#
# go.mod's go line names the Go release hnsproxy is built and tested with: a
# patch release, because the earlier patches of that Go have known
# vulnerabilities in net/http and crypto that the binaries' code calls
# (hack/vulncheck.sh). Go installs that read
# GOTOOLCHAIN=local from their go.env (Debian's, the golang images') refuse
# a module that needs a newer Go; with auto the go command fetches the
# release go.mod names from the module proxy, once per machine. An explicit
# GOTOOLCHAIN in the environment wins (local, for a machine that already has
# that Go or a newer one and no proxy).
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
