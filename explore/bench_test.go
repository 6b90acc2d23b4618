package explore

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// benchServer is the paper's size: N = 1536, 4 layers × 8 heads, E = 128,
// the depth-5 prior (a randomly initialised model: the work per click does
// not depend on the weights).
func benchServer(b *testing.B) (*Server, *transformer.Model, []byte) { return benchServerT(b) }

func benchServerT(b testing.TB) (*Server, *transformer.Model, []byte) {
	b.Helper()
	const N = 1536
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(5), K: 4, NK: N, N: N, Fresh: true, Seed: 3}, 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(4, 8, 128, N, 3), 1)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := m.SaveSafetensors(dir + "/model.safetensors"); err != nil {
		b.Fatal(err)
	}
	src, err := OpenDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(Options{Backend: cpu.NewDefault(), Models: []ModelSource{src}, Data: ds, DataName: "bench", HeadWindows: 2, Tune: [][]byte{ds.Window(1)}})
	if err != nil {
		b.Fatal(err)
	}
	return s, m, ds.Window(0)
}

// BenchmarkClick is the answer to a click (GET /api/position: every head's
// attention row, the distributions, ω, the MAP context, the suffix matches,
// encoded as JSON) on a window already shown, at N = 1536 with 4 layers × 8
// heads; it reports the forward pass (PredictSequence) of the same model
// on the same window, measured in the same run, and the ratio. The first
// view of a window (references, forward pass, attention maps) is reported
// as window-ms.
func BenchmarkClick(b *testing.B) {
	s, m, x := benchServer(b)
	h := s.Handler()
	win, _ := s.Window(0)
	s.Labels(0, FinalStep, true)
	start := time.Now()
	if code, body := get(b, h, "/api/refs?w=0"); code != http.StatusOK {
		b.Fatalf("refs: %d %s", code, body)
	}
	refs := time.Since(start)
	start = time.Now()
	if _, err := s.ModelWindow(win, 0, FinalStep); err != nil {
		b.Fatal(err)
	}
	model := time.Since(start)
	out := make([]float64, len(x)*3)
	fwd := time.Duration(1 << 62)
	for range 3 {
		t0 := time.Now()
		m.PredictSequence(x, out)
		fwd = min(fwd, time.Since(t0))
	}
	T := len(x)
	fwdMS := float64(fwd.Microseconds()) / 1e3
	// rows=b64 is what the page asks for; plain JSON numbers what a script
	// reading the API gets by default
	for _, f := range []struct{ name, query string }{{"page", "&rows=b64"}, {"json", ""}} {
		b.Run(f.name, func(b *testing.B) {
			for i := range b.N {
				t := T - 2 - (i*97)%(T/2) // late positions: the longest rows
				code, body := get(b, h, fmt.Sprintf("/api/position?w=0&t=%d&model=0%s", t, f.query))
				if code != http.StatusOK {
					b.Fatalf("position %d: %d %s", t, code, body[:min(len(body), 200)])
				}
			}
			click := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / 1e6
			b.ReportMetric(click, "ms/click")
			b.ReportMetric(fwdMS, "forward-ms")
			b.ReportMetric(click/fwdMS, "click/forward")
			b.ReportMetric(float64((refs + model).Milliseconds()), "window-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
