package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
)

// runOK runs the CLI and fails the test unless it exits 0.
func runOK(t *testing.T, args ...string) {
	t.Helper()
	if code := run(args); code != 0 {
		t.Fatalf("vomc %s exited %d", strings.Join(args, " "), code)
	}
}

// runFail runs the CLI and fails the test if it exits 0.
func runFail(t *testing.T, args ...string) {
	t.Helper()
	if code := run(args); code == 0 {
		t.Fatalf("vomc %s succeeded, want an error", strings.Join(args, " "))
	}
}

func exists(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty (%v)", p, err)
		}
	}
}

// TestEndToEnd drives every command the way the README does.
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }

	runOK(t, "tree", "sample", "-A", "3", "-D", "3", "--seed", "4", "--out", p("t.json")+","+p("t.svg")+","+p("t.png")+","+p("t.dot"))
	exists(t, p("t.json"), p("t.svg"), p("t.png"), p("t.dot"))
	runFail(t, "tree", "sample", "--out", p("t.json")) // exists, no --force
	runOK(t, "tree", "show", p("t.json"))
	runOK(t, "generate", "-n", "3000", "--out", p("seq.txt"), p("t.json"))
	exists(t, p("seq.txt"))

	runOK(t, "data", "-A", "3", "-D", "2", "-K", "60", "-N", "128", "--seed", "3", "--out", p("test"), "--npy")
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "20", "-N", "128", "--NK", "512", "--fresh=false", "--seed", "4", "--out", p("train"))
	exists(t, p("test/manifest.json"), p("test/symbols.bin"), p("test/symbols.npy"))

	runOK(t, "eval", "--data", p("test"), "--train", p("train"), "--methods", "ctw,kn,ppm:escape=C:excl,markov:k=2,unigram", "--out", p("ev"))
	exists(t, p("ev/results.json"), p("ev/results.csv"), p("ev/summary.txt"), p("ev/loss.png"), p("ev/loss.svg"))
	res, err := eval.LoadJSONFile(p("ev/results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Windows != 60 || res.N != 128 || len(res.Methods) != 5 || !strings.HasPrefix(res.Ref().Name, "CTW") {
		t.Fatalf("unexpected result: %d windows, N=%d, %d methods, reference %s", res.Windows, res.N, len(res.Methods), res.Ref().Name)
	}
	// CTW is Bayes-optimal for the data set's prior: no method beats it on
	// average over the window by more than noise.
	for _, m := range res.Methods {
		if m.ExcessWindow.Hi < 0 {
			t.Errorf("%s beats CTW significantly: excess %+v", m.Name, m.ExcessWindow)
		}
	}
	runOK(t, "plot", "--bits", "--logx", p("ev/results.json"), p("fig.png"), p("fig.svg"))
	exists(t, p("fig.png"), p("fig.svg"))
	runFail(t, "plot", p("ev/results.json"), p("fig.png")) // exists

	runOK(t, "eval", "--file", p("seq.txt"), "--alphabet", "012", "-N", "500", "-D", "3", "--methods", "ctw,kn:delta=0.5,ppm", "--out", p("evf"))
	runOK(t, "eval", "--file", p("seq.txt"), "--alphabet", "012", "-D", "3", "--methods", "ctw,kn,ppm,markov,unigram", "--half", "--out", p("half"))
	checkHalf(t, p("seq.txt"), p("half/half.txt"))
	runOK(t, "ctw", "-D", "3", "--lambda", "0.15", "--init", "pad", "--alphabet", "012", "--map", p("map.json"), "--weights", p("w.csv"), "--predictions", p("pr.csv"), p("seq.txt"))
	exists(t, p("map.json"), p("w.csv"), p("pr.csv"))
	runOK(t, "bench", "-n", "20000", "-reps", "1")
	runOK(t, "quickstart", "--out", p("qs"), "-K", "40", "--K-train", "10", "-N", "64")
	exists(t, p("qs/loss.png"), p("qs/summary.txt"), p("qs/tree0.svg"), p("qs/data/test/manifest.json"))
	runOK(t, "help")
	runOK(t, "version")
}

