package probe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/jsonfloat"
	vplot "github.com/vomc/vomc/plot"
)

// The files Write puts in its directory.
const (
	JSONFile   = "probe.json"
	CSVFile    = "probe.csv"
	FigureFile = "probe.png"
)

// outputs are the paths Write creates in dir.
func outputs(dir string) []string {
	return []string{filepath.Join(dir, JSONFile), filepath.Join(dir, CSVFile), filepath.Join(dir, FigureFile)}
}

// Write stores res in dir: JSONFile (everything), CSVFile (one line per
// probe and band) and FigureFile (the test score by stream, one panel per
// band — all positions, then each position band — one colour per target:
// the trained model solid, at initialisation dashed, with shuffled targets
// dotted). An existing file is an error unless force.
func Write(res *Result, dir string, force bool) error {
	paths := outputs(dir)
	b, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	if err := fsutil.WriteBytes(paths[0], force, append(b, '\n')); err != nil {
		return err
	}
	if err := fsutil.WriteFile(paths[1], force, func(w io.Writer) error { return writeCSV(w, res) }); err != nil {
		return err
	}
	return writeFigure(res, paths[2], force)
}

// writeCSV writes the header and one line per probe and band.
func writeCSV(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "condition,stream,stream_name,target,metric,penalty,val,band_lo,band_hi,rows,value,lo,hi,chance")
	for _, p := range res.Probes {
		for b, s := range p.Scores {
			fmt.Fprintf(bw, "%s,%d,%s,%s,%s,%g,%s,%d,%d,%d,%s,%s,%s,%s\n", p.Condition, p.Stream, res.Streams[p.Stream],
				p.Target, p.Metric, s.Penalty, csvNum(s.Val), res.Bands[b].Lo, res.Bands[b].Hi, s.Rows,
				csvNum(s.Value), csvNum(s.Lo), csvNum(s.Hi), csvNum(s.Chance))
		}
	}
	return bw.Flush()
}

// csvNum is n with 6 significant digits, empty for NaN.
func csvNum(n jsonfloat.Float) string {
	if math.IsNaN(float64(n)) {
		return ""
	}
	return strconv.FormatFloat(float64(n), 'g', 6, 64)
}

// FigureFloor is the lowest score drawn: R² below it (a probe worse than
// the mean, as the shuffled control's often are) is drawn at it.
const FigureFloor = -0.2

// writeFigure draws the scores against the stream, one panel per band of
// res.Bands (all positions first, then each position band: a band's
// probes are its own, and the bands can disagree), stacked vertically.
func writeFigure(res *Result, path string, force bool) error {
	var classes []string
	for _, tg := range res.Targets {
		if tg.Class {
			classes = append(classes, tg.Name)
		}
	}
	panels := make([]*gplot.Plot, len(res.Bands))
	for b, band := range res.Bands {
		what := fmt.Sprintf("positions %d–%d", band.Lo, band.Hi)
		if b == 0 {
			what = "all positions"
		}
		if len(res.Probes) > 0 && b < len(res.Probes[0].Scores) {
			what += fmt.Sprintf(", %d test rows", res.Probes[0].Scores[b].Rows)
		}
		p, err := bandPanel(res, b, fmt.Sprintf("Linear probes of %s, %s: test R² (accuracy for %s)", res.ModelName, what, strings.Join(classes, ", ")))
		if err != nil {
			return err
		}
		panels[b] = p
	}
	const panelH = 4.2 * vg.Inch
	H := vg.Length(len(panels)) * panelH
	return vplot.SaveDrawing(path, force, "png", 9*vg.Inch, H, 0, func(c draw.Canvas) {
		for b, p := range panels {
			top := c.Max.Y - vg.Length(b)*panelH
			sub := c
			sub.Min.Y, sub.Max.Y = top-panelH, top
			vplot.DrawLegendRight(p, vplot.Padded(sub, vg.Points(4)))
		}
	})
}

