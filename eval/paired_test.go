package eval_test

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/vomc/vomc/eval"
)

// TestPairedSecondHalf: the per-window second-half losses average to the
// second-half mean; the paired difference to the reference is the paired
// excess; a method against itself differs by exactly 0; without
// per-window values (older files) there is no paired test; a file with the
// wrong number of them is refused.
func TestPairedSecondHalf(t *testing.T) {
	windows := markovWindows(5, 60, 32, 3)
	res, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ref := res.Ref()
	for m := range res.Methods {
		mr := &res.Methods[m]
		if len(mr.SecondHalfWindows) != len(windows) {
			t.Fatalf("%s: %d per-window values", mr.Name, len(mr.SecondHalfWindows))
		}
		s := 0.0
		for _, v := range mr.SecondHalfWindows {
			s += v
		}
		if d := s/float64(len(windows)) - mr.SecondHalf.Mean; math.Abs(d) > 1e-12 {
			t.Errorf("%s: per-window mean differs from the second-half mean by %g", mr.Name, d)
		}
		d, ok := eval.PairedSecondHalf(mr, ref, res.Confidence)
		e := mr.ExcessSecondHalf
		if !ok || math.Abs(d.Mean-e.Mean) > 1e-12 || (m != res.Reference && math.Abs(d.Hi-e.Hi) > 1e-9) {
			t.Errorf("%s: paired vs reference %+v, excess %+v", mr.Name, d, e)
		}
		if d, ok := eval.PairedSecondHalf(mr, mr, res.Confidence); !ok || d.Mean != 0 || d.Lo != 0 || d.Hi != 0 {
			t.Errorf("%s against itself: %+v", mr.Name, d)
		}
	}
	// a file without per-window values
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	old := regexp.MustCompile(`,"second_half_windows":\[[^\]]*\]`).ReplaceAllString(buf.String(), "")
	back, err := eval.LoadJSON(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := eval.PairedSecondHalf(&back.Methods[0], &back.Methods[1], 0.95); ok || back.Methods[0].SecondHalfWindows != nil {
		t.Error("a file without per-window values gives a paired test")
	}
	bad := strings.Replace(buf.String(), `"second_half_windows":[`, `"second_half_windows":[0.5,`, 1)
	if _, err := eval.LoadJSON(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "per-window") {
		t.Errorf("wrong number of per-window values: %v", err)
	}
}

// TestMeanInterval: mean ± t_{0.975,n−1}·sd/√n; one value keeps its mean
// with NaN bounds; none, or a level outside (0, 1), gives NaN.
func TestMeanInterval(t *testing.T) {
	iv := eval.MeanInterval([]float64{1, 2, 3, 4}, 0.95)
	// sd = √(5/3), t_{0.975,3} = 3.182446305
	half := 3.182446305284263 * math.Sqrt(5.0/3) / 2
	if math.Abs(iv.Mean-2.5) > 1e-15 || math.Abs(iv.SD-math.Sqrt(5.0/3)) > 1e-15 || math.Abs(iv.Hi-2.5-half) > 1e-9 || math.Abs(2.5-iv.Lo-half) > 1e-9 {
		t.Errorf("MeanInterval(1..4) = %+v, want 2.5 ± %g", iv, half)
	}
	if iv := eval.MeanInterval([]float64{7}, 0.95); iv.Mean != 7 || !math.IsNaN(iv.SD) || !math.IsNaN(iv.Lo) || !math.IsNaN(iv.Hi) {
		t.Errorf("one value: %+v", iv)
	}
	if iv := eval.MeanInterval(nil, 0.95); !math.IsNaN(iv.Mean) || !math.IsNaN(iv.Lo) {
		t.Errorf("no values: %+v", iv)
	}
	if iv := eval.MeanInterval([]float64{1, 2}, 1.5); iv.Mean != 1.5 || !math.IsNaN(iv.Lo) || !math.IsNaN(iv.Hi) {
		t.Errorf("level 1.5: %+v", iv)
	}
}

// TestFirstHalfWindows checks the per-window first-half means: their mean
// equals the mean of the per-position losses over positions
// 1..SecondHalfStart−1, with the second half they make up the window mean,
// and they survive a JSON round trip.
func TestFirstHalfWindows(t *testing.T) {
	windows := markovWindows(7, 40, 33, 3)
	res, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := res.SecondHalfStart
	for m := range res.Methods {
		mr := &res.Methods[m]
		pos := 0.0
		for i := 0; i < h-1; i++ {
			pos += mr.Position[i].Mean
		}
		pos /= float64(h - 1)
		s := 0.0
		for _, v := range mr.FirstHalfWindows {
			s += v
		}
		if d := s/float64(len(windows)) - pos; math.Abs(d) > 1e-12 {
			t.Errorf("%s: first-half per-window mean off by %g", mr.Name, d)
		}
		whole := 0.0
		for j := range windows {
			whole += (mr.FirstHalfWindows[j]*float64(h-1) + mr.SecondHalfWindows[j]*float64(res.N-h+1)) / float64(res.N)
		}
		if d := whole/float64(len(windows)) - mr.Window.Mean; math.Abs(d) > 1e-12 {
			t.Errorf("%s: halves make up a window mean off by %g", mr.Name, d)
		}
		if d, ok := eval.PairedFirstHalf(mr, mr, res.Confidence); !ok || d.Mean != 0 {
			t.Errorf("%s against itself: %+v", mr.Name, d)
		}
	}
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := eval.LoadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for m := range res.Methods {
		a, b := res.Methods[m].FirstHalfWindows, back.Methods[m].FirstHalfWindows
		for j := range a {
			if math.Abs(a[j]-b[j]) > 1e-12*math.Abs(a[j]) {
				t.Fatalf("round trip: %v vs %v", a[j], b[j])
			}
		}
	}
}
