package plot

import (
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
)

// RoundTicks is a gonum plot.Ticker for linear axes that puts every
// labelled tick on a round number: multiples of a step of 1, 2 or 5 × 10^k
// (0, 100, 200, … or 0.7, 0.8, …), every one of them labelled, with the
// same number of decimals on all labels of the axis, and unlabelled minor
// ticks in between (halves of a 1 or 2 step, fifths of a 5 step). The step is the smallest such that at most Max labels
// fall in the range (so 3 to Max labels for any range).
type RoundTicks struct {
	// Max is the largest number of labelled ticks (0 means 7).
	Max int
}

// Ticks implements gonum's plot.Ticker.
func (t RoundTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		if math.IsNaN(lo) || math.IsInf(lo, 0) {
			return nil
		}
		return []gplot.Tick{{Value: lo, Label: formatFixed(lo, decimalsOf(math.Abs(lo)))}}
	}
	most := t.Max
	if most <= 0 {
		most = 7
	}
	step, mant := RoundStep(lo, hi, most)
	minor := step / 2
	if mant == 5 {
		minor = step / 5
	}
	dec := decimalsOf(step)
	var ts []gplot.Tick
	// Work in units of the minor step so that every value is an integer
	// multiple computed afresh (no accumulated rounding).
	perMajor := int(math.Round(step / minor))
	first := int(math.Ceil(lo/minor - 1e-9))
	last := int(math.Floor(hi/minor + 1e-9))
	for i := first; i <= last; i++ {
		v := float64(i) * minor
		if i%perMajor == 0 {
			v = float64(i/perMajor) * step
			ts = append(ts, gplot.Tick{Value: v, Label: formatFixed(v, dec)})
		} else {
			ts = append(ts, gplot.Tick{Value: v})
		}
	}
	return ts
}

// RoundStep returns the smallest step of 1, 2 or 5 × 10^k (and that
// mantissa) with at most most multiples in [lo, hi] (most ≥ 2).
func RoundStep(lo, hi float64, most int) (float64, int) {
	most = max(most, 2)
	span := hi - lo
	e := int(math.Floor(math.Log10(span / float64(most))))
	for ; ; e++ {
		for _, m := range []int{1, 2, 5} {
			step := float64(m) * math.Pow10(e)
			n := math.Floor(hi/step+1e-9) - math.Ceil(lo/step-1e-9) + 1
			if int(n) <= most {
				return step, m
			}
		}
	}
}

// decimalsOf is the number of decimals that writes every multiple of a
// round step exactly (0 for steps ≥ 1).
func decimalsOf(step float64) int {
	if !(step > 0) {
		return 0
	}
	return max(0, -int(math.Floor(math.Log10(step)+1e-9)))
}

// formatFixed writes v with dec decimals, never as "-0".
func formatFixed(v float64, dec int) string {
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if z := strconv.FormatFloat(0, 'f', dec, 64); s == "-"+z {
		return z
	}
	return s
}

// LogTicks is a gonum plot.Ticker for logarithmic axes: labelled ticks at
// the powers of ten, also at 2 and 5 times them when the range spans fewer
// than 3 decades, and also at 3 times them when it spans about one decade
// or less; a range with fewer than two such values gets round linear
// labels (as RoundTicks);
// over more than Max decades only every k-th power is labelled. Unlabelled
// minor ticks mark 2…9 times each power (over at most 6 decades) or the
// unlabelled powers. Labels are plain decimals (0.05,
// 1, 200) from 1e-4 to 1e5 and written as 1e-7, 5e6 outside.
type LogTicks struct {
	// Max is the largest number of labelled powers of ten (0 means 8).
	Max int
}

// Ticks implements gonum's plot.Ticker.
func (t LogTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	most := t.Max
	if most <= 0 {
		most = 8
	}
	a, b := int(math.Floor(math.Log10(lo)+1e-9)), int(math.Floor(math.Log10(hi)+1e-9))
	decades := math.Log10(hi / lo)
	labelled := map[int]bool{1: true}
	switch {
	case decades < 1.3:
		labelled[2], labelled[3], labelled[5] = true, true, true
	case decades < 3:
		labelled[2], labelled[5] = true, true
	}
	stride := max(1, (b-a+most)/most)
	in := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	var ts []gplot.Tick
	for e := a; e <= b; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if !in(v) || (m != 1 && decades > 6) {
				continue // over many decades, minor ticks only at the powers
			}
			tk := gplot.Tick{Value: v}
			if labelled[m] && (m != 1 || stride == 1 || e%stride == 0) && (m == 1 || stride == 1) {
				tk.Label = logLabel(m, e)
			}
			ts = append(ts, tk)
		}
	}
	n := 0
	for _, tk := range ts {
		if tk.Label != "" {
			n++
		}
	}
	if n < 2 {
		// A short range between round values: label round linear steps
		// instead (as RoundTicks), keeping the minor ticks.
		for i := range ts {
			ts[i].Label = ""
		}
		for _, tk := range (RoundTicks{Max: 5}).Ticks(lo, hi) {
			if tk.Label != "" {
				ts = append(ts, tk)
			}
		}
	}
	return ts
}

// logLabel writes m·10^e.
func logLabel(m, e int) string {
	if e < -4 || e > 5 {
		return strconv.Itoa(m) + "e" + strconv.Itoa(e)
	}
	return formatFixed(float64(m)*math.Pow10(e), max(0, -e))
}
