package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestCodeKey checks the code key's sources: the VCS revision of a clean
// build, the revision and the executable's hash of a modified one, the
// executable's hash without VCS information; and that a changed executable
// changes the key wherever it is used.
func TestCodeKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe := filepath.Join(dir, "vomc")
	if err := os.WriteFile(exe, []byte("binary 1"), 0o755); err != nil {
		t.Fatal(err)
	}
	exeFn := func() (string, error) { return exe, nil }
	info := func(settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	noInfo := func() (*debug.BuildInfo, bool) { return nil, false }
	key := func(i func() (*debug.BuildInfo, bool)) string {
		t.Helper()
		k, err := computeCodeKey(i, exeFn)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	clean := key(info("vcs.revision", "abc123", "vcs.modified", "false"))
	dirty := key(info("vcs.revision", "abc123", "vcs.modified", "true"))
	bare := key(noInfo)
	noVCS := key(info("GOOS", "linux"))
	if clean != "vcs abc123" {
		t.Errorf("clean build: %q", clean)
	}
	if !strings.HasPrefix(dirty, "vcs abc123 modified exe ") || len(dirty) != len("vcs abc123 modified exe ")+64 {
		t.Errorf("modified build: %q", dirty)
	}
	if !strings.HasPrefix(bare, "exe ") || bare != noVCS || !strings.HasSuffix(dirty, bare[len("exe "):]) {
		t.Errorf("without VCS: %q and %q (modified: %q)", bare, noVCS, dirty)
	}
	if err := os.WriteFile(exe, []byte("binary 2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if key(info("vcs.revision", "abc123")) != clean {
		t.Error("a clean build's key depends on the executable")
	}
	if key(info("vcs.revision", "abc123", "vcs.modified", "true")) == dirty || key(noInfo) == bare {
		t.Error("a changed executable keeps its key")
	}
	if key(info("vcs.revision", "def456")) == clean {
		t.Error("another revision keeps the key")
	}
	if _, err := computeCodeKey(noInfo, func() (string, error) { return "", errors.New("no exe") }); err == nil {
		t.Error("no executable: no error")
	}
	if k, err := CodeKey(); err != nil || k == "" {
		t.Errorf("CodeKey of the test binary: %q, %v", k, err)
	}
}
