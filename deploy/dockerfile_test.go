package deploy

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// deploy/Dockerfile builds from the repository root and copies all of it
// (COPY . .). The directories .gitignore keeps out of git are local build
// output: _output alone holds every binary, the control plane and the Wine
// prefix `make test` made (over a gigabyte). Sent as build context and
// copied into the build stage they slow every image build for nothing; the
// build stage makes its own binaries. Neither is .git needed: the version
// comes from the VERSION build argument. So the root .dockerignore, the
// one a build with -f deploy/Dockerfile reads, leaves them out.
func TestDockerBuildContextLeavesOutLocalOutput(t *testing.T) {
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^COPY \. \.`).Match(dockerfile) {
		t.Fatal("the Dockerfile no longer copies the whole context: revisit this test")
	}
	gitignore, err := os.ReadFile("../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".git"}
	for _, line := range strings.Split(string(gitignore), "\n") {
		if strings.HasPrefix(line, "/") && strings.HasSuffix(line, "/") {
			want = append(want, strings.Trim(line, "/"))
		}
	}
	ignored := map[string]bool{}
	if raw, err := os.ReadFile("../.dockerignore"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			ignored[strings.Trim(strings.TrimSpace(line), "/")] = true
		}
	}
	for _, dir := range want {
		if !ignored[dir] {
			t.Errorf(".dockerignore does not leave out %s: docker build sends it as context and COPY . . copies it", dir)
		}
	}
}

// The image's Go is whichever 1.26 the golang image has, and that image
// sets GOTOOLCHAIN=local, under which a Go older than go.mod's go line
// refuses to build. The build stage lets the go command fetch the release
// go.mod names before its first go command, as hack/go-toolchain.sh does
// for every script.
func TestDockerBuildUsesTheGoGoModNames(t *testing.T) {
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	env := regexp.MustCompile(`(?m)^ENV GOTOOLCHAIN=auto$`).FindIndex(dockerfile)
	firstGo := regexp.MustCompile(`(?m)^RUN .*\b(go |hack/)`).FindIndex(dockerfile)
	if firstGo == nil {
		t.Fatal("the Dockerfile runs no go command: revisit this test")
	}
	if env == nil || env[0] > firstGo[0] {
		t.Error("the Dockerfile's build stage does not set ENV GOTOOLCHAIN=auto before its first go command")
	}
}
