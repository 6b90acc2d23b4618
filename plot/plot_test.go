package plot_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/predict"
)

// ---- tiny predictors ----

type uniform struct{ a int }

func (uniform) Name() string              { return "uniform" }
func (u uniform) AlphabetSize() int       { return u.a }
func (u uniform) NewState() predict.State { return uniformState(u.a) }

type uniformState int

func (uniformState) Observe(byte) {}
func (s uniformState) Predict(p []float64) {
	for i := range p {
		p[i] = 1 / float64(s)
	}
}

// markov is the add-½ (KT) order-k Markov estimator.
type markov struct {
	name string
	a, k int
}

func (m markov) Name() string      { return m.name }
func (m markov) AlphabetSize() int { return m.a }
func (m markov) NewState() predict.State {
	return &markovState{m: m, counts: map[string][]float64{}}
}

type markovState struct {
	m      markov
	hist   []byte
	counts map[string][]float64
}

func (s *markovState) ctx() string {
	if len(s.hist) < s.m.k {
		return "<" + string(s.hist)
	}
	return string(s.hist[len(s.hist)-s.m.k:])
}

func (s *markovState) Predict(p []float64) {
	c := s.counts[s.ctx()]
	tot := 0.0
	for _, v := range c {
		tot += v
	}
	for i := range p {
		v := 0.0
		if c != nil {
			v = c[i]
		}
		p[i] = (v + 0.5) / (tot + 0.5*float64(s.m.a))
	}
}

func (s *markovState) Observe(x byte) {
	key := s.ctx()
	c := s.counts[key]
	if c == nil {
		c = make([]float64, s.m.a)
		s.counts[key] = c
	}
	c[x]++
	s.hist = append(s.hist, x)
}

// windows draws n windows of length N from random order-2 chains.
func windows(seed uint64, n, N, A int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([][]byte, n)
	for j := range out {
		trans := make([][]float64, A*A)
		for c := range trans {
			trans[c] = make([]float64, A)
			tot := 0.0
			for b := range trans[c] {
				v := r.ExpFloat64()
				v *= v * v
				trans[c][b] = v
				tot += v
			}
			for b := range trans[c] {
				trans[c][b] /= tot
			}
		}
		w := make([]byte, N)
		p1, p2 := r.IntN(A), r.IntN(A)
		for i := range w {
			u := r.Float64()
			s := 0
			row := trans[p1*A+p2]
			for ; s < A-1; s++ {
				u -= row[s]
				if u < 0 {
					break
				}
			}
			w[i] = byte(s)
			p1, p2 = p2, s
		}
		out[j] = w
	}
	return out
}

func sampleResult(t testing.TB, n, N int) *eval.Result {
	t.Helper()
	preds := []predict.Predictor{
		uniform{3},
		markov{"unigram (KT)", 3, 0},
		markov{"order-1 (KT)", 3, 1},
		markov{"CTW-like order-2 (KT)", 3, 2},
		markov{"order-3 (KT)", 3, 3},
	}
	res, err := eval.Evaluate(context.Background(), windows(5, n, N, 3), 3, preds, eval.Config{Reference: "CTW-like order-2 (KT)"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// handResult builds a tiny Result by hand: two methods, N positions.
func handResult(N, windows int) *eval.Result {
	res := &eval.Result{Windows: windows, N: N, AlphabetSize: 2, Confidence: 0.95, Reference: 0}
	for k, name := range []string{"CTW", "other"} {
		m := eval.MethodResult{Name: name, Position: make([]eval.Interval, N), Excess: make([]eval.Interval, N)}
		for i := range N {
			mean := 0.5 + 0.2/float64(i+1) + 0.05*float64(k)
			h := 0.02
			if windows < 2 {
				h = math.NaN()
			}
			m.Position[i] = eval.Interval{Mean: mean, SD: 0.1, Lo: mean - h, Hi: mean + h}
			ex := 0.05 * float64(k)
			m.Excess[i] = eval.Interval{Mean: ex, Lo: ex - h/2, Hi: ex + h/2}
		}
		res.Methods = append(res.Methods, m)
	}
	return res
}

func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s: size %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	sawSVG := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: malformed XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "svg" {
			sawSVG = true
		}
	}
	if !sawSVG {
		t.Fatalf("%s: no <svg> element", path)
	}
}

func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}

