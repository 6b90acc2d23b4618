package probe

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/vomc/vomc/jsonfloat"
)

// scorer scores predictions of one target on the test rows of one band,
// with the bootstrap over test windows: the statistics are summed per
// window, and every resample (the same resamples for every probe, so
// that intervals are paired) sums the windows it drew.
type scorer struct {
	rows []int   // test rows of the band
	win  []int   // window of every test row
	nw   int     // test windows
	boot [][]int // resamples of window indices
}

// score returns tg's score of pred (all test rows) against y.
func (sc *scorer) score(tg Target, y, pred matrix) Score {
	k := tg.hi - tg.lo
	if tg.Class {
		// per window: rows, hits
		st := make([]float64, 2*sc.nw)
		for _, r := range sc.rows {
			w := sc.win[r]
			st[2*w]++
			if argmax(y.row(r)[tg.lo:tg.hi]) == argmax(pred.row(r)[tg.lo:tg.hi]) {
				st[2*w+1]++
			}
		}
		acc := func(sum []float64) float64 {
			if sum[0] == 0 {
				return math.NaN()
			}
			return sum[1] / sum[0]
		}
		return sc.interval(st, 2, acc)
	}
	// per window: rows, SSE, Σy_j and Σy_j² for every output j
	width := 2 + 2*k
	st := make([]float64, width*sc.nw)
	for _, r := range sc.rows {
		s := st[sc.win[r]*width : (sc.win[r]+1)*width]
		yr, pr := y.row(r)[tg.lo:tg.hi], pred.row(r)[tg.lo:tg.hi]
		s[0]++
		for j := range yr {
			d := yr[j] - pr[j]
			s[1] += d * d
			s[2+j] += yr[j]
			s[2+k+j] += yr[j] * yr[j]
		}
	}
	rsq := func(sum []float64) float64 {
		n, sst := sum[0], 0.0
		for j := range k {
			sst += sum[2+k+j] - sum[2+j]*sum[2+j]/n
		}
		if !(n > 1) || !(sst > 1e-12*n) {
			return math.NaN()
		}
		return 1 - sum[1]/sst
	}
	return sc.interval(st, width, rsq)
}

// interval computes f of the statistics summed over all windows and the
// 2.5% and 97.5% percentiles of f over the resamples (NaN resamples, with
// no rows or no variance, left out).
func (sc *scorer) interval(st []float64, width int, f func([]float64) float64) Score {
	sum := make([]float64, width)
	for w := range sc.nw {
		for j := range width {
			sum[j] += st[w*width+j]
		}
	}
	out := Score{Rows: len(sc.rows), Value: jsonfloat.Float(f(sum)), Lo: jsonfloat.Float(math.NaN()), Hi: jsonfloat.Float(math.NaN())}
	vals := make([]float64, 0, len(sc.boot))
	for _, ws := range sc.boot {
		clear(sum)
		for _, w := range ws {
			for j := range width {
				sum[j] += st[w*width+j]
			}
		}
		if v := f(sum); !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) > 0 {
		slices.Sort(vals)
		out.Lo, out.Hi = jsonfloat.Float(quantile(vals, 0.025)), jsonfloat.Float(quantile(vals, 0.975))
	}
	return out
}

// quantile is the q-quantile of sorted v (linear interpolation).
func quantile(v []float64, q float64) float64 {
	x := q * float64(len(v)-1)
	i := int(x)
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + (x-float64(i))*(v[i+1]-v[i])
}

// permutedWithin returns a copy of m whose rows listed in rows are
// permuted among themselves (the others left in place): a band's
// shuffled targets keep the band's own target distribution, so the
// shuffled probe's R² measures memorisation, not the difference between
// the band's mean and other positions'.
func permutedWithin(m matrix, rows []int, rng *rand.Rand) matrix {
	out := newMatrix(m.n, m.cols)
	copy(out.v, m.v)
	for i, j := range rng.Perm(len(rows)) {
		copy(out.row(rows[i]), m.row(rows[j]))
	}
	return out
}

// bandRows are the rows of each split whose position lies in a band.
func bandRows(s *split, b Band) []int {
	var rows []int
	for r, t := range s.at {
		if t >= b.Lo && t < b.Hi {
			rows = append(rows, r)
		}
	}
	return rows
}

// subF and subM are the rows of a feature or target matrix.
func subF(m fmatrix, rows []int) fmatrix {
	out := fmatrix{len(rows), m.cols, make([]float32, len(rows)*m.cols)}
	for i, r := range rows {
		copy(out.row(i), m.row(r))
	}
	return out
}

func subM(m matrix, rows []int) matrix {
	out := newMatrix(len(rows), m.cols)
	for i, r := range rows {
		copy(out.row(i), m.row(r))
	}
	return out
}

