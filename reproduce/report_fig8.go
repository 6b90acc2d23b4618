package reproduce

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/synth"
)

// fig8Section is the report's Fig. 8 finding and image.
func fig8Section(cfg Config, mg *merged, deps map[string]*pipeline.Done) (Finding, []string, string) {
	f := Finding{Claim: "“TF 0-2” (a canonical two-layer transformer) performs close to “TF 2-0” (the two constructed layers followed by a trained FF layer and read-out) " +
		"and to “TF 2-0 w/ all counts”, which almost match each other; removing counting information (“w/o counts”, “total counts only”) degrades performance. " +
		"So the second layer's statistics, with an FF layer that recovers the counts, explain why two layers suffice."}
	if _, ok := deps[StageSynth]; !ok {
		return f, nil, "Not produced: no synth_variants are configured."
	}
	res := mg.Res
	// The finding is about the first configured encoding (the paper's,
	// unless synth_encodings leaves it out), replicate 0 for the losses.
	enc0, _ := synth.ParseEncoding(cfg.Encodings()[0])
	get := func(v synth.Variant) *eval.MethodResult { return res.Method(synthLabel(v, enc0)) }
	var parts []string
	if m, ok := twoLayer(cfg); ok {
		if r := res.Method(m.Label()); r != nil {
			parts = append(parts, fmt.Sprintf("TF 0-2 = %s %s", r.Name, excessSH(r)))
		}
	}
	for _, v := range []synth.Variant{synth.TF20, synth.WithAllCounts, synth.TotalCountsOnly, synth.WithoutCounts} {
		if r := get(v); r != nil {
			parts = append(parts, fmt.Sprintf("%s %s", r.Name, excessSH(r)))
		}
	}
	f.Found = "Second-half loss above CTW (nats per symbol, 95% CI): " + strings.Join(parts, "; ") + "."
	if enc0 != synth.Paper {
		f.Found = "Under the " + enc0 + " encoding: " + f.Found
	}
	var diffs []string
	tf20, all, tot, none := get(synth.TF20), get(synth.WithAllCounts), get(synth.TotalCountsOnly), get(synth.WithoutCounts)
	var gaps []synthGap
	if readJSON(deps[StageSynth].Dir, GapsFile, &gaps) != nil {
		gaps = nil
	}
	if tf20 != nil && all != nil {
		d := math.Abs(tf20.ExcessSecondHalf.Mean - all.ExcessSecondHalf.Mean)
		f.Found += fmt.Sprintf(" TF 2-0 and TF 2-0 w/ all counts differ by %.3f nats.", d)
		// Decided by the paired gaps of that encoding: the claim fails
		// when it fails (gapVerdict) in at least half of the seeds.
		n, bad := 0, 0
		for _, g := range gaps {
			if g.Encoding == enc0 {
				n++
				if _, _, v, _ := gapVerdict(g); v == fails {
					bad++
				}
			}
		}
		switch {
		case n > 0 && 2*bad >= n:
			diffs = append(diffs, fmt.Sprintf("TF 2-0 and TF 2-0 w/ all counts do not almost match (the paired gap fails the ±%g-nat equivalence in %d of %d seeds; below)", GapTolerance, bad, n))
		case n == 0 && d > GapTolerance:
			diffs = append(diffs, "TF 2-0 and TF 2-0 w/ all counts do not almost match")
		}
	}
	best := all
	if best == nil || (tf20 != nil && tf20.ExcessSecondHalf.Mean < best.ExcessSecondHalf.Mean) {
		best = tf20
	}
	for _, r := range []*eval.MethodResult{tot, none} {
		if r != nil && best != nil && r.ExcessSecondHalf.Mean <= best.ExcessSecondHalf.Mean {
			diffs = append(diffs, fmt.Sprintf("%s is not worse than %s", r.Name, best.Name))
		}
	}
	if len(diffs) > 0 {
		f.Found += " This differs from the paper: " + strings.Join(diffs, "; ") + "."
	} else {
		f.Agrees = true
		f.Found += " The ordering agrees with the paper: less counting information, higher loss."
	}
	if len(gaps) > 0 {
		f.Found += " " + gapSentence(gaps)
	}
	if d, ok := deps[StageFigures]; ok {
		var files []string
		for _, enc := range cfg.Encodings() {
			files = append(files, filepath.Join(d.Dir, fig8File(enc)))
		}
		return f, files, ""
	}
	return f, nil, ""
}

