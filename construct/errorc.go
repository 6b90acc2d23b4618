package construct

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/ctw"
)

// CTWConfig is the ctw.Config of the same prior (Init = Pad: the dummy
// context x_{1−D}^0 = 0 of Theorem 1, which the construction feeds as D
// padding positions).
func (c Config) CTWConfig() ctw.Config {
	return ctw.Config{A: c.A, D: c.D, Lambda: c.Lambda, Alpha: c.Alpha, Init: ctw.Pad}
}

// CTWDist returns CTW's predictive distributions P(x_{j+1} = · | x_1^j),
// j = 0..len(x), the reference of Theorem 5.
func CTWDist(cfg Config, x []byte) ([][]float64, error) {
	p, err := ctw.New(cfg.CTWConfig())
	if err != nil {
		return nil, err
	}
	st := p.NewState()
	out := make([][]float64, len(x)+1)
	for j := range out {
		out[j] = make([]float64, cfg.A)
		st.Predict(out[j])
		if j < len(x) {
			st.Observe(x[j])
		}
	}
	return out, nil
}

// MaxError runs the construction for cfg on x (with N = cfg.N, or the
// smallest period D+len(x)+1 when cfg.N is 0) and returns the largest
// absolute difference max_{j,a} |P_TF(a | x_1^j) − P_CTW(a | x_1^j)| over
// all positions j = 0..len(x) (including the first ones and the prediction
// after the last symbol) and symbols a.
func MaxError(cfg Config, x []byte) (float64, error) {
	if cfg.N == 0 {
		cfg.N = len(x) + cfg.D + 1
	}
	c, err := Build(cfg)
	if err != nil {
		return 0, err
	}
	tr, err := c.Run(x, false)
	if err != nil {
		return 0, err
	}
	ref, err := CTWDist(cfg, x)
	if err != nil {
		return 0, err
	}
	return maxDiff(tr.Dist, ref), nil
}

func maxDiff(a, b [][]float64) float64 {
	worst := 0.0
	for j := range a {
		for k := range a[j] {
			e := math.Abs(a[j][k] - b[j][k])
			if math.IsNaN(e) {
				return math.Inf(1)
			}
			worst = max(worst, e)
		}
	}
	return worst
}

// ErrorVsC returns MaxError of the construction with finite temperature
// c = cs[k] (the factor of every W_K in Appendix "Construction of
// Transformer for CTW"), the rest of cfg unchanged. As c → ∞ it tends to the
// hard-limit error (~1e-15): the slowest factor is the positional
// "latest position" score, whose gap between neighbouring positions is
// c(1 − cos(π/N)) ≈ cπ²/(2N²), so c must be large against N².
func ErrorVsC(cfg Config, x []byte, cs []float64) ([]float64, error) {
	out := make([]float64, len(cs))
	for k, cv := range cs {
		if !(cv > 0) || math.IsInf(cv, 0) {
			return nil, fmt.Errorf("construct: temperature c=%v must be positive and finite", cv)
		}
		cfg.C = cv
		e, err := MaxError(cfg, x)
		if err != nil {
			return nil, err
		}
		out[k] = e
	}
	return out, nil
}

// LogSpace returns n values from lo to hi spaced evenly in log scale.
func LogSpace(lo, hi float64, n int) []float64 {
	if n == 1 {
		return []float64{lo}
	}
	out := make([]float64, n)
	for k := range out {
		out[k] = lo * math.Pow(hi/lo, float64(k)/float64(n-1))
	}
	return out
}
