package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/symbols"
	"github.com/vomc/vomc/kn"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/source"
)

// TestRunEval evaluates a data set and a file (windows and the half-file
// protocol) and checks the report, the outputs and the refusals.
func TestRunEval(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(2), K: 10, NK: 64, N: 32, Fresh: true, Seed: 1}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Write(p("ds"), false); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sink := &tuneSink{Sink: events.Writer(&log)}
	o := EvalOptions{Data: p("ds"), Methods: methods.MustParse("ctw,kn"), Out: p("ev"), Export: p("exp"), Workers: 2, Events: sink}
	rep, err := RunEval(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sink.last != fmt.Sprintf("%d/%d", kn.TuneEvaluations, kn.TuneEvaluations) {
		t.Errorf("KN's tuning reported %q as its last progress, want all %d evaluations", sink.last, kn.TuneEvaluations)
	}
	if rep.Result.Windows != 20 || len(rep.Exported) != 2 || rep.Result.Labels["warning"] == "" {
		t.Errorf("result %d windows, exported %v, labels %v", rep.Result.Windows, rep.Exported, rep.Result.Labels)
	}
	for _, s := range []string{"data set " + p("ds") + ": 20 windows of N=32, A=3", "2 per tree", "tuning KN's δ on the 20 evaluated windows", "wrote " + p("ev") + "/{", "exported "} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, log.String())
		}
	}
	if _, err := RunEval(context.Background(), o); !errors.Is(err, fsutil.ErrExists) {
		t.Errorf("existing outputs: %v", err)
	}
	os.WriteFile(p("x.txt"), []byte(strings.Repeat("abcab", 40)), 0o644)
	f := EvalOptions{File: p("x.txt"), Mode: symbols.Text, N: 50, D: 2, Lambda: 0.15, Alpha: 0.5, Methods: methods.MustParse("ctw,unigram"), Out: p("evf"), Workers: 1}
	if rep, err := RunEval(context.Background(), f); err != nil || rep.Result.Windows != 4 {
		t.Errorf("file: %v", err)
	}
	f.Half, f.Out = true, p("half")
	if rep, err := RunEval(context.Background(), f); err != nil || !strings.Contains(rep.Half, "bits/symbol") {
		t.Errorf("half: %v", err)
	} else if b, _ := os.ReadFile(filepath.Join(p("half"), HalfFile)); string(b) != rep.Half {
		t.Errorf("%s differs from the report", HalfFile)
	}
	f.Half, f.N, f.Out = false, 1000, p("evn")
	if _, err := RunEval(context.Background(), f); err == nil || !strings.Contains(err.Error(), "outside 0..200") {
		t.Errorf("window longer than the file: %v", err)
	}
	if err := CheckEvalMemory(p("ds"), "", methods.MustParse("ctw"), 1, 1<<20); err == nil || !strings.Contains(err.Error(), "needs about") {
		t.Errorf("CheckEvalMemory over the limit: %v", err)
	}
}

