package plot

import (
	"math"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
)

// RoundTicks is a gonum plot.Ticker for linear axes that puts every
// labelled tick on a round number: multiples of a step of 1, 2 or 5 × 10^k
// (0, 100, 200, … or 0.7, 0.8, …), every one of them labelled, with the
// labels written by TickLabels (the same number of decimals on all labels
// of the axis, or 2e-15-style labels for tiny or huge values), and
// unlabelled minor ticks in between (halves of a 1 or 2 step, fifths of a
// 5 step). The step is the smallest such that at most Max labels fall in
// the range (so 3 to Max labels for any range).
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
		return []gplot.Tick{{Value: lo, Label: TickLabels([]float64{lo})[0]}}
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
			ts = append(ts, gplot.Tick{Value: v, Label: "x"}) // labelled below
		} else {
			ts = append(ts, gplot.Tick{Value: v})
		}
	}
	return relabel(ts)
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

// CompactTicks is a gonum plot.Ticker that wraps another (nil: RoundTicks{})
// and rewrites the labels of its labelled ticks with TickLabels, so that an
// axis over a tiny or huge range reads 2e-15 or 4e6 and any other axis
// has the fewest decimals that tell its ticks apart. Unlabelled ticks stay
// unlabelled. RoundTicks labels its ticks this way already; wrap other
// tickers (gonum's DefaultTicks, ConstantTicks, …) in it.
type CompactTicks struct {
	Ticker gplot.Ticker
}

// Ticks implements gonum's plot.Ticker.
func (c CompactTicks) Ticks(lo, hi float64) []gplot.Tick {
	t := c.Ticker
	if t == nil {
		t = RoundTicks{}
	}
	return relabel(t.Ticks(lo, hi))
}

// relabel rewrites the labels of the labelled ticks of ts with TickLabels.
func relabel(ts []gplot.Tick) []gplot.Tick {
	var vs []float64
	for _, tk := range ts {
		if tk.Label != "" {
			vs = append(vs, tk.Value)
		}
	}
	labels := TickLabels(vs)
	i := 0
	for k := range ts {
		if ts[k].Label != "" {
			ts[k].Label = labels[i]
			i++
		}
	}
	return ts
}

// Thresholds of TickLabels' scientific notation: used when the largest
// |value| is below sciBelow (and not 0) or at least sciFrom.
const (
	sciBelow = 1e-4
	sciFrom  = 1e6
)

// TickLabels writes the values of an axis's labelled ticks (in any order)
// compactly. Each value is first rounded to the coarsest decimal unit
// 10^q, with q at most 3 below the order of magnitude of the smallest gap
// between two values (the value itself when there is one value), that
// writes every value exactly (to a millionth of that gap); so adjacent
// ticks always differ, multiples of a round step keep no noise digits, and
// 0.25, 0.5, 0.75 read 0.25, 0.50, 0.75. When the largest |value| is below
// 1e-4 (and not 0) or at least 1e6, every label is then written in
// scientific notation with the fewest digits (2e-15, -1.5e-15, 4e6, and 0
// for zero), unless that makes the longest label longer (1000000.5 stays).
// Otherwise every label has the same number of decimals, max(0, −q):
// 0.005, 0.010, …; 0, 50, 100; never "-0". Non-finite values are written
// as strconv does.
func TickLabels(vs []float64) []string {
	out := make([]string, len(vs))
	var fin []float64
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			fin = append(fin, v)
		}
	}
	gap := math.Inf(1)
	sorted := slices.Clone(fin)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if d := sorted[i] - sorted[i-1]; d > 0 {
			gap = min(gap, d)
		}
	}
	maxAbs := 0.0
	for _, v := range fin {
		maxAbs = max(maxAbs, math.Abs(v))
	}
	if math.IsInf(gap, 1) { // one value (or all equal)
		gap = maxAbs
	}
	if gap == 0 {
		gap = 1
	}
	e0 := int(math.Floor(math.Log10(gap) + 1e-9))
	q := e0 - 3
	for e := e0; e >= e0-3; e-- {
		if exactAt(fin, e, 1e-6*gap) {
			q = e
			break
		}
	}
	unit := math.Pow10(q)
	maxAbs = 0
	for _, v := range fin {
		maxAbs = max(maxAbs, math.Abs(math.Round(v/unit)*unit))
	}
	sci := maxAbs >= sciFrom || (maxAbs > 0 && maxAbs < sciBelow)
	fixed := make([]string, len(vs))
	longest := [2]int{} // of the fixed and the scientific labels
	for i, v := range vs {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			out[i] = strconv.FormatFloat(v, 'g', -1, 64)
			fixed[i] = out[i]
		default:
			fixed[i] = formatFixed(v, max(0, -q))
			out[i] = sciLabel(math.Round(v/unit), q)
		}
		longest[0] = max(longest[0], len(fixed[i]))
		longest[1] = max(longest[1], len(out[i]))
	}
	if !sci || longest[1] > longest[0] {
		return fixed
	}
	return out
}

// exactAt reports whether every value is within tol of a multiple of 10^e.
func exactAt(vs []float64, e int, tol float64) bool {
	unit := math.Pow10(e)
	for _, v := range vs {
		if math.Abs(v-math.Round(v/unit)*unit) > tol {
			return false
		}
	}
	return true
}

// sciLabel writes n·10^q (n an integer) as a mantissa with the fewest
// digits and a plain exponent: 2e-15, -1.5e-15, 4e6; 0 for n = 0.
func sciLabel(n float64, q int) string {
	if n == 0 {
		return "0"
	}
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	digits := strconv.FormatFloat(n, 'f', 0, 64)
	e := q + len(digits) - 1
	mant := digits[:1]
	if rest := strings.TrimRight(digits[1:], "0"); rest != "" {
		mant += "." + rest
	}
	return sign + mant + "e" + strconv.Itoa(e)
}
