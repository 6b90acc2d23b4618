package plot

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/vomc/vomc/eval"
)

// Choosing what a loss figure shows: methods by short spec or printed
// label, the excess panel's range, the default smoothing.

// SplitMethods splits a list of methods: on ";" when it has one, else on
// the commas outside parentheses (SplitTop), so that printed labels such as
// "CTW(D=3,λ=0.15,α=0.5),Markov(k=3,α=0.5)" stay whole. Empty parts are
// dropped.
func SplitMethods(list string) []string {
	var parts []string
	if strings.Contains(list, ";") {
		parts = strings.Split(list, ";")
	} else {
		parts = SplitTop(list)
	}
	var out []string
	for _, s := range parts {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// SplitTop splits s on the commas outside parentheses and brackets,
// trimming each part and keeping empty ones (n commas, n+1 parts).
func SplitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '(' || r == '[':
			depth++
		case (r == ')' || r == ']') && depth > 0:
			depth--
		case r == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// MatchMethods are the indices of the methods of res that name selects:
// the method of that printed label, else (case aside) every method whose
// label has that name and parameters — a short spec such as "ctw", "tf"
// or "markov:k=3" (lambda and alpha match λ and α). An unmatched name is
// an error listing the result's methods.
func MatchMethods(res *eval.Result, name string) ([]int, error) {
	if k := slices.IndexFunc(res.Methods, func(m eval.MethodResult) bool { return m.Name == name }); k >= 0 {
		return []int{k}, nil
	}
	var ks []int
	for k, m := range res.Methods {
		if specMatches(name, m.Name) {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		names := make([]string, len(res.Methods))
		for i, m := range res.Methods {
			names[i] = m.Name
		}
		return nil, fmt.Errorf("plot: method %q not in the result (its methods: %s; give a label, or a short spec such as ctw, tf or markov:k=3; separate labels with ';')",
			name, strings.Join(names, "; "))
	}
	return ks, nil
}

// specMatches says whether the short spec ("markov:k=3") names the
// method of printed label ("Markov(k=3,α=0.5)").
func specMatches(spec, label string) bool {
	parts := strings.Split(strings.ToLower(spec), ":")
	lname, params, _ := strings.Cut(strings.ToLower(label), "(")
	if strings.TrimSpace(lname) != strings.TrimSpace(parts[0]) {
		return false
	}
	have := map[string]bool{}
	for _, p := range strings.Split(strings.TrimSuffix(params, ")"), ",") {
		have[strings.TrimSpace(p)] = true
	}
	for _, p := range parts[1:] {
		p = strings.NewReplacer("lambda", "λ", "alpha", "α", "delta", "δ").Replace(strings.TrimSpace(p))
		if !have[p] {
			return false
		}
	}
	return true
}

// DefaultSmooth is the moving-average width used when none is given: N/100,
// and at least 5 positions (N/25 for windows under 125 symbols), so that
// short windows are not drawn jagged.
func DefaultSmooth(N int) int {
	return max(1, N/100, min(5, N/25))
}

// FocusExcess is the excess panel's range (in nats) that shows the
// methods that matter: those whose mean excess over the window is at most
// the median's (at least the best one and the reference's neighbours),
// with a margin, from the positions past the first tenth of the window
// (where every method is still learning). ok is false when it would not
// cut any method's curve.
func FocusExcess(res *eval.Result, names []string) (lo, hi float64, ok bool) {
	type mth struct {
		mean, lo, hi float64
	}
	var ms []mth
	for k, m := range res.Methods {
		if k == res.Reference || len(m.Excess) == 0 || names != nil && !slices.Contains(names, m.Name) {
			continue
		}
		x := mth{mean: m.ExcessWindow.Mean, lo: math.Inf(1), hi: math.Inf(-1)}
		for _, e := range m.Excess[len(m.Excess)/10:] {
			if !math.IsNaN(e.Mean) {
				x.lo, x.hi = min(x.lo, e.Mean), max(x.hi, e.Mean)
			}
		}
		ms = append(ms, x)
	}
	if len(ms) < 3 {
		return 0, 0, false
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].mean < ms[j].mean })
	keep := ms[:(len(ms)+1)/2]
	lo, hi = 0, 0
	for _, m := range keep {
		lo, hi = min(lo, m.lo), max(hi, m.hi)
	}
	if hi <= lo || ms[len(ms)-1].hi <= 1.5*hi {
		return 0, 0, false
	}
	pad := 0.15 * (hi - lo)
	return lo - pad, hi + pad, true
}

// Focus completes opts for res: the default smoothing (DefaultSmooth) when
// Smooth is 0, and with the excess panel and no range given (nor
// ExcessAll), the range of FocusExcess in the plotted unit.
func Focus(res *eval.Result, opts Options) Options {
	if opts.Smooth == 0 {
		opts.Smooth = DefaultSmooth(res.N)
	}
	if !opts.Excess || opts.ExcessAll || opts.ExcessLog || opts.ExcessYMax > opts.ExcessYMin {
		return opts
	}
	var names []string
	if opts.Methods != nil {
		for _, name := range opts.Methods {
			ks, _ := MatchMethods(res, name)
			for _, k := range ks {
				names = append(names, res.Methods[k].Name)
			}
		}
	}
	if lo, hi, ok := FocusExcess(res, names); ok {
		scale := 1.0
		if opts.Bits {
			scale = 1 / math.Ln2
		}
		opts.ExcessYMin, opts.ExcessYMax = lo*scale, hi*scale
	}
	return opts
}

// ExcessFloor is the smallest excess (nats or bits) the logarithmic excess
// panel shows: smaller ones, zero and negative ones too, are drawn at it.
const ExcessFloor = 1e-4

// logExcess puts the excess panel p on a logarithmic axis with the bands
// and lines clipped at ExcessFloor from below.
func logExcess(p *gplot.Plot, bands, lines []gplot.Plotter) {
	clip := func(xys plotter.XYs) {
		for i := range xys {
			xys[i].Y = max(xys[i].Y, ExcessFloor)
		}
	}
	for _, b := range bands {
		for _, ring := range b.(*plotter.Polygon).XYs {
			clip(ring)
		}
	}
	for _, l := range lines {
		clip(l.(*plotter.Line).XYs)
	}
	p.Add(bands...)
	p.Add(lines...)
	p.Y.Scale, p.Y.Tick.Marker = gplot.LogScale{}, gplot.LogTicks{Prec: -1}
}
