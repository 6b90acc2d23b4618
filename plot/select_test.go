package plot

import (
	"path/filepath"
	"reflect"
	"testing"

	gplot "gonum.org/v1/plot"

	"github.com/vomc/vomc/eval"
)

func TestSplitMethods(t *testing.T) {
	for in, want := range map[string][]string{
		"CTW(D=3,λ=0.15,α=0.5),Markov(k=3,α=0.5)": {"CTW(D=3,λ=0.15,α=0.5)", "Markov(k=3,α=0.5)"},
		"ctw, tf ,markov:k=3":                     {"ctw", "tf", "markov:k=3"},
		"TF(L=2,H=[2,1],E=16);KN(D=2,δ=0.7)":      {"TF(L=2,H=[2,1],E=16)", "KN(D=2,δ=0.7)"},
	} {
		if got := SplitMethods(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitMethods(%q) = %q, want %q", in, got, want)
		}
	}
	// SplitTop keeps empty parts (a pair "A," is an error for --pairs) and
	// does not split on ";"; SplitMethods drops them
	for in, want := range map[string][]string{
		"A,":                    {"A", ""},
		" a , (b,c) ,[d,(e,f)]": {"a", "(b,c)", "[d,(e,f)]"},
		"x;y,z":                 {"x;y", "z"},
		"":                      {""},
		"a)),b":                 {"a))", "b"},
	} {
		if got := SplitTop(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitTop(%q) = %q, want %q", in, got, want)
		}
	}
	if got := SplitMethods("a,,b, "); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("SplitMethods drops empty parts: %q", got)
	}
}

// flatResult is a result whose methods have constant excesses.
func flatResult(names []string, excess []float64) *eval.Result {
	res := &eval.Result{N: 100}
	for i, n := range names {
		m := eval.MethodResult{Name: n, ExcessWindow: eval.Interval{Mean: excess[i]}}
		for range res.N {
			m.Position = append(m.Position, eval.Interval{Mean: 1})
			m.Excess = append(m.Excess, eval.Interval{Mean: excess[i]})
		}
		res.Methods = append(res.Methods, m)
	}
	return res
}

func TestMatchAndFocus(t *testing.T) {
	names := []string{"CTW(D=3,λ=0.15,α=0.5)", "TF(L=2,H=[1,1],E=32)@run", "KN(D=3,δ=0.7)", "PPM(D=3,A)", "Markov(k=3,α=0.5)", "Markov(k=1,α=0.5)"}
	res := flatResult(names, []float64{0, 0.018, 0.05, 0.8, 0.06, 0.3})
	for spec, want := range map[string][]int{"ctw": {0}, "tf": {1}, "markov:k=3": {4}, "markov": {4, 5}, "ctw:lambda=0.15": {0}, names[3]: {3}} {
		if got, err := MatchMethods(res, spec); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("MatchMethods(%q) = %v, %v; want %v", spec, got, err, want)
		}
	}
	if _, err := MatchMethods(res, "CTW(D=3"); err == nil {
		t.Error("a cut label was matched")
	}
	// The excess panel shows the better half (TF, KN, Markov(3)): PPM's
	// 0.8 does not set the scale.
	lo, hi, ok := FocusExcess(res, nil)
	if !ok || hi > 0.1 || hi < 0.06 || lo > 0 {
		t.Errorf("FocusExcess = %g, %g, %v; want about [0, 0.07]", lo, hi, ok)
	}
	if o := Focus(res, Options{Excess: true, ExcessAll: true}); o.ExcessYMax != 0 || o.Smooth != 4 {
		t.Errorf("ExcessAll: range %g, smooth %d", o.ExcessYMax, o.Smooth)
	}
}

// TestExcessLog: the excess panel on a logarithmic axis, with zero and
// negative excesses drawn at the floor.
func TestExcessLog(t *testing.T) {
	res := flatResult([]string{"CTW", "TF", "KN", "PPM"}, []float64{0, -0.01, 0.05, 0.8})
	fig, err := LossVsPosition(res, Options{Excess: true, ExcessLog: true, Smooth: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fig.Excess.Y.Scale.(gplot.LogScale); !ok || fig.Excess.Y.Min < ExcessFloor {
		t.Errorf("excess axis %T from %g", fig.Excess.Y.Scale, fig.Excess.Y.Min)
	}
	if err := fig.Save(filepath.Join(t.TempDir(), "log.png"), 6*Inch, 4*Inch); err != nil {
		t.Fatal(err)
	}
}