// checkHalf checks the half-file protocol's table (vomc eval --half): one
// row per method, in the order asked for, every method frozen, and the
// bits/symbol of CTW and of the unigram equal to the protocol computed
// here from the symbol file (learn the first half, freeze, average −log2 P
// over the second).
func checkHalf(t *testing.T, seqFile, halfFile string) {
	t.Helper()
	b, err := os.ReadFile(halfFile)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(seqFile)
	if err != nil {
		t.Fatal(err)
	}
	var x []byte
	for _, c := range raw {
		if c >= '0' && c <= '2' {
			x = append(x, c-'0')
		}
	}
	h := len(x) / 2
	// CTW, frozen after the first half.
	pr, err := ctw.New(ctw.Config{A: 3, D: 3, Lambda: 0.15, Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	st := pr.NewState()
	for _, a := range x[:h] {
		st.Observe(a)
	}
	st.(predict.Freezer).Freeze()
	dist := make([]float64, 3)
	ctwBits := 0.0
	for _, a := range x[h:] {
		st.Predict(dist)
		ctwBits -= math.Log2(dist[a])
		st.Observe(a)
	}
	ctwBits /= float64(len(x) - h)
	// The unigram (KT, α = 1/2) of the first half.
	var n [3]float64
	for _, a := range x[:h] {
		n[a]++
	}
	uniBits := 0.0
	for _, a := range x[h:] {
		uniBits -= math.Log2((n[a] + 0.5) / (float64(h) + 1.5))
	}
	uniBits /= float64(len(x) - h)

	var bits []float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[2:] {
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-2], 64)
		if err != nil || f[len(f)-1] != "yes" {
			t.Fatalf("half.txt row %q: want bits/symbol and frozen = yes", line)
		}
		bits = append(bits, v)
	}
	if len(bits) != 5 {
		t.Fatalf("half.txt has %d rows, want 5 (ctw,kn,ppm,markov,unigram):\n%s", len(bits), b)
	}
	if math.Abs(bits[0]-ctwBits) > 5.1e-5 || math.Abs(bits[4]-uniBits) > 5.1e-5 {
		t.Errorf("half.txt: CTW %v, unigram %v bits/symbol; computed %.6f, %.6f", bits[0], bits[4], ctwBits, uniBits)
	}
	for i, v := range bits[:4] { // every context model beats the unigram on a D=3 source
		if !(v > 0 && v < bits[4]) {
			t.Errorf("half.txt: method %d at %v bits/symbol, unigram %v", i, v, bits[4])
		}
	}
}

// TestBadInput checks that bad input gives an error exit, never a panic,
// and that nothing is overwritten.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	os.WriteFile(p("bad.txt"), []byte("0120x1"), 0o644)
	os.WriteFile(p("ok.txt"), []byte("012012012"), 0o644)
	runFail(t, "ctw", "--alphabet", "012", p("bad.txt"))                 // unknown symbol
	runFail(t, "ctw", "--lambda", "1.5", p("ok.txt"))                    // λ outside (0,1)
	runFail(t, "ctw", "--lambda", "0", p("ok.txt"))                      // λ outside (0,1)
	runFail(t, "ctw", "--mode", "raw", "-D", "12", p("ok.txt"), "extra") // two files
	big := make([]byte, 2<<20)
	for i := range big {
		big[i] = byte(i * 7919 >> 3)
	}
	os.WriteFile(p("big.bin"), big, 0o644)
	runFail(t, "eval", "--file", p("big.bin"), "-D", "40", "--mode", "raw", "--out", p("o")) // context tree too big for memory
	runFail(t, "ctw", "--mode", "raw", "-D", "40", p("big.bin"))
	runFail(t, "data", "-A", "3", "-D", "3", "-K", "10", "--lambda", "2", "--out", p("d"))
	runFail(t, "data", "-A", "1", "-D", "3", "-K", "10", "--out", p("d"))
	runFail(t, "nope")
	runFail(t, "tree", "sample", "-D", "x")

	// A corrupt manifest is reported, and an existing output is not replaced.
	runOK(t, "data", "-A", "2", "-D", "1", "-K", "5", "-N", "16", "--out", p("ds"))
	man := p("ds/manifest.json")
	orig, _ := os.ReadFile(man)
	os.WriteFile(man, orig[:len(orig)/2], 0o644)
	runFail(t, "eval", "--data", p("ds"), "--methods", "ctw", "--out", p("e"))
	os.WriteFile(p("keep.txt"), []byte("precious"), 0o644)
	runFail(t, "generate", "-n", "10", "--out", p("keep.txt"), p("missing.json"))
	if b, _ := os.ReadFile(p("keep.txt")); string(b) != "precious" {
		t.Errorf("existing file overwritten: %q", b)
	}
}

// TestDataLeaves checks --leaves: a mixed data set records its prior, and
// impossible leaf settings are refused before anything is written.
func TestDataLeaves(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "1,2,3", "-K", "30", "-N", "32", "--leaves", "mixed", "--sparse-frac", "0.3", "--seed", "2", "--out", p("mixed"))
	b, err := os.ReadFile(p("mixed/manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct{ Prior source.Prior }
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	if man.Prior.Leaves != source.Mixed || man.Prior.SparseFrac != 0.3 || man.Prior.SparseZero != 0.5 {
		t.Errorf("manifest prior %+v, want mixed leaves with sparse_frac 0.3, sparse_zero 0.5", man.Prior)
	}
	for i, args := range [][]string{
		{"--leaves", "gaussian"},
		{"--leaves", "mixed", "--sparse-frac", "1"},
		{"--leaves", "mixed", "--sparse-frac", "0"},
		{"--leaves", "mixed", "--sparse"},
		{"--leaves", "sparse", "--sparse-zero", "2"},
		{"--leaves", "dirichlet", "--sparse-frac", "0.3"},
		{"--sparse", "--sparse-frac", "0.3"},
		{"--sparse", "--leaves", "dirichlet"},
		{"--sparse-zero", "0.3"},
	} {
		out := p(fmt.Sprintf("bad%d", i))
		runFail(t, append([]string{"data", "-K", "5", "-N", "16", "--out", out}, args...)...)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: output written despite the error", args)
		}
	}
}
