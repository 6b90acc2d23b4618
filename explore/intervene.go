package explore

import (
	"fmt"
	"math"
	"strings"

	"github.com/vomc/vomc/transformer"
)

// Intervened is a model with some heads switched off or replaced by their
// exact pattern (transformer.Intervention), at a position: what the page
// shows beside the intact model.
type Intervened struct {
	// Spec is the intervention in the form of a tf method's parameters
	// ("ablate=L1H2:mode=zero:pattern=L1H1=offset:1"), so that
	// `vomc eval --methods tf:path=DIR:SPEC` evaluates the same model.
	Spec string `json:"spec"`
	// Dist is its distribution of x[t+1] and its loss at t.
	Dist Dist `json:"dist"`
	// Loss is its loss row over the window, t = 0..T−2 (nats).
	Loss Losses `json:"loss"`
	// Reference is the excess reference (Meta.Excess); Excess and
	// ModelExcess are the intervened and the intact model's loss minus the
	// reference's at t (absent at the last position), MeanExcess and
	// ModelMeanExcess their means over the window's positions 0..T−2.
	Reference       string   `json:"reference"`
	Excess          *float64 `json:"excess,omitempty"`
	ModelExcess     *float64 `json:"model_excess,omitempty"`
	MeanExcess      float64  `json:"mean_excess"`
	ModelMeanExcess float64  `json:"model_mean_excess"`
}

// intervention reads the request's ablate= (heads whose attention output
// is set to 0, "L1H2+L1H3"; a '+' that arrives as a space is read as one)
// and pattern= ("L1H1=offset:1+L2H3=suffix:2"), checked against the
// model's configuration c; nil when neither is given.
func (q query) intervention(c transformer.Config) (*transformer.Intervention, error) {
	v := q.r.URL.Query()
	ablate := strings.ReplaceAll(strings.TrimSpace(v.Get("ablate")), " ", "+")
	pattern := strings.ReplaceAll(strings.TrimSpace(v.Get("pattern")), " ", "+")
	if ablate == "" && pattern == "" {
		return nil, nil
	}
	var iv transformer.Intervention
	var err error
	if ablate != "" {
		if iv.Ablate, err = transformer.ParseHeads(ablate); err != nil {
			return nil, badf("ablate=%q: %v", ablate, err)
		}
		iv.Mode = transformer.AblateZero
	}
	if pattern != "" {
		if iv.Patterns, err = transformer.ParsePatterns(pattern); err != nil {
			return nil, badf("pattern=%q: %v", pattern, err)
		}
	}
	if err := iv.Check(c); err != nil {
		return nil, badf("%v", err)
	}
	return &iv, nil
}

// IntervenedAt is model mi at step with the intervention iv on a window,
// at query position t, beside the intact model and the excess reference.
// The intervened model's losses over the window are cached like a
// model's.
func (s *Server) IntervenedAt(win *window, t, mi, step int, iv transformer.Intervention) (*Intervened, error) {
	T := len(win.X)
	m, rv, mv, err := s.clicked(win, t, mi, step)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("intervened/%d/%d/%s/%s", mi, step, win.Key, iv)
	v, err := s.cache.get(key, func() (any, int64, error) {
		tm, err := m.at(step)
		if err != nil {
			return nil, 0, err
		}
		x, err := tm.Intervene(iv)
		if err != nil {
			return nil, 0, fmt.Errorf("explore: %s: %w", m.Name, err)
		}
		sr, err := series(m.Name+" ["+iv.String()+"]", "intervened", x, win.X)
		if err != nil {
			return nil, 0, err
		}
		return sr, int64(T) * int64(8*(tm.Config.Alphabet+1)), nil
	})
	if err != nil {
		return nil, err
	}
	sr := v.(Series)
	A := s.prior.A
	out := &Intervened{Spec: iv.String(), Dist: Dist{Name: sr.Name, Kind: sr.Kind}, Loss: sr.Loss, Reference: s.excess}
	var ref Losses
	for _, r := range rv.Refs {
		if r.Name == s.excess {
			ref = r.Loss
		}
	}
	if t+1 < T {
		out.Dist.P = sr.P[t*A : (t+1)*A]
		out.Dist.Loss = finite(sr.Loss[t])
		if ref != nil {
			out.Excess = finite(sr.Loss[t] - ref[t])
			out.ModelExcess = finite(mv.Loss[t] - ref[t])
		}
	}
	if ref != nil {
		out.MeanExcess, out.ModelMeanExcess = meanDiff(sr.Loss, ref), meanDiff(mv.Loss, ref)
	}
	return out, nil
}

// finite is &v, or nil when v is not finite.
func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

// meanDiff is the mean of a − b over their positions.
func meanDiff(a, b Losses) float64 {
	s := 0.0
	for i := range a {
		s += a[i] - b[i]
	}
	return s / float64(max(len(a), 1))
}
