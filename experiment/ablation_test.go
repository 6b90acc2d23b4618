package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/models"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// shippedTest reads a shipped model's recipe and makes its test data: the
// fresh windows of its test_data (what `vomc explore --demo` shows).
func shippedTest(t *testing.T, name string) (*dataset.Dataset, source.Prior) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "models", name, "recipe.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Test struct {
			Prior source.Prior `json:"prior"`
			K, N  int
			Seed  uint64
		} `json:"test_data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	tc := r.Test
	ds, err := dataset.Build(dataset.Config{Prior: tc.Prior, K: tc.K, NK: tc.N, N: tc.N, Fresh: true, Seed: tc.Seed}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ds, tc.Prior
}

// TestShippedPreviousSymbolHeads checks ablation where the answer is
// known from the attention maps: on every shipped model with a labelled
// layer-1 previous-symbol head (relative position d ≥ 1, by the null
// test of `vomc attention`: its first 16 test windows, hypotheses up to
// D+1, seed 1) and an unlabelled head, zero-ablating each such labelled
// head costs more than zero-ablating each unlabelled head — the paired
// 95% interval, across the recipe's test windows, of the difference of
// the two ablated models' losses lies above 0. At least one shipped
// model must qualify.
func TestShippedPreviousSymbolHeads(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates every shipped model several times (≈ 30 s); skipped with -short")
	}
	qualified := 0
	for _, name := range models.Names() {
		dir := filepath.Join("..", "models", name)
		ds, prior := shippedTest(t, name)
		windows := Windows(ds)
		m, err := transformer.LoadSafetensorsOn(cpu.NewDefault(), filepath.Join(dir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		D := 0
		for _, d := range prior.Depths {
			D = max(D, d)
		}
		a, err := attnmap.Analyze(m, windows[:16], D+1, attnmap.NullOptions{Seed: 1})
		m.Free()
		if err != nil {
			t.Fatal(err)
		}
		var prev, unlabelled []string
		for _, h := range a.Scores {
			head := fmt.Sprintf("L%dH%d", h.Layer, h.Head)
			switch {
			case !h.Labelled:
				unlabelled = append(unlabelled, head)
			case h.Layer == 1 && h.Best.Kind == attnmap.Relative && h.Best.D >= 1:
				prev = append(prev, head)
			}
		}
		if len(prev) == 0 || len(unlabelled) == 0 {
			t.Logf("%s: %d labelled layer-1 previous-symbol heads, %d unlabelled heads: nothing to compare", name, len(prev), len(unlabelled))
			continue
		}
		qualified++
		spec := func(h string) string { return "tf:path=" + dir + ":ablate=" + h }
		var list []string
		for _, h := range append(append([]string{}, prev...), unlabelled...) {
			list = append(list, spec(h))
		}
		l, err := methods.Parse(strings.Join(list, ","))
		if err != nil {
			t.Fatal(err)
		}
		d := methods.DefaultsFor(prior)
		d.Backend = cpu.NewDefault()
		res, built, err := Evaluate(context.Background(), windows, l, d, eval.Config{})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*eval.MethodResult{}
		for i, b := range built {
			byName[b.Spec.String()] = &res.Methods[i]
		}
		for _, p := range prev {
			for _, u := range unlabelled {
				a, b := byName[methods.MustParse(spec(p))[0].String()], byName[methods.MustParse(spec(u))[0].String()]
				diff, ok := pairedWindow(a, b, res)
				if !ok {
					t.Fatalf("%s: no per-window losses", name)
				}
				t.Logf("%s: ablating %s (labelled previous-symbol) − ablating %s (unlabelled): %+.4f nats/symbol [%.4f, %.4f], %d windows",
					name, p, u, diff.Mean, diff.Lo, diff.Hi, res.Windows)
				if !(diff.Lo > 0) {
					t.Errorf("%s: ablating %s does not cost more than ablating %s: %+.4f [%.4f, %.4f]", name, p, u, diff.Mean, diff.Lo, diff.Hi)
				}
			}
		}
	}
	if qualified == 0 {
		t.Error("no shipped model has both a labelled layer-1 previous-symbol head and an unlabelled head")
	}
}

// pairedWindow is the paired 95% interval of a's whole-window loss minus
// b's, from their per-window first- and second-half means.
func pairedWindow(a, b *eval.MethodResult, res *eval.Result) (eval.Interval, bool) {
	n1, n2 := float64(res.SecondHalfStart-1), float64(res.N-res.SecondHalfStart+1)
	whole := func(m *eval.MethodResult) []float64 {
		w := make([]float64, len(m.SecondHalfWindows))
		for j := range w {
			w[j] = (n1*m.FirstHalfWindows[j] + n2*m.SecondHalfWindows[j]) / (n1 + n2)
		}
		return w
	}
	x, y := whole(a), whole(b)
	if len(x) < 2 || len(x) != len(y) {
		return eval.Interval{}, false
	}
	d := make([]float64, len(x))
	for j := range d {
		d[j] = x[j] - y[j]
	}
	return eval.MeanInterval(d, 0.95), true
}
