package eval_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/vomc/vomc/eval"
)

// sameIntervals reports whether two interval series are equal to the last bit
// (NaN equal to NaN).
func sameIntervals(a, b []eval.Interval) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameInterval(a[i], b[i]) {
			return false
		}
	}
	return true
}

func sameInterval(a, b eval.Interval) bool {
	eq := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	return eq(a.Mean, b.Mean) && eq(a.SD, b.SD) && eq(a.Lo, b.Lo) && eq(a.Hi, b.Hi)
}

// TestPairs: the paired difference of any two methods is computed exactly
// as the excess over the reference is: a pair (A, B) equals, to the last
// bit, A's excess in an evaluation whose reference is B (per position,
// window and second half), whatever the number of workers; its second
// half agrees with PairedSecondHalf on the per-window values; and the
// pairs leave the methods' own results unchanged.
func TestPairs(t *testing.T) {
	windows := markovWindows(21, 37, 24, 3)
	plain, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Workers: 1, Reference: "uniform"})
	if err != nil {
		t.Fatal(err)
	}
	pairs := []eval.Pair{{"unigram", "CTW-ish bigram"}, {"CTW-ish bigram", "unigram"}, {"unigram", "uniform"}}
	for _, workers := range []int{1, 3} {
		res, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Workers: workers, Reference: "uniform", Pairs: pairs})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Pairs) != len(pairs) {
			t.Fatalf("%d pairs, want %d", len(res.Pairs), len(pairs))
		}
		if !reflect.DeepEqual(res.Methods, plain.Methods) {
			t.Error("the pairs changed the methods' results")
		}
		for _, p := range pairs {
			byRef, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Workers: 2, Reference: p.B})
			if err != nil {
				t.Fatal(err)
			}
			want := byRef.Method(p.A)
			got := res.Pair(p.A, p.B)
			if got == nil {
				t.Fatalf("no pair %s − %s", p.A, p.B)
			}
			if !sameIntervals(got.Position, want.Excess) || !sameInterval(got.Window, want.ExcessWindow) || !sameInterval(got.SecondHalf, want.ExcessSecondHalf) {
				t.Errorf("%d workers: pair %s − %s differs from %s's excess over %s: window %+v vs %+v", workers, p.A, p.B, p.A, p.B, got.Window, want.ExcessWindow)
			}
			d, ok := eval.PairedSecondHalf(res.Method(p.A), res.Method(p.B), res.Confidence)
			if !ok || math.Abs(d.Mean-got.SecondHalf.Mean) > 1e-12 || math.Abs(d.Hi-got.SecondHalf.Hi) > 1e-9 {
				t.Errorf("pair %s − %s: second half %+v, PairedSecondHalf %+v", p.A, p.B, got.SecondHalf, d)
			}
		}
		if a, b := res.Pair("unigram", "CTW-ish bigram"), res.Pair("CTW-ish bigram", "unigram"); a.Window.Mean != -b.Window.Mean || a.Window.SD != b.Window.SD {
			t.Errorf("A − B %+v and B − A %+v are not opposite", a.Window, b.Window)
		}
	}
}

// TestPairErrors: a pair naming a missing method, a method paired with
// itself, or a pair given twice is refused before any window.
func TestPairErrors(t *testing.T) {
	windows := markovWindows(2, 8, 8, 3)
	for _, c := range []struct {
		pairs []eval.Pair
		want  string
	}{
		{[]eval.Pair{{"unigram", "GRU"}}, `eval: pair "unigram" − "GRU": "GRU" not among the predictors ("uniform", "unigram", "CTW-ish bigram")`},
		{[]eval.Pair{{"unigram", "unigram"}}, "paired with itself"},
		{[]eval.Pair{{"unigram", "uniform"}, {"unigram", "uniform"}}, "given twice"},
	} {
		if _, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Pairs: c.pairs}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.pairs, err, c.want)
		}
	}
}

// TestPairOutputs: the pairs are in the summary table, round-trip
// through JSON, and are the CSV's rows of method A with reference B.
func TestPairOutputs(t *testing.T) {
	windows := markovWindows(4, 12, 10, 3)
	res, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Reference: "uniform",
		Pairs: []eval.Pair{{"unigram", "CTW-ish bigram"}, {"CTW-ish bigram", "uniform"}}})
	if err != nil {
		t.Fatal(err)
	}
	table := res.String()
	p := res.Pairs[0]
	for _, s := range []string{"paired differences A − B", "unigram − CTW-ish bigram", "CTW-ish bigram − uniform"} {
		if !strings.Contains(table, s) {
			t.Errorf("table lacks %q:\n%s", s, table)
		}
	}
	js := encodeJSON(t, res)
	back, err := eval.LoadJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Pairs, res.Pairs) || !bytes.Equal(encodeJSON(t, back), js) {
		t.Error("pairs do not round-trip through JSON")
	}
	bad := strings.Replace(string(js), `"a":"unigram"`, `"a":"GRU"`, 1)
	if _, err := eval.LoadJSON(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), `pair "GRU"`) {
		t.Errorf("a pair of a missing method: %v", err)
	}
	var b bytes.Buffer
	if err := res.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// the methods' rows, then one pair's (the other's B is the reference)
	if len(rows) != 1+(3+1)*res.N {
		t.Fatalf("%d rows, want %d", len(rows), 1+4*res.N)
	}
	last := rows[len(rows)-1]
	if last[0] != "unigram" || last[13] != "CTW-ish bigram" || last[9] != strconv.FormatFloat(p.Position[res.N-1].Mean, 'g', -1, 64) {
		t.Errorf("last row %v, want unigram's difference from CTW-ish bigram at position %d (%v)", last, res.N, p.Position[res.N-1].Mean)
	}
}
