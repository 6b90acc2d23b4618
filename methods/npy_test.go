package methods

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/npy"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

func npyWindows(W, N, A int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	ws := make([][]byte, W)
	for w := range ws {
		ws[w] = make([]byte, N)
		for i := range ws[w] {
			ws[w][i] = byte(r.IntN(A))
		}
	}
	return ws
}

// writeF4 writes data as a float32 .npy of the given shape.
func writeF4(t *testing.T, path string, data []float64, shape ...int) {
	t.Helper()
	h, err := npy.Header("<f4", shape)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range data {
		h = binary.LittleEndian.AppendUint32(h, math.Float32bits(float32(v)))
	}
	if err := os.WriteFile(path, h, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNPYRoundTrip: exporting CTW and reading the export back gives
// bit-identical distributions and losses; a float32 copy is within float32
// rounding; State and PredictSequence agree.
func TestNPYRoundTrip(t *testing.T) {
	const W, N, A = 12, 40, 3
	ws := npyWindows(W, N, A, 3)
	ws[5] = append([]byte(nil), ws[4]...) // a duplicate window
	copy(ws[6][:20], ws[7][:20])          // a shared prefix
	d := Defaults{Backend: cpu.NewDefault(), A: A, D: 2, Lambda: 0.15, Alpha: 0.5, Windows: ws}
	bs, err := parseBuild("ctw", d)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := ExportNPY(dir, false, ws, Predictors(bs))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || filepath.Base(paths[0]) != "CTW_D=2_lambda=0.15_alpha=0.5.npy" {
		t.Fatalf("exported %v", paths)
	}
	if _, err := ExportNPY(dir, false, ws, Predictors(bs)); err == nil {
		t.Error("export replaced an existing file without force")
	}
	back, err := parseBuild("npy:path="+paths[0]+":name=back", d)
	if err != nil {
		t.Fatal(err)
	}
	p := back[0].Predictor
	if p.Name() != "back" {
		t.Errorf("name %q", p.Name())
	}
	want, got := make([]float64, N), make([]float64, N)
	for w, x := range ws {
		a, _ := predict.LogLoss(bs[0].Predictor, x, want)
		b, _ := predict.LogLoss(p, x, got)
		if a != b {
			t.Fatalf("window %d: CTW %v nats, its export %v", w, a, b)
		}
		// the State path (symbol by symbol) gives the same rows
		st := p.(*NPYPredictor).NewState()
		row := make([]float64, A)
		seq := make([]float64, N*A)
		predict.Sequence(bs[0].Predictor, x, seq)
		for i, s := range x {
			st.Predict(row)
			for q := range A {
				if row[q] != seq[i*A+q] {
					t.Fatalf("window %d position %d: state %v, CTW %v", w, i, row, seq[i*A:i*A+A])
				}
			}
			st.Observe(s)
		}
	}
	// float32
	a, err := npy.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	f4 := filepath.Join(dir, "f4.npy")
	writeF4(t, f4, a.Data, W, N, A)
	p4, err := LoadNPY(f4, "", ws, A)
	if err != nil {
		t.Fatal(err)
	}
	if p4.Name() != "f4" {
		t.Errorf("name %q", p4.Name())
	}
	for _, x := range ws {
		a, _ := predict.LogLoss(bs[0].Predictor, x, want)
		b, _ := predict.LogLoss(p4, x, got)
		if math.Abs(a-b) > 1e-5 {
			t.Errorf("float32 export: %v vs %v nats", b, a)
		}
	}
}

// TestNPYValidation: every defect is an error naming the window and
// position.
func TestNPYValidation(t *testing.T) {
	const W, N, A = 5, 8, 3
	ws := npyWindows(W, N, A, 9)
	uniform := func() []float64 {
		v := make([]float64, W*N*A)
		for i := range v {
			v[i] = 1.0 / A
		}
		return v
	}
	dir := t.TempDir()
	write := func(name string, data []float64, shape ...int) string {
		var b bytes.Buffer
		w, err := npy.NewWriter(&b, shape...)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		path := filepath.Join(dir, name)
		os.WriteFile(path, b.Bytes(), 0o644)
		return path
	}
	if _, err := LoadNPY(write("ok.npy", uniform(), W, N, A), "", ws, A); err != nil {
		t.Fatalf("uniform rows rejected: %v", err)
	}
	at := func(w, t, q int) int { return (w*N+t)*A + q }
	cases := []struct {
		name, want string
		edit       func(v []float64)
		shape      []int
	}{
		{"shape", "shape [5 8 2]", nil, []int{W, N, 2}},
		{"windows", "shape [4 8 3]", nil, []int{W - 1, N, A}},
		{"sum", "window 3 position 5: the row sums to", func(v []float64) { v[at(3, 5, 0)] += 0.01 }, nil},
		{"nan", "window 2 position 1 symbol 2: NaN", func(v []float64) { v[at(2, 1, 2)] = math.NaN() }, nil},
		{"negative", "window 0 position 7 symbol 1: -0.1", func(v []float64) { v[at(0, 7, 1)] = -0.1; v[at(0, 7, 0)] += 0.1 + 1.0/A }, nil},
		{"inf", "window 4 position 0 symbol 0: +Inf", func(v []float64) { v[at(4, 0, 0)] = math.Inf(1) }, nil},
		{"zero", "window 1 position 2: probability 0 for the observed symbol", func(v []float64) {
			s := ws[1][2]
			v[at(1, 2, int(s))] = 0
			v[at(1, 2, (int(s)+1)%A)] += 1.0 / A
		}, nil},
		{"causal", "not a causal predictor", func(v []float64) { // row 0 must be the same for every window
			v[at(2, 0, 0)], v[at(2, 0, 1)] = 0.5, 1.0/6
		}, nil},
	}
	for _, c := range cases {
		v := uniform()
		shape := []int{W, N, A}
		if c.shape != nil {
			shape = c.shape
			n := 1
			for _, d := range shape {
				n *= d
			}
			v = make([]float64, n)
			for i := range v {
				v[i] = 1.0 / float64(shape[2])
			}
		}
		if c.edit != nil {
			c.edit(v)
		}
		_, err := LoadNPY(write(c.name+".npy", v, shape...), "", ws, A)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := parseBuild("npy:path="+filepath.Join(dir, "ok.npy"), Defaults{Backend: cpu.NewDefault(), A: A}); err == nil {
		t.Error("npy without evaluated windows accepted")
	}
	if _, err := parseBuild("npy", Defaults{Backend: cpu.NewDefault(), A: A, Windows: ws}); err == nil {
		t.Error("npy without path accepted")
	}
}

func TestExportName(t *testing.T) {
	for in, want := range map[string]string{
		"CTW(D=3,λ=0.15,α=0.5)":           "CTW_D=3_lambda=0.15_alpha=0.5.npy",
		"KN(D=3,δ=0.8111)":                "KN_D=3_delta=0.8111.npy",
		"TF(L=2,H=[4,4],E=64,N=256)@run1": "TF_L=2_H=_4_4_E=64_N=256_at_run1.npy",
		"///":                             "method.npy",
	} {
		if got := ExportName(in); got != want {
			t.Errorf("ExportName(%q) = %q, want %q", in, got, want)
		}
	}
}
