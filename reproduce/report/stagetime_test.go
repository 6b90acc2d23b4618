package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/results"
)

// TestStageTimeResumed: the report counts a training stage that was
// interrupted and resumed with all its invocations, not only the one that
// completed it (whose time is all the stage's Done records): depth5's
// train-tf-h4-4-sin recorded 423.5 s though its training took 1913.3 s.
// The cost line's total and the stage table's rows add the parts up; the
// other stages keep the seconds they recorded.
func TestStageTimeResumed(t *testing.T) {
	t.Parallel()
	// file is the record a stage's directory holds: "" none, else its
	// name and JSON content
	type file struct{ name, json string }
	cases := []struct {
		name  string // stage name
		secs  float64
		file  file
		want  float64
		note  string // part of the status note, "" for none
		isRes bool
	}{
		{"eval-tf-h4-4", 5.2, file{}, 5.2, "", false},
		{"data-train", 3.0, file{}, 3.0, "", false},
		// a stage trained in one invocation: its time includes the training
		{"train-tf-h4", 899.7, file{results.InfoFile, `{"Seconds": 898.0}`}, 899.7, "", false},
		{"synth-tf20", 220.0, file{"synth.json", `{"Seconds": 219.1}`}, 220.0, "", false},
		// resumed, recorded with EarlierSeconds: the earlier invocations'
		// training up to the checkpoint + the invocation that completed it
		{"train-tf-h4-4-sin", 423.5, file{results.InfoFile, `{"Seconds": 1913.3, "EarlierSeconds": 1495.0}`}, 1918.5, "resumed: 1495.0 s of training in earlier invocations + 423.5 s", true},
		{"synth-allcounts-s1", 100.0, file{"synth.json", `{"Seconds": 210.0, "EarlierSeconds": 112.0}`}, 212.0, "resumed: 112.0 s of training", true},
		// resumed, recorded before EarlierSeconds (depth5): at least its
		// training time over all invocations
		{"train-tf-h4-4-sin-s2", 816.0, file{results.InfoFile, `{"Seconds": 1530.0}`}, 1530.0, "resumed: its training time over all invocations (the one that completed it took 816.0 s", true},
		// a training stage whose record cannot be read keeps its seconds
		{"train-tf-h4-4-4", 1765.0, file{}, 1765.0, "", false},
	}
	deps := map[string]*pipeline.Done{}
	t0 := time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC)
	var wantTotal float64
	wantResumed := 0
	for i, tc := range cases {
		dir := t.TempDir()
		if tc.file.name != "" {
			if err := os.WriteFile(filepath.Join(dir, tc.file.name), []byte(tc.file.json), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dd := &pipeline.Done{Name: tc.name, Hash: fmt.Sprintf("%016x", i), Seconds: tc.secs, Finished: t0.Add(time.Duration(i) * time.Minute), Dir: dir, Skipped: true}
		deps[tc.name] = dd
		secs, note := stageTime(tc.name, dd)
		if d := secs - tc.want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: %.1f s, want %.1f", tc.name, secs, tc.want)
		}
		if tc.note == "" && note != "" || !strings.Contains(note, tc.note) {
			t.Errorf("%s: note %q, want one with %q", tc.name, note, tc.note)
		}
		wantTotal += tc.want
		if tc.isRes {
			wantResumed++
		}
	}
	rows, total, resumed := stageRows(deps, "k")
	if d := total - wantTotal; d > 1e-6 || d < -1e-6 || resumed != wantResumed {
		t.Errorf("total %.1f s with %d resumed stages, want %.1f s and %d", total, resumed, wantTotal, wantResumed)
	}
	if len(rows) != len(cases) {
		t.Fatalf("%d rows, want %d", len(rows), len(cases))
	}
	for i, tc := range cases { // in the order they finished
		r := rows[i]
		if r.Name != tc.name || r.Seconds != fmt.Sprintf("%.1f", tc.want) || !strings.HasPrefix(r.Status, "cached from an earlier invocation") || (tc.note != "") != strings.Contains(r.Status, "resumed") {
			t.Errorf("row %d: %+v, want %s with %.1f s", i, r, tc.name, tc.want)
		}
	}
}
