package figures

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/reproduce/powerfit"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LadderFile is the ladder's figure: each model family's second-half excess
// against its training tokens (log x), over the reference and over CTW.
const LadderFile = "ladder.png"

// LadderCurvesFile is the training curves of the ladder's models
// (replicate 0).
const LadderCurvesFile = "ladder_training.png"

// ladderFamily is one architecture of the ladder with its budgets.
type ladderFamily struct {
	Label  string
	Models []study.Model // by budget
}

// ladderFamilies groups the Fig. 3 models by architecture (the model
// without its -xK suffix).
func ladderFamilies(cfg study.Config) []ladderFamily {
	var out []ladderFamily
	idx := map[string]int{}
	for _, s := range cfg.Fig3Models {
		m, err := study.ParseModel(s)
		if err != nil {
			continue
		}
		arch := m.Architecture()
		k, ok := idx[arch]
		if !ok {
			k = len(out)
			idx[arch] = k
			out = append(out, ladderFamily{Label: arch})
		}
		out[k].Models = append(out[k].Models, m)
	}
	return out
}

// ladderPoints are a family's (tokens, excess) points: per budget the mean
// over seeds (the line) and every seed (the marks), from ex.
func ladderPoints(cfg study.Config, f ladderFamily, ex func(*eval.MethodResult) float64, res *eval.Result) (line, seeds plotter.XYs) {
	for _, m := range f.Models {
		tokens := cfg.ModelTrainTokens(m)
		s, n := 0.0, 0
		for r := range cfg.SeedsOf(m) {
			if x := res.Method(results.RepLabel(m, r)); x != nil {
				v := ex(x)
				seeds = append(seeds, plotter.XY{X: tokens, Y: v})
				s, n = s+v, n+1
			}
		}
		if n > 0 {
			line = append(line, plotter.XY{X: tokens, Y: s / float64(n)})
		}
	}
	slices.SortStableFunc(line, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	return line, seeds
}

// seedLine is the family's (tokens, excess) points of replicate r, by
// tokens.
func seedLine(cfg study.Config, f ladderFamily, ex func(*eval.MethodResult) float64, res *eval.Result, r int) plotter.XYs {
	var line plotter.XYs
	for _, m := range f.Models {
		if x := res.Method(results.RepLabel(m, r)); x != nil && r < cfg.SeedsOf(m) {
			line = append(line, plotter.XY{X: cfg.ModelTrainTokens(m), Y: ex(x)})
		}
	}
	slices.SortStableFunc(line, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	return line
}

// drawLadder draws LadderFile: two panels (over the reference, over CTW
// when the reference is not CTW), one line per family through its seed
// means, the seeds as marks, Markov(4)'s and CTW's levels as horizontal
// lines, and the two post-hoc extrapolations of the two-layer family
// (ladderFits) as thin dashed curves beyond the largest budget.
func drawLadder(cfg study.Config, res *eval.Result, dir string) error {
	ctwRes := results.First(res, "CTW")
	type panel struct {
		title   string
		ex      func(*eval.MethodResult) float64
		overCTW bool
	}
	panels := []panel{{"second-half excess over " + results.RefShort(res) + " (nats/symbol)", func(m *eval.MethodResult) float64 { return m.ExcessSecondHalf.Mean }, false}}
	if ctwRes != nil && ctwRes != res.Ref() {
		panels = append(panels, panel{"second-half excess over CTW (nats/symbol)", func(m *eval.MethodResult) float64 {
			return m.ExcessSecondHalf.Mean - ctwRes.ExcessSecondHalf.Mean
		}, true})
	}
	fams := ladderFamilies(cfg)
	fits := ladderFits(cfg, fams, res)
	mk := results.First(res, "Markov(k=4")
	var plots []*gplot.Plot
	for _, pn := range panels {
		p := plot.NewStepPlot(fmt.Sprintf("Budget ladder: %s", pn.title), "training tokens (log scale)", pn.title)
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = ladderTicks(cfg, fams, fits)
		p.Legend.ThumbnailWidth = vg.Points(28)
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, f := range fams {
			line, seeds := ladderPoints(cfg, f, pn.ex, res)
			if len(line) == 0 {
				continue
			}
			sty := plot.MethodStyle(i, false)
			l, err := plotter.NewLine(line)
			if err != nil {
				return err
			}
			l.LineStyle = draw.LineStyle{Color: sty.Color, Width: vg.Points(1.6), Dashes: sty.Dashes}
			sc, err := plotter.NewScatter(seeds)
			if err != nil {
				return err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: sty.Color, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
			p.Add(l, sc)
			p.Legend.Add(f.Label, l, sc)
			for _, xy := range append(line, seeds...) {
				lo, hi = min(lo, xy.X), max(hi, xy.X)
			}
		}
		shift := 0.0
		if pn.overCTW {
			shift = ctwRes.ExcessSecondHalf.Mean
		}
		for _, fc := range fits {
			if err := addLine(p, fc.label, fc.points(shift), fc.family, vg.Points(0.9), fc.dashes); err != nil {
				return err
			}
			hi = max(hi, fc.to)
		}
		if hi > 0 {
			p.X.Min, p.X.Max = lo/1.3, hi*1.3
		}
		if ctwRes != nil && ctwRes != res.Ref() && hi > lo {
			y := ctwRes.ExcessSecondHalf.Mean - shift
			if err := addLine(p, ctwRes.Name, plotter.XYs{{X: lo / 1.2, Y: y}, {X: hi * 1.2, Y: y}}, len(fams)+1, vg.Points(1.2), []vg.Length{vg.Points(1), vg.Points(2)}); err != nil {
				return err
			}
		}
		if mk != nil && hi > lo {
			y := pn.ex(mk)
			if err := addLine(p, mk.Name, plotter.XYs{{X: lo / 1.2, Y: y}, {X: hi * 1.2, Y: y}}, len(fams), vg.Points(1.2), []vg.Length{vg.Points(4), vg.Points(3)}); err != nil {
				return err
			}
		}
		plots = append(plots, p)
	}
	if len(plots) == 0 {
		return nil
	}
	path := filepath.Join(dir, LadderFile)
	if len(plots) == 1 {
		return plot.SavePlotLegendRight(plots[0], 9*vg.Inch, 5*vg.Inch, strings.TrimPrefix(filepath.Ext(path), "."), path, true)
	}
	return saveStacked(path, plots, 9*vg.Inch, 9*vg.Inch)
}

// saveStacked writes plots one above the other, each with its legend on
// the right, into a PNG of w × h at path.
func saveStacked(path string, plots []*gplot.Plot, w, h vg.Length) error {
	return plot.SaveDrawing(path, true, "png", w, h, 0, func(c draw.Canvas) {
		c = plot.Padded(c, vg.Points(4))
		ph := (c.Max.Y - c.Min.Y) / vg.Length(len(plots))
		for i, p := range plots {
			sub := c
			sub.Max.Y = c.Max.Y - vg.Length(i)*ph
			sub.Min.Y = sub.Max.Y - ph
			plot.DrawLegendRight(p, sub)
		}
	})
}

// addLine adds a line through xy to p, in the colour of method style i,
// of width w and with dashes, and to its legend as label.
func addLine(p *gplot.Plot, label string, xy plotter.XYs, i int, w vg.Length, dashes []vg.Length) error {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.LineStyle = draw.LineStyle{Color: plot.MethodStyle(i, false).Color, Width: w, Dashes: dashes}
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// ladderTicks marks the ladder's budgets on the token axis, "98.3M\n(×1)",
// and the doublings beyond them that the fitted laws reach, "(×8)".
func ladderTicks(cfg study.Config, fams []ladderFamily, fits []fitCurve) gplot.ConstantTicks {
	seen := map[int]bool{}
	var ts gplot.ConstantTicks
	top := 1
	for _, f := range fams {
		for _, m := range f.Models {
			b := max(1, m.Budget)
			top = max(top, b)
			if seen[b] {
				continue
			}
			seen[b] = true
			tok := float64(b) * cfg.TrainTokens()
			ts = append(ts, gplot.Tick{Value: tok, Label: fmt.Sprintf("%.3gM\n(×%d)", tok/1e6, b)})
		}
	}
	to := 0.0
	for _, fc := range fits {
		to = max(to, fc.to)
	}
	for b := 2 * top; float64(b)*cfg.TrainTokens() <= to*(1+1e-9); b *= 2 {
		ts = append(ts, gplot.Tick{Value: float64(b) * cfg.TrainTokens(), Label: fmt.Sprintf("(×%d)", b)})
	}
	return ts
}

// fitCurve is a fitted law drawn over the ladder figure: the family's
// index (its colour), the legend label, the law and the token range.
type fitCurve struct {
	family   int
	label    string
	law      powerfit.Law
	from, to float64
	dashes   []vg.Length
}

// points samples the curve (excess minus shift) at 64 budgets, evenly
// spaced in log tokens.
func (fc fitCurve) points(shift float64) plotter.XYs {
	const n = 64
	xy := make(plotter.XYs, n)
	for i := range xy {
		t := fc.from * math.Pow(fc.to/fc.from, float64(i)/(n-1))
		xy[i] = plotter.XY{X: t, Y: fc.law.At(t) - shift}
	}
	return xy
}

// ladderFits are the extrapolations drawn over the ladder: for the family
// the rule fits (two layers, learned positions), the report's post-hoc
// (E′) and (F′) — the floorless power law and the law with a floor
// through its seed means (second-half excess over the reference) — and the
// last local slope continued (the pre-registered rung's second
// prediction; the README's headline numbers are these seed means'); for
// the two-layer sinusoidal family the power law through seed 0 (the sin
// rung's prediction P, registered for seed 0). Each reads the budgets
// below the rung 2K, K the rule's top (study.Config.LadderRule; the
// report's rule reads the same budgets; every budget without one), so
// that the rung is drawn against the laws that predicted it — named by
// the README's letters when the family has a budget of 2K or more —, and
// is drawn from the family's smallest budget to 4× its largest input.
// None for a family with fewer budgets than a law needs.
func ladderFits(cfg study.Config, fams []ladderFamily, res *eval.Result) []fitCurve {
	k := 0 // the rule's top (the report's K): every budget without one
	if top, _, _, ok := cfg.LadderRule(); ok {
		k = max(1, top.Budget)
	}
	excess := func(m *eval.MethodResult) float64 { return m.ExcessSecondHalf.Mean }
	var out []fitCurve
	for i, f := range fams {
		m0 := f.Models[0]
		plain, sin := m0.Plain(2), m0.Sin && m0.FF && m0.LN && len(m0.Heads) == 2
		if !plain && !sin {
			continue
		}
		line, _ := ladderPoints(cfg, f, excess, res)
		if sin {
			line = seedLine(cfg, f, excess, res, 0)
		}
		rung := false // the family has the rung 2K: these laws predicted it
		var ts, es []float64
		for _, m := range f.Models {
			rung = rung || k > 0 && m.Budget >= 2*k
		}
		for _, xy := range line {
			if k == 0 || xy.X < 2*float64(k)*cfg.TrainTokens()*(1-1e-9) {
				ts, es = append(ts, xy.X), append(es, xy.Y)
			}
		}
		if len(ts) < 2 {
			continue
		}
		from, to := ts[0], 4*ts[len(ts)-1]
		through := fmt.Sprintf("×%.0f–×%.0f", ts[0]/cfg.TrainTokens(), ts[len(ts)-1]/cfg.TrainTokens())
		tag := func(letter string) string { // the README's name of the rung's prediction
			if rung {
				return " (" + letter + ")"
			}
			return " (post hoc)"
		}
		if sin {
			if law, ok := powerfit.Power(ts, es); ok && law.B > 0 {
				out = append(out, fitCurve{i, fmt.Sprintf("%s: power law, %s, seed 0%s", f.Label, through, tag("P")), law, from, to, []vg.Length{vg.Points(5), vg.Points(2)}})
			}
			continue
		}
		if law, ok := powerfit.Power(ts, es); ok && law.B > 0 {
			out = append(out, fitCurve{i, fmt.Sprintf("%s: power law, %s (post hoc)", f.Label, through), law, from, to, []vg.Length{vg.Points(5), vg.Points(2)}})
		}
		if law, ok := powerfit.Floor(ts, es); ok {
			out = append(out, fitCurve{i, fmt.Sprintf("%s: floor c = %.4f, %s%s", f.Label, law.C, through, tag("F")), law, from, to, []vg.Length{vg.Points(2), vg.Points(2)}})
		}
		if n := len(ts) - 1; n >= 2 { // two points make no prediction beside the power law's line
			if law, ok := powerfit.LastSlope(ts, es); ok && law.B > 0 {
				out = append(out, fitCurve{i, fmt.Sprintf("%s: last slope, ×%.0f–×%.0f%s", f.Label, ts[n-1]/cfg.TrainTokens(), ts[n]/cfg.TrainTokens(), tag("L")), law, ts[n-1], to, []vg.Length{vg.Points(1), vg.Points(3)}})
			}
		}
	}
	return out
}
