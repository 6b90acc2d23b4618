package scripts

import (
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// curveEval writes a results.json as 'vomc eval' does (the fields
// curve.py reads) with the transformer's and CTW's second-half excess.
func curveEval(t *testing.T, dir, reference, tf string, tfExcess, ctwExcess float64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ex := func(m float64) string { return fmt.Sprintf(`{"mean":%v,"sd":0.1,"lo":%v,"hi":%v}`, m, m-0.01, m+0.01) }
	js := fmt.Sprintf(`{"format":"vomc-eval/1","config":{"reference":%q},"methods":[`+
		`{"name":%q,"excess_second_half":%s},{"name":"CTW(D=5,λ=0.15,α=0.5)","excess_second_half":%s},`+
		`{"name":%q,"excess_second_half":%s}]}`, reference, reference, ex(0), ex(ctwExcess), tf, ex(tfExcess))
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCurve runs docs/figures/paper_shape_gpu/device/curve.py on a run
// with two checkpoint evaluations and a final one: rows by step, tokens
// from the batch and the epoch's windows (the last batch of an epoch
// holds the rest), the excesses as read; a reference other than Bayes and
// a run without evaluations are refused.
func TestCurve(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	script, _ := filepath.Abs("../docs/figures/paper_shape_gpu/device/curve.py")
	run := t.TempDir()
	os.WriteFile(filepath.Join(run, "train_config.json"), []byte(`{"train":{"batch_size":4}}`), 0o644)
	os.WriteFile(filepath.Join(run, "train.jsonl"), []byte("{\"step\":5}\n{\"step\":9}\n"), 0o644)
	const bayes, tf = "Bayes(D=1..5,λ=0.15,α=0.5)", "TF(L=2,H=[8,8],E=128,N=16)@r-step3"
	curveEval(t, filepath.Join(run, "evals", "step-3"), bayes, tf, 0.2, 0.01)
	curveEval(t, filepath.Join(run, "evals", "step-7"), bayes, tf, 0.1, 0.01)
	curveEval(t, filepath.Join(run, "evals", "final"), bayes, "TF(L=2,H=[8,8],E=128,N=16)@r", 0.05, 0.01)
	// 10 windows an epoch, batch 4: 3 steps an epoch (4, 4, 2 windows)
	out, err := exec.Command(py, script, run, "--windows", "10", "--N", "16").CombinedOutput()
	if err != nil {
		t.Fatalf("curve.py: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(run, "curve.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"3", "checkpoint", fmt.Sprint(10 * 16), "0.2"},               // one epoch
		{"7", "checkpoint", fmt.Sprint((20 + 4) * 16), "0.1"},         // two epochs and a batch
		{"9", "final (best validation)", fmt.Sprint(30 * 16), "0.05"}, // the last logged step
	}
	if len(recs) != 4 || recs[0][3] != "tf_excess" || recs[0][6] != "ctw_excess" {
		t.Fatalf("curve.csv:\n%v", recs)
	}
	for i, w := range want {
		if got := recs[i+1][:4]; strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("row %d: %v, want %v", i+1, got, w)
		}
	}
	for _, name := range []string{"curve.md", "curve.svg"} {
		if b, err := os.ReadFile(filepath.Join(run, name)); err != nil || !strings.Contains(string(b), "0.1") {
			t.Errorf("%s: %v (%d bytes)", name, err, len(b))
		}
	}
	curveEval(t, filepath.Join(run, "evals", "step-8"), "CTW(D=5,λ=0.15,α=0.5)", tf, 0.1, 0.01)
	if out, err := exec.Command(py, script, run).CombinedOutput(); err == nil || !strings.Contains(string(out), "not the Bayes predictor") {
		t.Errorf("a CTW reference: %v\n%s", err, out)
	}
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "train_config.json"), []byte(`{"train":{"batch_size":4}}`), 0o644)
	if out, err := exec.Command(py, script, empty).CombinedOutput(); err == nil || !strings.Contains(string(out), "no evaluations") {
		t.Errorf("no evaluations: %v\n%s", err, out)
	}
}
