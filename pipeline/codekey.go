package pipeline

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	"github.com/vomc/vomc/internal/fsutil"
)

// CodeKey identifies the code that computes the stages; it is part of every
// stage hash, so that a stage cached by other code is computed again.
//
// It is, from the binary's build information (debug.ReadBuildInfo):
//
//   - "vcs <revision>" for a binary built from a clean VCS checkout;
//   - "vcs <revision> modified exe <sha256>" for one built from a dirty
//     tree (vcs.modified=true): the revision alone does not identify
//     uncommitted changes, so the executable's SHA-256 is added;
//   - "exe <sha256>" when there is no VCS information (go run, test
//     binaries, -buildvcs=false): the SHA-256 of the running executable
//     (os.Executable).
//
// Every task of one Slurm sweep runs the same binary, so they agree on it,
// and a local run with that binary shares their stages. The key is computed
// once per process.
func CodeKey() (string, error) {
	codeKeyOnce.Do(func() { codeKey, codeKeyErr = computeCodeKey(debug.ReadBuildInfo, os.Executable) })
	return codeKey, codeKeyErr
}

var (
	codeKeyOnce sync.Once
	codeKey     string
	codeKeyErr  error
)

// computeCodeKey is CodeKey with the build information and the executable's
// path injected.
func computeCodeKey(info func() (*debug.BuildInfo, bool), exe func() (string, error)) (string, error) {
	rev, modified := vcsStamp(info)
	if rev != "" && !modified {
		return "vcs " + rev, nil
	}
	path, err := exe()
	if err != nil {
		return "", fmt.Errorf("pipeline: code key: %w", err)
	}
	sum, err := fsutil.FileSHA256(path)
	if err != nil {
		return "", fmt.Errorf("pipeline: code key: %w", err)
	}
	if rev != "" {
		return "vcs " + rev + " modified exe " + sum, nil
	}
	return "exe " + sum, nil
}

// BuildVCS returns the VCS revision stamped into the running binary and
// whether its tree was modified; "" without a stamp (-buildvcs=false, go
// run, test binaries).
func BuildVCS() (rev string, modified bool) { return vcsStamp(debug.ReadBuildInfo) }

// vcsStamp returns the VCS revision stamped into the build information and
// whether its tree was modified; "" without a stamp (-buildvcs=false).
func vcsStamp(info func() (*debug.BuildInfo, bool)) (rev string, modified bool) {
	if bi, ok := info(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	return rev, modified
}
