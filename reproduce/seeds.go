package reproduce

import (
	"math"

	"github.com/vomc/vomc/eval"
)

// SeedsFile is the across-seed statistics file the figures stage writes
// (and the run publishes at the top of its output) when S > 1.
const SeedsFile = "seeds.json"

// SeedConfidence is the confidence level of the across-seed intervals.
const SeedConfidence = 0.95

// AcrossSeeds is the mean of xs (one value per training replicate) with
// its SeedConfidence Student-t interval mean ± t_{0.975, S−1}·sd/√S; SD,
// Lo and Hi are NaN for fewer than two values.
func AcrossSeeds(xs []float64) eval.Interval {
	n := len(xs)
	if n == 0 {
		return eval.Interval{Mean: math.NaN(), SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return eval.Interval{Mean: mean, SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	c, _, err := eval.CriticalValue(n, SeedConfidence)
	if err != nil {
		c = math.NaN()
	}
	h := c * sd / math.Sqrt(float64(n))
	return eval.Interval{Mean: mean, SD: sd, Lo: mean - h, Hi: mean + h}
}

// SeedStats are one model's results across its training replicates: the
// replicates' window means (and the replicate-0 intervals across windows
// stay in the summary table) and their mean ± SeedConfidence interval
// across seeds.
type SeedStats struct {
	Model string `json:"model"`
	// Replicates are the replicates' method names in results.json, in
	// replicate order (replicate 0 is the model's label).
	Replicates []string `json:"replicates"`
	// Window, SecondHalf, ExcessWindow and ExcessSecondHalf are the
	// replicates' mean losses (nats per symbol), one per replicate.
	Window, SecondHalf, ExcessWindow, ExcessSecondHalf []float64
	// The Student-t intervals over the replicate means (Lo = Hi = NaN
	// written as null when fewer than two replicates were evaluated).
	AcrossWindow, AcrossSecondHalf, AcrossExcessWindow, AcrossExcessSecondHalf jsonInterval
}

// jsonInterval is an eval.Interval whose NaN fields are written as null.
type jsonInterval struct {
	Mean, SD, Lo, Hi *float64
}

func toJSONInterval(iv eval.Interval) jsonInterval {
	p := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	return jsonInterval{Mean: p(iv.Mean), SD: p(iv.SD), Lo: p(iv.Lo), Hi: p(iv.Hi)}
}

// seedStats collects, for every model of cfg with more than one replicate
// evaluated in res, its SeedStats (models in cfg.Models order); nil when
// S = 1.
func seedStats(cfg Config, res *eval.Result) []SeedStats {
	if cfg.NumSeeds() < 2 {
		return nil
	}
	var out []SeedStats
	for _, m := range cfg.Models() {
		st := SeedStats{Model: m.Label()}
		for r := range cfg.NumSeeds() {
			mr := res.Method(RepLabel(m, r))
			if mr == nil {
				continue
			}
			st.Replicates = append(st.Replicates, mr.Name)
			st.Window = append(st.Window, mr.Window.Mean)
			st.SecondHalf = append(st.SecondHalf, mr.SecondHalf.Mean)
			st.ExcessWindow = append(st.ExcessWindow, mr.ExcessWindow.Mean)
			st.ExcessSecondHalf = append(st.ExcessSecondHalf, mr.ExcessSecondHalf.Mean)
		}
		if len(st.Replicates) < 2 {
			continue
		}
		st.AcrossWindow = toJSONInterval(AcrossSeeds(st.Window))
		st.AcrossSecondHalf = toJSONInterval(AcrossSeeds(st.SecondHalf))
		st.AcrossExcessWindow = toJSONInterval(AcrossSeeds(st.ExcessWindow))
		st.AcrossExcessSecondHalf = toJSONInterval(AcrossSeeds(st.ExcessSecondHalf))
		out = append(out, st)
	}
	return out
}

// isReplicate reports whether name is the method name of a replicate r ≥ 1
// of one of cfg's models.
func isReplicate(cfg Config, name string) bool {
	for r := 1; r < cfg.NumSeeds(); r++ {
		for _, m := range cfg.Models() {
			if RepLabel(m, r) == name {
				return true
			}
		}
	}
	return false
}

// withReplicates returns names followed, for each name that is a model's
// label, by the names of its replicates r ≥ 1 that res holds.
func withReplicates(cfg Config, res *eval.Result, names []string) []string {
	out := append([]string(nil), names...)
	for _, n := range names {
		for _, m := range cfg.Models() {
			if m.Label() != n {
				continue
			}
			for r := 1; r < cfg.NumSeeds(); r++ {
				out = append(out, exact(res, RepLabel(m, r))...)
			}
		}
	}
	return out
}

// replicateOf maps the method name of every replicate r ≥ 1 of cfg's
// models to the model's label (replicate 0's name), for plot.Options.
func replicateOf(cfg Config) map[string]string {
	out := map[string]string{}
	for r := 1; r < cfg.NumSeeds(); r++ {
		for _, m := range cfg.Models() {
			out[RepLabel(m, r)] = m.Label()
		}
	}
	return out
}