// fitAll fits every (condition, stream, target, band) probe; feats[cond]
// are the features of the splits (train, val, test) by stream. A band's
// probe is fitted, tuned and tested on that band's rows only, so its R²
// says how well the stream reads the target's variation among those
// positions.
func fitAll(ctx context.Context, ts *targetSet, splits []*split, feats map[string][][]fmatrix, res *Result, o Options) ([]Probe, error) {
	train, val, test := splits[0], splits[1], splits[2]
	rng := rand.New(rand.NewPCG(o.Seed, 0x626f6f74)) // "boot"
	boot := make([][]int, o.Bootstrap)
	for b := range boot {
		boot[b] = make([]int, len(test.windows))
		for i := range boot[b] {
			boot[b][i] = rng.IntN(len(test.windows))
		}
	}
	bands := make([]bandFit, len(res.Bands))
	for i, b := range res.Bands {
		bf := &bands[i]
		bf.rows = [3][]int{bandRows(train, b), bandRows(val, b), bandRows(test, b)}
		bf.shuffled = [2]matrix{permutedWithin(train.y, bf.rows[0], rng), permutedWithin(val.y, bf.rows[1], rng)}
		bf.sc = &scorer{nw: len(test.windows), boot: boot}
		for i := range bf.rows[2] {
			bf.sc.rows = append(bf.sc.rows, i)
			bf.sc.win = append(bf.sc.win, test.win[bf.rows[2][i]])
		}
		bf.yte = subM(test.y, bf.rows[2])
		bf.chance = chanceScores(ts, subM(train.y, bf.rows[0]), bf.yte)
	}
	var probes []Probe
	conds := []string{Trained, Shuffled, Init}
	total, done := len(conds)*len(res.Streams), 0
	for _, cond := range conds {
		for s := range res.Streams {
			ps := make([]Probe, len(ts.targets))
			for i, tg := range ts.targets {
				ps[i] = Probe{Condition: cond, Stream: s, Target: tg.Name, Metric: "r2"}
				if tg.Class {
					ps[i].Metric = "accuracy"
				}
			}
			for b := range bands {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				ytr, yva := train.y, val.y
				if cond == Shuffled {
					ytr, yva = bands[b].shuffled[0], bands[b].shuffled[1]
				}
				sc, err := bands[b].fit(ts, feats[cond], s, ytr, yva, o.Penalties)
				if err != nil {
					return nil, fmt.Errorf("probe: %s, stream %s, positions %s: %w", cond, res.Streams[s], res.Bands[b], err)
				}
				for i := range ps {
					ps[i].Scores = append(ps[i].Scores, sc[i])
				}
			}
			probes = append(probes, ps...)
			done++
			o.Events.Progress("probes", done, total)
		}
	}
	return probes, nil
}

// bandFit holds one band's rows of the splits, the training and
// validation targets with the band's rows permuted among themselves (the
// Shuffled control), its test targets and scorer, and the chance
// accuracies of its class targets.
type bandFit struct {
	rows     [3][]int
	shuffled [2]matrix
	yte      matrix
	sc       *scorer
	chance   map[string]float64
}

// fit fits the band's probes of every target from stream s: one
// decomposition of the band's training features, each target's penalty
// chosen on the band's validation rows, its test score. A band without
// two training rows, or without validation or test rows, scores NaN.
func (bf *bandFit) fit(ts *targetSet, feats [][]fmatrix, s int, ytr, yva matrix, penalties []float64) ([]Score, error) {
	out := make([]Score, len(ts.targets))
	nan := jsonfloat.Float(math.NaN())
	for i := range out {
		out[i] = Score{Rows: len(bf.rows[2]), Value: nan, Lo: nan, Hi: nan, Val: nan, Chance: jsonfloat.Float(bf.chance[ts.targets[i].Name])}
	}
	if len(bf.rows[0]) < 2 || len(bf.rows[1]) == 0 || len(bf.rows[2]) == 0 {
		return out, nil
	}
	r, err := fitRidge(subF(feats[0][s], bf.rows[0]), subM(ytr, bf.rows[0]))
	if err != nil {
		return nil, err
	}
	pv, pt := r.project(subF(feats[1][s], bf.rows[1])), r.project(subF(feats[2][s], bf.rows[2]))
	yv := subM(yva, bf.rows[1])
	best := make([]float64, len(ts.targets))
	for i := range best {
		best[i] = math.Inf(-1)
		out[i].Penalty = penalties[0]
	}
	for _, c := range penalties {
		pred := r.predict(pv, c)
		for i, tg := range ts.targets {
			if v := validationScore(tg, yv, pred); v > best[i] {
				best[i], out[i].Penalty = v, c
			}
		}
	}
	preds := map[float64]matrix{}
	for i, tg := range ts.targets {
		c := out[i].Penalty
		if _, ok := preds[c]; !ok {
			preds[c] = r.predict(pt, c)
		}
		sc := bf.sc.score(tg, bf.yte, preds[c])
		sc.Penalty, sc.Val, sc.Chance = c, jsonfloat.Float(best[i]), out[i].Chance
		if math.IsInf(best[i], -1) {
			sc.Val = nan
		}
		out[i] = sc
	}
	return out, nil
}

// validationScore is tg's R² or accuracy on the validation rows.
func validationScore(tg Target, y, pred matrix) float64 {
	sub := func(m matrix) matrix {
		out := newMatrix(m.n, tg.hi-tg.lo)
		for i := range m.n {
			copy(out.row(i), m.row(i)[tg.lo:tg.hi])
		}
		return out
	}
	ys, ps := sub(y), sub(pred)
	if tg.Class {
		return accuracy(ys, ps)
	}
	return r2(ys, ps)
}

// chanceScores is, for each class target, the accuracy on the test
// rows yte of always answering the most frequent class of the training
// rows ytr.
func chanceScores(ts *targetSet, ytr, yte matrix) map[string]float64 {
	out := map[string]float64{}
	for _, tg := range ts.targets {
		if !tg.Class {
			continue
		}
		freq := make([]float64, tg.hi-tg.lo)
		for i := range ytr.n {
			freq[argmax(ytr.row(i)[tg.lo:tg.hi])]++
		}
		major, hit := argmax(freq), 0
		for i := range yte.n {
			if argmax(yte.row(i)[tg.lo:tg.hi]) == major {
				hit++
			}
		}
		out[tg.Name] = float64(hit) / float64(max(yte.n, 1))
	}
	return out
}
