package trainrun

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Training snapshots: the model's parameters kept at chosen steps, for
// studying how it learns (package dynamics). The snapshot of step s is the
// model file SnapshotDir/step-%09d.safetensors of the run directory.

// SnapshotDir is the directory of a run's snapshots inside the run
// directory.
const SnapshotDir = "snapshots"

// SnapshotPath is the file of the snapshot of step in run directory dir.
func SnapshotPath(dir string, step int) string {
	return filepath.Join(dir, SnapshotDir, SnapshotName(step))
}

// SnapshotName is the file name of the snapshot of step in SnapshotDir:
// step-%09d.safetensors.
func SnapshotName(step int) string { return fmt.Sprintf("step-%09d.safetensors", step) }

// ParseSnapshotName reads the step of a snapshot's file name
// (SnapshotName); ok is false for any other name.
func ParseSnapshotName(name string) (step int, ok bool) {
	digits, ok := strings.CutPrefix(name, "step-")
	if !ok {
		return 0, false
	}
	digits, ok = strings.CutSuffix(digits, ".safetensors")
	if !ok || len(digits) != 9 || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	step, err := strconv.Atoi(digits)
	return step, err == nil
}

// MetaSnapshots is the checkpoint metadata key holding a run's snapshot
// specification, so that a resumed run keeps the same schedule.
const MetaSnapshots = "snapshots"

// SnapshotSteps are the steps of a snapshot specification for a run of
// total steps: "" (none), "log:K" (K log-spaced steps from 1 to total:
// round(total^(i/(K−1))), i = 0..K−1, repeats dropped), "every:S" (S, 2S,
// …, and total), or a comma list of steps ("10,100,1000"; steps beyond
// total are dropped). The steps are increasing.
func SnapshotSteps(spec string, total int) ([]int, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || total < 1 {
		return nil, nil
	}
	bad := func() error {
		return fmt.Errorf("snapshots %q: want log:K (K ≥ 2), every:S (S ≥ 1) or a comma list of steps ≥ 1", spec)
	}
	var out []int
	if k, ok := strings.CutPrefix(spec, "log:"); ok {
		K, err := strconv.Atoi(k)
		if err != nil || K < 2 || K > 1<<20 {
			return nil, bad()
		}
		for i := range K {
			out = append(out, int(math.Round(math.Pow(float64(total), float64(i)/float64(K-1)))))
		}
	} else if s, ok := strings.CutPrefix(spec, "every:"); ok {
		S, err := strconv.Atoi(s)
		if err != nil || S < 1 {
			return nil, bad()
		}
		for st := S; st < total; st += S {
			out = append(out, st)
		}
		out = append(out, total)
	} else {
		for _, f := range strings.Split(spec, ",") {
			st, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || st < 1 {
				return nil, bad()
			}
			if st <= total {
				out = append(out, st)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// joinSteps writes steps as a comma list.
func joinSteps(steps []int) string {
	s := make([]string, len(steps))
	for i, v := range steps {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}
