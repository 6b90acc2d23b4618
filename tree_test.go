package vomc_test

import (
	"bytes"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// travelBudget is what the tracked tree may weigh: a lent GPU machine
// receives the working tree (tracked files and untracked ones not ignored)
// and the device script's binary (vomc, stripped and xz-compressed: 8.9 MiB
// on 2026-12-07) in at most 64 MiB together
// (docs/figures/paper_shape_gpu/device/continue.sh); 10 MiB are kept for the
// binary. A resumed paper-shape run's checkpoint (9.5 MiB for TF(8,8)) must
// fit in what is left too.
const travelBudget = 54 << 20

// TestTravellingTree: the tracked files stay within travelBudget, so that
// the device script can run at all; the largest files are named when they
// do not.
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
	var total int64
	for _, name := range bytes.Split(bytes.TrimRight(out, "\x00"), []byte{0}) {
		st, err := os.Lstat(string(name))
		if err != nil {
			continue // deleted in the working tree: it does not travel
		}
		files = append(files, file{string(name), st.Size()})
		total += st.Size()
	}
	t.Logf("tracked files: %d, %.1f MiB (budget %.0f MiB)", len(files), float64(total)/(1<<20), float64(travelBudget)/(1<<20))
	if total <= travelBudget {
		return
	}
	sort.Slice(files, func(i, j int) bool { return files[i].size > files[j].size })
	var top []string
	for _, f := range files[:min(10, len(files))] {
		top = append(top, f.name)
	}
	t.Errorf("the tracked tree weighs %.1f MiB, over the %.0f MiB that leave room for the device binary within the 64 MiB a GPU call takes; largest: %s",
		float64(total)/(1<<20), float64(travelBudget)/(1<<20), strings.Join(top, ", "))
}