func TestSaveFormats(t *testing.T) {
	dir := t.TempDir()
	res := sampleResult(t, 40, 256)
	fig, err := plot.LossVsPosition(res, plot.Options{Excess: true, Smooth: 9})
	if err != nil {
		t.Fatal(err)
	}
	pngPath := filepath.Join(dir, "loss.png")
	if err := fig.Save(pngPath, 6*plot.Inch, 4*plot.Inch); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, pngPath, 900, 600)
	svgPath := filepath.Join(dir, "loss.SVG")
	if err := fig.Save(svgPath, 6*plot.Inch, 4*plot.Inch); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svgPath)
	pdfPath := filepath.Join(dir, "loss.pdf")
	if err := fig.Save(pdfPath, 6*plot.Inch, 4*plot.Inch); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(pdfPath); !bytes.HasPrefix(b, []byte("%PDF")) {
		t.Fatal("not a PDF")
	}
	// Overwrite in place; file mode is world-readable.
	if err := fig.Save(pngPath, 3*plot.Inch, 2*plot.Inch); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, pngPath, 450, 300)
	if st, _ := os.Stat(pngPath); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode())
	}
	noTempFiles(t, dir)
}

func TestOptionsRender(t *testing.T) {
	res := sampleResult(t, 12, 64)
	cases := []struct {
		name string
		opts plot.Options
	}{
		{"default", plot.Options{}},
		{"bits logx", plot.Options{Bits: true, LogX: true}},
		{"smooth excess", plot.Options{Smooth: 15, Excess: true}},
		{"excess logx inside", plot.Options{Excess: true, LogX: true, LegendInside: true}},
		{"subset", plot.Options{Methods: []string{"order-1 (KT)", "uniform"}, Excess: true}},
		{"no bands ranges", plot.Options{NoBands: true, YMin: 0.5, YMax: 1.2, Excess: true, ExcessYMin: -0.1, ExcessYMax: 0.5}},
		{"dpi title", plot.Options{DPI: 72, Title: "custom"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fig, err := plot.LossVsPosition(res, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := fig.Render(&buf, "png", 4*plot.Inch, 3*plot.Inch); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&buf)
			if err != nil {
				t.Fatal(err)
			}
			dpi := tc.opts.DPI
			if dpi == 0 {
				dpi = plot.DefaultDPI
			}
			if img.Bounds().Dx() != 4*dpi || img.Bounds().Dy() != 3*dpi {
				t.Fatalf("size %v at %d dpi", img.Bounds(), dpi)
			}
			buf.Reset()
			if err := fig.Render(&buf, "svg", 4*plot.Inch, 3*plot.Inch); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestHandMadeResults(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name       string
		N, windows int
		opts       plot.Options
	}{
		{"tiny", 5, 10, plot.Options{Excess: true}},
		{"single window (no bands)", 5, 1, plot.Options{Excess: true, Smooth: 3}},
		{"one position", 1, 10, plot.Options{Excess: true}},
		{"one position logx", 1, 10, plot.Options{LogX: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fig, err := plot.LossVsPosition(handResult(tc.N, tc.windows), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".png")
			if err := fig.Save(p, 300, 200); err != nil {
				t.Fatal(err)
			}
			checkPNG(t, p, 625, 417)
			s := strings.TrimSuffix(p, ".png") + ".svg"
			if err := fig.Save(s, 300, 200); err != nil {
				t.Fatal(err)
			}
			checkSVG(t, s)
		})
	}
	noTempFiles(t, dir)
}

func TestErrors(t *testing.T) {
	res := handResult(5, 10)
	bad := handResult(5, 10)
	bad.Methods[1].Position = bad.Methods[1].Position[:3]
	nan := handResult(5, 10)
	nan.Methods[1].Position[2].Mean = math.NaN()
	for _, tc := range []struct {
		name string
		res  *eval.Result
		opts plot.Options
		want string
	}{
		{"nil", nil, plot.Options{}, "nil result"},
		{"empty", &eval.Result{}, plot.Options{}, "malformed"},
		{"ragged", bad, plot.Options{}, "has 3 positions"},
		{"nan", nan, plot.Options{}, "non-finite mean"},
		{"unknown method", res, plot.Options{Methods: []string{"KN"}}, `method "KN" not in`},
		{"no methods", res, plot.Options{Methods: []string{}}, "no methods"},
		{"smooth", res, plot.Options{Smooth: -1}, "negative smoothing"},
		{"dpi", res, plot.Options{DPI: -3}, "negative DPI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := plot.LossVsPosition(tc.res, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}

	fig, err := plot.LossVsPosition(res, plot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	existing := filepath.Join(dir, "keep.gif")
	os.WriteFile(existing, []byte("old"), 0o644)
	for _, tc := range []struct {
		path string
		w, h float64
		want string
	}{
		{existing, 100, 100, "unsupported format"},
		{filepath.Join(dir, "noext"), 100, 100, "unsupported format"},
		{filepath.Join(dir, "zero.png"), 0, 100, "invalid size"},
		{filepath.Join(dir, "nan.png"), math.NaN(), 100, "invalid size"},
		{filepath.Join(dir, "missing", "x.png"), 100, 100, "no such file"},
	} {
		err := fig.Save(tc.path, plot.Length(tc.w), plot.Length(tc.h))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Save(%s): err = %v, want %q", tc.path, err, tc.want)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "old" {
		t.Fatal("failed save clobbered the existing file")
	}
	noTempFiles(t, dir)
	var nilFig *plot.Figure
	if err := nilFig.Render(io.Discard, "png", 10, 10); err == nil {
		t.Fatal("nil figure rendered")
	}
}

func TestMovingAverage(t *testing.T) {
	cases := []struct {
		in   []float64
		w    int
		want []float64
	}{
		{[]float64{1, 2, 3}, 0, []float64{1, 2, 3}},
		{[]float64{1, 2, 3}, 1, []float64{1, 2, 3}},
		{[]float64{1, 2, 3, 4, 5}, 3, []float64{1, 2, 3, 4, 5}},
		{[]float64{0, 3, 0, 3, 0}, 3, []float64{0, 1, 2, 1, 0}},
		{[]float64{0, 5, 0, 0, 5, 10}, 5, []float64{0, 5.0 / 3, 2, 4, 5, 10}},
		{[]float64{4, 8}, 4, []float64{4, 8}},
		{nil, 5, []float64{}},
	}
	for _, tc := range cases {
		got := plot.MovingAverage(tc.in, tc.w)
		if len(got) != len(tc.want) {
			t.Fatalf("MovingAverage(%v, %d) = %v", tc.in, tc.w, got)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Fatalf("MovingAverage(%v, %d) = %v, want %v", tc.in, tc.w, got, tc.want)
			}
		}
	}
}

// TestWriteSample writes sample figures for visual inspection when
// VOMC_PLOT_SAMPLE_DIR is set (skipped otherwise).
func TestWriteSample(t *testing.T) {
	dir := os.Getenv("VOMC_PLOT_SAMPLE_DIR")
	if dir == "" {
		t.Skip("set VOMC_PLOT_SAMPLE_DIR to write sample figures")
	}
	res := sampleResult(t, 300, 1536)
	for name, opts := range map[string]plot.Options{
		"loss_vs_position.png":        {Excess: true, Smooth: 25},
		"loss_vs_position_raw.png":    {},
		"loss_vs_position_logx.png":   {Excess: true, LogX: true, Bits: true, Smooth: 9},
		"loss_vs_position_inside.png": {LegendInside: true, Smooth: 25},
		"loss_vs_position.svg":        {Excess: true, Smooth: 25},
	} {
		fig, err := plot.LossVsPosition(res, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := fig.Save(filepath.Join(dir, name), 7*plot.Inch, 5*plot.Inch); err != nil {
			t.Fatal(err)
		}
	}
}

func BenchmarkRenderPNG(b *testing.B) {
	res := sampleResult(b, 20, 1536)
	fig, err := plot.LossVsPosition(res, plot.Options{Excess: true, Smooth: 25})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := fig.Render(io.Discard, "png", 7*plot.Inch, 5*plot.Inch); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReplicates checks the thin-line drawing of replicates: a replicate of
// a drawn method has no legend entry of its own (one explanatory entry is
// added), is drawn in its parent's colour at 0.6 pt, and does not take a
// colour from the palette; a replicate whose parent is not drawn is an
// ordinary method.
func TestReplicates(t *testing.T) {
	res := sampleResult(t, 12, 64)
	svg := func(opts plot.Options) string {
		t.Helper()
		fig, err := plot.LossVsPosition(res, opts)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := fig.Render(&buf, "svg", 6*plot.Inch, 4*plot.Inch); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	names := []string{"uniform", "unigram (KT)", "order-1 (KT)", "order-3 (KT)"}
	plain := svg(plot.Options{Methods: names, Excess: true})
	rep := svg(plot.Options{Methods: names, Excess: true, Replicates: map[string]string{"order-3 (KT)": "order-1 (KT)"}})
	if !strings.Contains(plain, "order-3 (KT)") || strings.Contains(plain, "thin: replicates") {
		t.Fatal("without Replicates: legend should name order-3 and have no replicate key")
	}
	if strings.Contains(rep, "order-3 (KT)") || !strings.Contains(rep, "thin: replicates") {
		t.Error("with Replicates: the replicate should have no legend entry and the key should be present")
	}
	// Colours in selection order: uniform #0072B2, unigram #D55E00,
	// order-1 #009E73, order-3 #CC79A7. As a replicate of order-1, order-3
	// takes no colour of its own and is drawn in order-1's, thin.
	if !strings.Contains(plain, "stroke:#CC79A7;stroke-width:1.4") || !strings.Contains(plain, "stroke:#009E73;stroke-width:1.4") {
		t.Fatal("test premise: the plain figure should draw order-1 in #009E73 and order-3 in #CC79A7")
	}
	if strings.Contains(rep, "#CC79A7") {
		t.Error("the replicate took a palette colour of its own")
	}
	if !strings.Contains(rep, "stroke:#009E73;stroke-width:0.6") {
		t.Error("the replicate is not drawn thin in its parent's colour")
	}
	// A chain (order-3 → order-1 → unigram): order-1 is thin in unigram's
	// colour, order-3 ordinary (its parent has no colour of its own).
	chain := svg(plot.Options{Methods: names, Replicates: map[string]string{"order-3 (KT)": "order-1 (KT)", "order-1 (KT)": "unigram (KT)"}})
	if !strings.Contains(chain, "order-3 (KT)") || strings.Contains(chain, ">order-1 (KT)<") || !strings.Contains(chain, "stroke:#D55E00;stroke-width:0.6") {
		t.Error("chained replicates: want order-1 thin in unigram's colour and order-3 drawn as an ordinary method")
	}
	// Parent not drawn: the replicate is an ordinary method.
	orphan := svg(plot.Options{Methods: []string{"uniform", "order-3 (KT)"}, Replicates: map[string]string{"order-3 (KT)": "order-1 (KT)"}})
	if !strings.Contains(orphan, "order-3 (KT)") || strings.Contains(orphan, "thin: replicates") {
		t.Error("a replicate whose parent is not drawn should be drawn as an ordinary method")
	}
}
