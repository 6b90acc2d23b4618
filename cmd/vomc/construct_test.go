package main

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vomc/vomc/construct"
	"github.com/vomc/vomc/ctw"
)

// numberRows returns the lines of s made of exactly n numbers, parsed.
func numberRows(s string, n int) [][]float64 {
	var rows [][]float64
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != n {
			continue
		}
		row := make([]float64, n)
		ok := true
		for i, v := range f {
			var err error
			if row[i], err = strconv.ParseFloat(v, 64); err != nil {
				ok = false
				break
			}
		}
		if ok {
			rows = append(rows, row)
		}
	}
	return rows
}

// checkConstructTable checks the table of vomc construct (rows j, P_TF,
// P_CTW, max|diff| for j = 0..len(x)) against CTW computed by package ctw
// (the printed probabilities have five decimals) and returns the largest
// max|diff|.
func checkConstructTable(t *testing.T, out string, A, D int, x []byte) float64 {
	t.Helper()
	rows := numberRows(out, 1+2*A+1)
	if len(rows) != len(x)+1 {
		t.Fatalf("%d table rows, want %d:\n%s", len(rows), len(x)+1, out)
	}
	p, err := ctw.New(ctw.Config{A: A, D: D, Lambda: 0.15, Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	st := p.NewState()
	dist := make([]float64, A)
	worst := 0.0
	for j, row := range rows {
		st.Predict(dist)
		if row[0] != float64(j) {
			t.Fatalf("row %d numbered %v", j, row[0])
		}
		e := 0.0
		for a := range A {
			tf, ref := row[1+a], row[1+A+a]
			if math.Abs(ref-dist[a]) > 6e-6 {
				t.Errorf("j=%d: P_CTW(%d) printed %v, package ctw gives %v", j, a, ref, dist[a])
			}
			e = math.Max(e, math.Abs(tf-ref))
		}
		if d := row[1+2*A]; d < 0 || math.Abs(d-e) > 1.1e-5+0.01*d {
			t.Errorf("j=%d: max|diff| printed %v, the printed rows differ by %v", j, d, e)
		}
		worst = math.Max(worst, row[1+2*A])
		if j < len(x) {
			st.Observe(x[j])
		}
	}
	return worst
}

func isPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 100 || img.Bounds().Dy() < 100 {
		t.Errorf("%s: not a drawn PNG (%v)", path, err)
	}
}

func TestConstructCmd(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	err := constructCmd([]string{"-A", "3", "-D", "2", "--lambda", "0.15", "--alpha", "0.5", "--input", "0120112", "--show",
		"--weights", filepath.Join(dir, "w.safetensors"), "--error-plot", filepath.Join(dir, "err.png"), "--c-range", "1,1000", "--c-points", "7"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	// At c = ∞ the construction is CTW, at every position.
	if worst := checkConstructTable(t, s, 3, 2, []byte{0, 1, 2, 0, 1, 1, 2}); worst > 1e-12 {
		t.Errorf("max |P_TF − P_CTW| = %v at c = ∞", worst)
	}
	// The error against c: seven temperatures from 1 to 1000, then c = ∞;
	// it falls with c, from a visible error to none.
	var cs, errs []float64
	for _, m := range regexp.MustCompile(`(?m)^\s*c=(\S+)\s.*=\s*(\S+)$`).FindAllStringSubmatch(s, -1) {
		c, err1 := strconv.ParseFloat(strings.Replace(m[1], "∞", "Inf", 1), 64)
		e, err2 := strconv.ParseFloat(m[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("row %q", m[0])
		}
		cs, errs = append(cs, c), append(errs, e)
	}
	if len(cs) != 8 || cs[0] != 1 || cs[6] != 1000 || !math.IsInf(cs[7], 1) {
		t.Fatalf("temperatures %v", cs)
	}
	for i := 1; i < len(errs); i++ {
		if errs[i] > errs[i-1] {
			t.Errorf("error grows with c: %v at c=%v, %v at c=%v", errs[i-1], cs[i-1], errs[i], cs[i])
		}
	}
	if errs[0] < 0.01 || errs[7] > 1e-12 {
		t.Errorf("error %v at c=1, %v at c=∞: want large, then none", errs[0], errs[7])
	}
	// The weights file is the construction's, byte for byte.
	con, err := construct.Build(construct.Config{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5, N: 7 + 2 + 1})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := con.WriteSafetensors(&want); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "w.safetensors")); err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("w.safetensors: %d bytes, the construction's are %d (%v)", len(got), want.Len(), err)
	}
	isPNG(t, filepath.Join(dir, "err.png"))
	// At c = 50 the softmax is not yet hard: visibly off, but close.
	out.Reset()
	if err := constructCmd([]string{"--c", "50", "--input", "0,1,1,0", "-A", "2", "-D", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	if worst := checkConstructTable(t, out.String(), 2, 1, []byte{0, 1, 1, 0}); worst < 1e-4 || worst > 0.05 {
		t.Errorf("max |P_TF − P_CTW| = %v at c = 50:\n%s", worst, out.String())
	}
	for _, bad := range [][]string{{"--c", "-3"}, {"--input", "0193"}, {"-D", "0"}, {"--error-plot", "x.png", "--c-range", "5,1"}} {
		if err := constructCmd(bad, &out); err == nil {
			t.Errorf("construct %v succeeded", bad)
		}
	}
	// Existing outputs are not overwritten without --force.
	if err := constructCmd([]string{"--weights", filepath.Join(dir, "w.safetensors")}, &out); err == nil {
		t.Error("overwrote an existing weights file without --force")
	}
}

// TestConstructMLP: --ff mlp --width W runs the construction with ReLU
// FF networks, and --ff-plot draws the error against the width.
func TestConstructMLP(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	// -short: narrower networks and fewer widths in the plot (the same
	// code paths).
	width, maxK := "3000", "64"
	if testing.Short() {
		width, maxK = "1000", "16"
	}
	if err := constructCmd([]string{"-D", "2", "--random", "25", "--N", "30", "--ff", "mlp", "--width", width,
		"--ff-plot", filepath.Join(dir, "ff.png"), "--ff-max-k", maxK}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	// ReLU networks of width ≤ W stand in for the FF layers: the
	// construction is CTW up to a small error.
	rows := numberRows(s, 1+2*3+1)
	if len(rows) != 26 {
		t.Fatalf("%d table rows, want 26:\n%s", len(rows), s)
	}
	worst := 0.0
	for _, r := range rows {
		worst = math.Max(worst, r[7]) // max|diff| (the input is random: CTW itself is checked in TestConstructCmd)
	}
	if worst > 1e-4 {
		t.Errorf("max |P_TF − P_CTW| = %v with ReLU FF layers of width %s", worst, width)
	}
	// The width sweep: K = 1, 2, 4, … maxK segments, the error falling as
	// ≈ 0.45·K^−2.
	sweep := numberRows(s, 3)
	if k, _ := strconv.Atoi(maxK); len(sweep) != int(math.Log2(float64(k)))+1 {
		t.Fatalf("%d rows in the width sweep:\n%s", len(sweep), s)
	}
	for i, r := range sweep {
		if K := r[0]; K != math.Exp2(float64(i)) || r[1] < 1 || r[2]*K*K < 0.2 || r[2]*K*K > 0.6 {
			t.Errorf("K=%v W=%v: error %v, K²·error %.3g (want ≈ 0.45)", r[0], r[1], r[2], r[2]*K*K)
		}
	}
	isPNG(t, filepath.Join(dir, "ff.png"))
	for _, bad := range [][]string{{"--ff", "mlp"}, {"--ff", "mlp", "--width", "5"}, {"--ff", "relu"}, {"--width", "100"}} {
		if err := constructCmd(bad, &out); err == nil {
			t.Errorf("construct %v succeeded", bad)
		}
	}
}