// bandPanel is the plot of band b's scores against the stream, one colour
// per target: the trained model solid, at initialisation dashed, with
// shuffled targets dotted.
func bandPanel(res *Result, b int, title string) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = title
	p.X.Label.Text = "residual stream (0 = embedding, l = after block l)"
	p.Y.Label.Text = fmt.Sprintf("test R² / accuracy (below %g drawn at it)", FigureFloor)
	p.Y.Min, p.Y.Max = FigureFloor, 1
	p.Add(plotter.NewGrid())
	ticks := make([]gplot.Tick, len(res.Streams))
	for s, name := range res.Streams {
		ticks[s] = gplot.Tick{Value: float64(s), Label: fmt.Sprintf("%d: %s", s, name)}
	}
	p.X.Tick.Marker = gplot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.2, float64(len(res.Streams)-1)+0.2
	dashes := map[string][]vg.Length{Trained: nil, Init: {vg.Points(5), vg.Points(3)}, Shuffled: {vg.Points(1.5), vg.Points(2.5)}}
	for k, tg := range res.Targets {
		st := vplot.MethodStyle(k, false)
		for _, cond := range []string{Trained, Init, Shuffled} {
			var xy plotter.XYs
			for _, pr := range res.Probes {
				if pr.Condition == cond && pr.Target == tg.Name && b < len(pr.Scores) && !math.IsNaN(float64(pr.Scores[b].Value)) {
					xy = append(xy, plotter.XY{X: float64(pr.Stream), Y: max(float64(pr.Scores[b].Value), FigureFloor)})
				}
			}
			if len(xy) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, err
			}
			line.Color, points.Color = st.Color, st.Color
			line.Dashes, line.Width = dashes[cond], vg.Points(1.4)
			points.Shape = draw.CircleGlyph{}
			p.Add(line, points)
			if cond == Trained {
				p.Legend.Add(tg.Name, line, points)
			}
		}
	}
	for _, cond := range []string{Init, Shuffled} {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Dashes = vplot.MethodStyle(0, true).Color, dashes[cond]
		p.Legend.Add(map[string]string{Init: "at initialisation", Shuffled: "shuffled targets"}[cond], l)
	}
	return p, nil
}

// WriteText writes the table of the test scores over all positions: one
// line per target and stream, the trained model's score with its 95%
// interval beside the two controls (and chance, for accuracy).
func (res *Result) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Linear probes of %s (%s) on %s: %d test windows, %d rows (positions 0..%d); R² or accuracy on the test rows, 95%% interval over %d resamples of the test windows\n",
		res.ModelName, res.Model, res.Data, res.Windows["test"], res.Rows["test"], res.Length-1, res.Bootstrap)
	fmt.Fprintf(bw, "shuffled: the training and validation targets permuted among the rows of each position band; init: %s\n", res.Init)
	fmt.Fprintf(bw, "%-16s %-16s %-9s %-26s %-10s %-10s %s\n", "target", "stream", "metric", "trained [95% interval]", "shuffled", "init", "chance")
	score := map[[3]string]Score{}
	for _, p := range res.Probes {
		score[[3]string{p.Condition, strconv.Itoa(p.Stream), p.Target}] = p.Scores[0]
	}
	for _, tg := range res.Targets {
		metric := "r2"
		if tg.Class {
			metric = "accuracy"
		}
		for s, name := range res.Streams {
			key := func(cond string) Score { return score[[3]string{cond, strconv.Itoa(s), tg.Name}] }
			tr := key(Trained)
			chance := ""
			if tg.Class {
				chance = fmt.Sprintf("%.3f", float64(tr.Chance))
			}
			fmt.Fprintf(bw, "%-16s %-16s %-9s %-26s %-10s %-10s %s\n", tg.Name, fmt.Sprintf("%d %s", s, name), metric,
				fmt.Sprintf("%s [%s, %s]", fixed(tr.Value), fixed(tr.Lo), fixed(tr.Hi)), fixed(key(Shuffled).Value), fixed(key(Init).Value), chance)
		}
	}
	return bw.Flush()
}

// fixed is n with 3 decimals, "n/a" for NaN.
func fixed(n jsonfloat.Float) string {
	if math.IsNaN(float64(n)) {
		return "n/a"
	}
	return strconv.FormatFloat(float64(n), 'f', 3, 64)
}