// GapTolerance is the largest |TF 2-0 − TF 2-0 w/ all counts| (nats per
// symbol over the second half) that the report calls "almost equal" when
// the paired interval excludes zero.
const GapTolerance = 0.005

// gapVerdict says whether "TF 2-0 ≈ TF 2-0 w/ all counts" holds for one
// paired second-half gap, as an equivalence test at tolerance GapTolerance:
// it holds when the whole 95% interval lies within ±GapTolerance; it does
// not hold when the interval excludes 0 and is not within the tolerance;
// otherwise (the interval contains 0 but is wider than the tolerance, or
// there is a single window) the data cannot decide.
func gapVerdict(g synthGap) (m, half float64, v verdict, text string) {
	m, half = deref(g.SecondHalf.Mean), math.NaN()
	if g.SecondHalf.Lo != nil && g.SecondHalf.Hi != nil {
		half = (*g.SecondHalf.Hi - *g.SecondHalf.Lo) / 2
	}
	switch {
	case math.IsNaN(half):
		return m, half, undecided, "cannot be decided (one window)"
	case m-half >= -GapTolerance && m+half <= GapTolerance:
		return m, half, holds, fmt.Sprintf("holds (the interval lies within ±%g nats)", GapTolerance)
	case m-half <= 0 && m+half >= 0:
		return m, half, undecided, fmt.Sprintf("inconclusive (the interval contains 0 but is wider than ±%g nats)", GapTolerance)
	}
	return m, half, fails, "does not hold"
}

// verdict is the outcome of gapVerdict.
type verdict int

const (
	undecided verdict = iota
	holds
	fails
)

// gapSentence reports, per encoding, the paired gap TF 2-0 − TF 2-0 w/ all
// counts and whether "TF 2-0 ≈ TF 2-0 w/ all counts" holds (gapVerdict);
// with several training seeds, per seed and how many seeds it holds in,
// with the mean ± 95% t-interval across seeds.
func gapSentence(gaps []synthGap) string {
	var order []string
	by := map[string][]synthGap{}
	for _, g := range gaps {
		if g.SecondHalf.Mean == nil {
			continue
		}
		if _, ok := by[g.Encoding]; !ok {
			order = append(order, g.Encoding)
		}
		by[g.Encoding] = append(by[g.Encoding], g)
	}
	var parts []string
	for _, enc := range order {
		gs := by[enc]
		if len(gs) == 1 {
			m, half, _, text := gapVerdict(gs[0])
			parts = append(parts, fmt.Sprintf("%s encoding: %+.4f ± %.4f (window %+.4f), %s", enc, m, half, deref(gs[0].Window.Mean), text))
			continue
		}
		var per []string
		var means []float64
		n, bad := 0, 0
		for _, g := range gs {
			m, half, v, _ := gapVerdict(g)
			per = append(per, fmt.Sprintf("seed %d %+.4f ± %.4f", g.Replicate, m, half))
			means = append(means, m)
			switch v {
			case holds:
				n++
			case fails:
				bad++
			}
		}
		a := AcrossSeeds(means)
		parts = append(parts, fmt.Sprintf("%s encoding: %s; it holds in %d of %d seeds and fails in %d; across seeds %+.4f ± %.4f", enc, strings.Join(per, ", "), n, len(gs), bad, a.Mean, a.HalfWidth()))
	}
	if len(parts) == 0 {
		return ""
	}
	return "The paired gap TF 2-0 − TF 2-0 w/ all counts over the second half (nats per symbol, 95% CI across test windows; " +
		"“TF 2-0 ≈ TF 2-0 w/ all counts” holds when the whole interval lies within ±" + fmt.Sprint(GapTolerance) + " nats, fails when it excludes 0 and is not within that, and is inconclusive otherwise), " +
		"under each encoding of the position and the counts (under log and linear every variant sees the same representation of both; under the paper's, TF 2-0 decodes its position from cos/sin while the counts enter as ln(1+c)): " +
		strings.Join(parts, "; ") + "."
}

// deref is *p, NaN for nil (a JSON null).
func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
