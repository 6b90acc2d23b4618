package scripts

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeVomc writes a stand-in for vomc whose `bench train --json` reports
// the given tokens/s for C1 and C2 and records each call's order in log.
func fakeVomc(t *testing.T, dir, name string, c1, c2 float64, log string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	script := fmt.Sprintf(`#!/bin/sh
echo %s >> %s
echo '[{"name":"C1","tokens_per_s":%g,"loss":1.1},{"name":"C2","tokens_per_s":%g,"loss":1.2}]'
`, name, log, c1, c2)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBenchPairs runs bench_pairs.sh on two stand-ins with known speeds:
// the JSON lines, the alternating order and the ratios of the summary;
// and its refusals (an existing output file is left as it was, a binary
// that is not executable).
func TestBenchPairs(t *testing.T) {
	needSh(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 for the script's summary")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "order")
	a := fakeVomc(t, dir, "a", 100, 10, log)
	b := fakeVomc(t, dir, "b", 150, 12, log)
	out := filepath.Join(dir, "pairs.jsonl")
	run := func(args ...string) (string, error) {
		cmd := exec.Command("sh", append([]string{"./bench_pairs.sh"}, args...)...)
		cmd.Env = append(os.Environ(), "PAIRS=3", "THREADS=1 2", "PYTHON="+py)
		got, err := cmd.CombinedOutput()
		return string(got), err
	}
	summary, err := run(a, b, out)
	if err != nil {
		t.Fatalf("bench_pairs.sh: %v\n%s", err, summary)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2*2*3*2 { // configs × binaries × rounds × thread counts
		t.Fatalf("%d JSON lines, want 24:\n%s", len(lines), data)
	}
	for _, l := range lines {
		var r struct {
			Bin     string  `json:"bin"`
			Threads int     `json:"threads"`
			Cfg     string  `json:"cfg"`
			TPS     float64 `json:"tokens_per_s"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Bin == "" || r.Threads == 0 || r.TPS == 0 {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	order, _ := os.ReadFile(log)
	if got, want := strings.Fields(string(order)), strings.Fields("a b b a a b a b b a a b"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("calls in the order %v, want %v (alternating within rounds)", got, want)
	}
	for _, want := range []string{"C1           1         100         150                   1.500  1.500–1.500", "C2           2          10          12                   1.200"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	if got, err := run(a, b, out); err == nil || !strings.Contains(got, "exists") {
		t.Errorf("an existing output: err %v, output %q", err, got)
	}
	if after, _ := os.ReadFile(out); string(after) != string(data) {
		t.Error("the existing output file was changed")
	}
	if got, err := run(filepath.Join(dir, "missing"), b, filepath.Join(dir, "new.jsonl")); err == nil || !strings.Contains(got, "not an executable") {
		t.Errorf("a missing binary: err %v, output %q", err, got)
	}
}
