package vomc_test

import (
	"bytes"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The tree that travels to a lent GPU machine: the working tree (tracked
// files and untracked ones not ignored) and the device script's binary
// (vomc -tags nodemo, stripped and xz-compressed: 6.8 MiB on 2026-12-07)
// in at most 64 MiB together (docs/figures/paper_shape_gpu/device/continue.sh).
// A resumed paper-shape run's checkpoint, committed under ckptDir, travels
// too (TF(8,8): 9.5 MiB). So the tracked files outside ckptDir may weigh
// restBudget (64 − 7 for the binary − 9.5 for a TF(8,8) checkpoint), and
// everything tracked treeBudget (64 − 7).
const (
	ckptDir    = "docs/figures/paper_shape_gpu/ckpt/"
	restBudget = 47<<20 + 1<<19
	treeBudget = 57 << 20
	mib        = 1 << 20
)

// TestTravellingTree: the tracked files stay within restBudget outside
// ckptDir and within treeBudget in all, so that the device script can run
// and resume; the largest files are named when they do not.
func TestTravellingTree(t *testing.T) {
	if _, err := os.Stat(".git"); err != nil {
		t.Skip("not a git checkout: no tracked files to weigh")
	}
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	type file struct {
		name string
		size int64
	}
	var files []file
	var rest, ckpt int64
	for _, name := range bytes.Split(bytes.TrimRight(out, "\x00"), []byte{0}) {
		st, err := os.Lstat(string(name))
		if err != nil {
			continue // deleted in the working tree: it does not travel
		}
		files = append(files, file{string(name), st.Size()})
		if strings.HasPrefix(string(name), ckptDir) {
			ckpt += st.Size()
		} else {
			rest += st.Size()
		}
	}
	t.Logf("tracked files: %d; %.1f MiB outside %s (budget %.1f), %.1f MiB in it (all: budget %.0f)", len(files), float64(rest)/mib, ckptDir, float64(restBudget)/mib, float64(ckpt)/mib, float64(treeBudget)/mib)
	if rest <= restBudget && rest+ckpt <= treeBudget {
		return
	}
	sort.Slice(files, func(i, j int) bool { return files[i].size > files[j].size })
	var top []string
	for _, f := range files[:min(10, len(files))] {
		top = append(top, f.name)
	}
	t.Errorf("the tracked tree weighs %.1f MiB outside %s (budget %.1f MiB: room for the device binary and a TF(8,8) checkpoint within the 64 MiB a GPU call takes) and %.1f MiB in all (budget %.0f MiB); retire files to git history or ignore derivable ones; largest: %s",
		float64(rest)/mib, ckptDir, float64(restBudget)/mib, float64(rest+ckpt)/mib, float64(treeBudget)/mib, strings.Join(top, ", "))
}
