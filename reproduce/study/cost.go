package study

import (
	"fmt"
	"math"
)

// MeasuredRate is the training throughput model behind the cost estimates:
// a 2-layer, 4-head, E=64, N=512 model (batch 32) trains at ≈ 165k tokens/s
// on the 2-core AVX-512 machine this was developed on (measured in the
// depth5 run of 2026-11-24: 1 layer 335k, 2 layers 165k tokens/s, both
// within 2% of this model), and the cost of a token is taken proportional
// to Σ_layers (12E² with FF or 4E² without, + N·E for the attention
// scores).
const MeasuredRate = 165e3 * 2 * (12*64*64 + 512*64)

// EstimateTokensPerSecond predicts the training throughput of a model on
// that machine (see MeasuredRate).
func (m Model) EstimateTokensPerSecond(c Config) float64 {
	per := 0.0
	for range m.Heads {
		w := 4.0
		if m.FF {
			w = 12
		}
		per += w*float64(c.Embed*c.Embed) + float64(c.N*c.Embed)
	}
	return MeasuredRate / per
}

// TrainTokens is the number of training tokens a model sees at most: the
// step limit times batch·N, or epochs times the training windows.
func (c Config) TrainTokens() float64 {
	windows := float64(c.TrainTrees) * (1 - c.ValFrac) * float64(c.TrainNK/c.N)
	perEpoch := windows * float64(c.N)
	total := perEpoch * float64(c.Epochs)
	if c.MaxSteps > 0 {
		total = math.Min(total, float64(c.MaxSteps)*float64(c.Batch)*float64(c.N))
	}
	return total
}

// TrainingRuns is the number of transformers trained: every model's
// replicates (SeedsOf), summed over Models.
func (c Config) TrainingRuns() int {
	n := 0
	for _, m := range c.Models() {
		n += c.SeedsOf(m)
	}
	return n
}

// MaxTrainTokens is the largest TrainTokens of any model: TrainTokens
// times the largest Budget (K of a -xK model), or TrainTokens without
// one.
func (c Config) MaxTrainTokens() float64 {
	k := 1
	for _, m := range c.Models() {
		k = max(k, m.Budget)
	}
	return float64(k) * c.TrainTokens()
}

// CostSummary says, in one sentence fragment, how many transformers a
// run trains and how many tokens each sees at most, e.g. "16 transformers
// (10 models, 1–2 seeds each), ≤ 98.3M training tokens each at the 1×
// budget, 393M for the largest (-x4)".
func (c Config) CostSummary() string {
	ms := c.Models()
	lo, hi := 0, 0
	for i, m := range ms {
		k := c.SeedsOf(m)
		if i == 0 || k < lo {
			lo = k
		}
		hi = max(hi, k)
	}
	seeds := fmt.Sprintf("%d seed%s each", hi, plural(hi))
	if lo != hi {
		seeds = fmt.Sprintf("%d–%d seeds each", lo, hi)
	}
	s := fmt.Sprintf("%d transformer%s (%d model%s, %s), ≤ %.3gM training tokens each", c.TrainingRuns(), plural(c.TrainingRuns()), len(ms), plural(len(ms)), seeds, c.TrainTokens()/1e6)
	if mx := c.MaxTrainTokens(); mx > c.TrainTokens() {
		s += fmt.Sprintf(" at the 1× budget, %.3gM for the largest (-x%d)", mx/1e6, int(math.Round(mx/c.TrainTokens())))
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// EstimateHours is the estimated training time of all models and all
// their replicates (SeedsOf each; without early stopping) on the 2-core
// machine of MeasuredRate, in hours.
func (c Config) EstimateHours() float64 {
	s := 0.0
	for _, m := range c.Models() {
		s += float64(c.SeedsOf(m)) * c.TrainTokens() * float64(max(1, m.Budget)) / m.EstimateTokensPerSecond(c)
	}
	return s / 3600
}
