package docs_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// repoFiles lists the repository's files whose names end in one of
// suffixes; hidden folders, build output and dependencies' folders are
// left out.
func repoFiles(t *testing.T, suffixes ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "_output" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		for _, suffix := range suffixes {
			if strings.HasSuffix(path, suffix) {
				files = append(files, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