func TestEvalHalf(t *testing.T) {
	x := []byte(strings.Repeat("\x00\x01\x01", 100))
	s, err := EvalHalf(x, methods.MustParse("ctw,unigram"), methods.Defaults{A: 2, D: 2, Lambda: 0.5, Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "learn x[1..150], freeze, test x[151..300]") {
		t.Errorf("table:\n%s", s)
	}
	if _, err := EvalHalf(x, methods.MustParse("bayes"), methods.Defaults{A: 2}); err == nil {
		t.Error("bayes without a prior accepted")
	}
}

func TestSharedTreesWarningLib(t *testing.T) {
	for _, c := range []struct {
		NK   int
		want string
	}{{256, ""}, {1024, "40 windows come from 10 trees (4 per tree)"}} {
		w := SharedTreesWarning(dataset.Config{K: 10, NK: c.NK, N: 256})
		if (c.want == "") != (w == "") || !strings.Contains(w, c.want) {
			t.Errorf("NK=%d: %q", c.NK, w)
		}
	}
}

// TestRunEvalReference: --reference takes the spec as typed (in any
// spelling), the label or a bare kind (issue 46: "bayes" was refused as
// not among the predictors), and a spec that is not in the list is
// refused before any work; without one the reference is chosen by kind.
func TestRunEvalReference(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	prior := source.Prior{A: 3, Depths: []int{1, 2}, Lambda: 0.15, Alpha: []float64{0.5}}
	ds, err := dataset.Build(dataset.Config{Prior: prior, K: 8, NK: 32, N: 32, Fresh: true, Seed: 1}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Write(p("ds"), false); err != nil {
		t.Fatal(err)
	}
	const bayes, ctw5 = "Bayes(D=1..2,λ=0.15,α=0.5)", "CTW(D=5,λ=0.15,α=0.5)"
	for i, c := range []struct{ methods, ref, want string }{
		{"bayes,ctw:D=5", "bayes", bayes},
		{"ctw:D=5,bayes", "BAYES", bayes},
		{"ctw:D=5,bayes", bayes, bayes},
		{"bayes,ctw:D=5", "CTW:d=5", ctw5},
		{"bayes,ctw:D=5", "ctw", ctw5},
		{"ctw:D=5,unigram,bayes", "", bayes},
		{"unigram,ctw:D=5", "", ctw5},
	} {
		o := EvalOptions{Data: p("ds"), Methods: methods.MustParse(c.methods), Reference: c.ref, Out: p(fmt.Sprint("ev", i)), Workers: 1}
		rep, err := RunEval(context.Background(), o)
		if err != nil {
			t.Fatalf("%s, reference %q: %v", c.methods, c.ref, err)
		}
		if got := rep.Result.Ref().Name; got != c.want {
			t.Errorf("%s, reference %q: %s, want %s", c.methods, c.ref, got, c.want)
		}
	}
	o := EvalOptions{Data: p("ds"), Methods: methods.MustParse("bayes,ctw:D=5"), Reference: "ctw:D=3", Out: p("never"), Workers: 1}
	if _, err := RunEval(context.Background(), o); err == nil || !strings.Contains(err.Error(), `reference method: no method "ctw:D=3"; did you mean "ctw:D=5"?`) {
		t.Errorf("a spec not in the list: %v", err)
	}
	if _, err := os.Stat(p("never")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused evaluation wrote %s: %v", p("never"), err)
	}
	o.Reference, o.Out = "CTW(D=3)", p("late")
	if _, err := RunEval(context.Background(), o); err == nil || !strings.Contains(err.Error(), `no method "CTW(D=3)"`) {
		t.Errorf("a label not among the methods: %v", err)
	}
}

// TestRunEvalPairs: --pairs names methods by spec (any spelling), label
// or kind; each pair's paired difference is in the summary, results.json
// and results.csv, and a pair against the reference is that method's
// excess to the last bit. A pair written as a spec that is not in the
// list is refused before any work; a pair that is not two names at all
// when it is set.
func TestRunEvalPairs(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	prior := source.Prior{A: 3, Depths: []int{1, 2}, Lambda: 0.15, Alpha: []float64{0.5}}
	ds, err := dataset.Build(dataset.Config{Prior: prior, K: 8, NK: 32, N: 32, Fresh: true, Seed: 2}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Write(p("ds"), false); err != nil {
		t.Fatal(err)
	}
	var pairs Pairs
	if err := pairs.Set("unigram,CTW:d=5;CTW(D=5,λ=0.15,α=0.5),bayes"); err != nil {
		t.Fatal(err)
	}
	if err := pairs.Set(" markov , unigram "); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	o := EvalOptions{Data: p("ds"), Methods: methods.MustParse("bayes,ctw:D=5,unigram,markov:k=1"), Pairs: pairs, Out: p("ev"), Workers: 2, Events: events.Writer(&log)}
	rep, err := RunEval(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Result
	const ctw5, bayes, uni, mk = "CTW(D=5,λ=0.15,α=0.5)", "Bayes(D=1..2,λ=0.15,α=0.5)", "Unigram(α=0.5)", "Markov(k=1,α=0.5)"
	want := []eval.Pair{{A: uni, B: ctw5}, {A: ctw5, B: bayes}, {A: mk, B: uni}}
	if len(res.Pairs) != len(want) {
		t.Fatalf("%d pairs, want %d", len(res.Pairs), len(want))
	}
	for i, w := range want {
		if res.Pairs[i].A != w.A || res.Pairs[i].B != w.B {
			t.Errorf("pair %d is %s − %s, want %s − %s", i, res.Pairs[i].A, res.Pairs[i].B, w.A, w.B)
		}
	}
	if got, ex := res.Pair(ctw5, bayes), res.Method(ctw5); got.Window != ex.ExcessWindow || got.SecondHalf != ex.ExcessSecondHalf {
		t.Errorf("CTW − Bayes %+v, CTW's excess over Bayes %+v", got.Window, ex.ExcessWindow)
	}
	for _, s := range []string{"paired differences A − B", uni + " − " + ctw5, mk + " − " + uni} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, log.String())
		}
	}
	back, err := eval.LoadJSONFile(p("ev/results.json"))
	if err != nil || len(back.Pairs) != 3 {
		t.Fatalf("results.json: %v", err)
	}
	csvText, _ := os.ReadFile(p("ev/results.csv"))
	if !strings.Contains(string(csvText), "\n\""+mk+"\",32,") || !strings.HasSuffix(string(csvText), ","+uni+"\n") {
		t.Errorf("results.csv lacks the pair rows of %s with reference %s:\n%s", mk, uni, csvText[len(csvText)-300:])
	}
	o.Pairs, o.Out = Pairs{{A: "unigram", B: "kn"}}, p("never")
	if _, err := RunEval(context.Background(), o); err == nil || !strings.Contains(err.Error(), `pair unigram,kn: no method "kn"`) {
		t.Errorf("a pair with a spec not in the list: %v", err)
	}
	if _, err := os.Stat(p("never")); err == nil {
		t.Error("a refused evaluation wrote its output directory")
	}
	for _, bad := range []string{"gru", "a,b,c", "a,"} {
		var q Pairs
		if err := q.Set(bad); err == nil || !strings.Contains(err.Error(), "want two methods, A,B") {
			t.Errorf("Set(%q): %v", bad, err)
		}
	}
}

// tuneSink records the last progress of the task "tuning KN's δ".
type tuneSink struct {
	events.Sink
	last string
}

func (s *tuneSink) Progress(task string, done, total int) {
	if task == "tuning KN's δ" {
		s.last = fmt.Sprintf("%d/%d", done, total)
	}
}
