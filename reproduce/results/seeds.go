package results

import (
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/jsonfloat"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/synth"
)

// SeedsFile is the across-seed statistics file the figures stage writes
// (and the run publishes at the top of its output) when some model (a
// transformer or a TF 2-0 model) has more than one replicate.
const SeedsFile = "seeds.json"

// SeedConfidence is the confidence level of the across-seed intervals.
const SeedConfidence = 0.95

// AcrossSeeds is the mean of xs (one value per training replicate) with
// its SeedConfidence Student-t interval mean ± t_{0.975, S−1}·sd/√S; SD,
// Lo and Hi are NaN for fewer than two values.
func AcrossSeeds(xs []float64) eval.Interval {
	return eval.MeanInterval(xs, SeedConfidence)
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
	AcrossWindow, AcrossSecondHalf, AcrossExcessWindow, AcrossExcessSecondHalf JSONInterval
}

// JSONInterval is an eval.Interval in JSON, its non-finite fields (NaN
// with one window or one seed) by vomc's convention (jsonfloat: "NaN";
// files of before wrote null, which reads as NaN).
type JSONInterval struct {
	Mean, SD, Lo, Hi jsonfloat.Float
}

// ToJSONInterval is iv as a JSONInterval.
func ToJSONInterval(iv eval.Interval) JSONInterval {
	return JSONInterval{jsonfloat.Float(iv.Mean), jsonfloat.Float(iv.SD), jsonfloat.Float(iv.Lo), jsonfloat.Float(iv.Hi)}
}

// replicaSet is one trained model's replicates: Names[r] is the method
// name of replicate r (Names[0] the model's label, Base).
type replicaSet struct {
	Base  string
	Names []string
}

// replicas lists every trained model's replicates: the transformers of
// cfg.Models (NumSeeds each, RepLabel) and the TF 2-0 models of Fig. 8
// (NumSynthSeeds each, one per distinct variant and effective encoding,
// named SynthRepLabel).
func replicas(cfg study.Config) []replicaSet {
	var out []replicaSet
	for _, m := range cfg.Models() {
		rs := replicaSet{Base: m.Label()}
		for r := range cfg.SeedsOf(m) {
			rs.Names = append(rs.Names, RepLabel(m, r))
		}
		out = append(out, rs)
	}
	seen := map[string]bool{}
	for _, enc := range cfg.Encodings() {
		enc, err := synth.ParseEncoding(enc)
		if err != nil {
			continue
		}
		for _, s := range cfg.SynthVariants {
			v, err := synth.ParseVariant(s)
			if err != nil {
				continue
			}
			base := SynthLabel(v, enc)
			if seen[base] {
				continue
			}
			seen[base] = true
			rs := replicaSet{Base: base}
			for r := range cfg.NumSynthSeeds() {
				rs.Names = append(rs.Names, SynthRepLabel(base, r))
			}
			out = append(out, rs)
		}
	}
	return out
}

// SeedStatsOf collects, for every model of cfg with more than one replicate
// evaluated in res, its SeedStats (transformers in cfg.Models order, then
// the TF 2-0 models); nil when no model has two replicates.
func SeedStatsOf(cfg study.Config, res *eval.Result) []SeedStats {
	var out []SeedStats
	for _, rs := range replicas(cfg) {
		if len(rs.Names) < 2 {
			continue
		}
		st := SeedStats{Model: rs.Base}
		for _, name := range rs.Names {
			mr := res.Method(name)
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
		st.AcrossWindow = ToJSONInterval(AcrossSeeds(st.Window))
		st.AcrossSecondHalf = ToJSONInterval(AcrossSeeds(st.SecondHalf))
		st.AcrossExcessWindow = ToJSONInterval(AcrossSeeds(st.ExcessWindow))
		st.AcrossExcessSecondHalf = ToJSONInterval(AcrossSeeds(st.ExcessSecondHalf))
		out = append(out, st)
	}
	return out
}

// IsReplicate reports whether name is the method name of a replicate r ≥ 1
// of one of cfg's trained models.
func IsReplicate(cfg study.Config, name string) bool {
	_, ok := ReplicateOf(cfg)[name]
	return ok
}

// WithReplicates returns names followed, for each name that is a trained
// model's label, by the names of its replicates r ≥ 1 that res holds.
func WithReplicates(cfg study.Config, res *eval.Result, names []string) []string {
	out := append([]string(nil), names...)
	sets := replicas(cfg)
	for _, n := range names {
		for _, rs := range sets {
			if rs.Base == n && len(rs.Names) > 1 {
				out = append(out, Exact(res, rs.Names[1:]...)...)
			}
		}
	}
	return out
}

// ReplicateOf maps the method name of every replicate r ≥ 1 of cfg's
// trained models to the model's label (replicate 0's name), for
// plot.Options.
func ReplicateOf(cfg study.Config) map[string]string {
	out := map[string]string{}
	for _, rs := range replicas(cfg) {
		for _, n := range rs.Names[1:] {
			out[n] = rs.Base
		}
	}
	return out
}
