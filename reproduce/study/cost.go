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

// TrainTokens is the number of training tokens a model of the study's
// budget (no -xK suffix) sees at most: the step limit times batch·N, or
// epochs times the training windows, whichever is smaller.
func (c Config) TrainTokens() float64 {
	return c.trainTokens(1)
}

// ModelTrainTokens is the number of training tokens model m sees at most:
// as TrainTokens, with its step limit (or, without one, its epoch limit)
// times m.Budget, as Model.TrainConfig sets them. When the epoch limit
// binds, a -xK model sees no more tokens than TrainTokens.
func (c Config) ModelTrainTokens(m Model) float64 {
	return c.trainTokens(max(1, m.Budget))
}

func (c Config) trainTokens(k int) float64 {
	windows := float64(c.TrainTrees) * (1 - c.ValFrac) * float64(c.TrainNK/c.N)
	perEpoch := windows * float64(c.N)
	if c.MaxSteps > 0 {
		return math.Min(perEpoch*float64(c.Epochs), float64(k*c.MaxSteps)*float64(c.Batch)*float64(c.N))
	}
	return perEpoch * float64(k*c.Epochs)
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

// CostSummary says, in one sentence fragment, how many transformers a
// run trains and how many tokens each sees at most, e.g. "16 transformers
// (10 models, 1–2 seeds each), ≤ 98.3M–393M training tokens each (98.3M
// at ×1, 393M at ×4)" (the form TestCostSummary checks).
func (c Config) CostSummary() string {
	ms := c.Models()
	if len(ms) == 0 {
		return "no transformers"
	}
	lo, hi := c.SeedsOf(ms[0]), c.SeedsOf(ms[0])
	tlo, thi := c.ModelTrainTokens(ms[0]), c.ModelTrainTokens(ms[0])
	blo, bhi := max(1, ms[0].Budget), max(1, ms[0].Budget)
	for _, m := range ms[1:] {
		k, t := c.SeedsOf(m), c.ModelTrainTokens(m)
		lo, hi = min(lo, k), max(hi, k)
		if t < tlo {
			tlo, blo = t, max(1, m.Budget)
		}
		if t > thi {
			thi, bhi = t, max(1, m.Budget)
		}
	}
	seeds := fmt.Sprintf("%d seed%s each", hi, plural(hi))
	if lo != hi {
		seeds = fmt.Sprintf("%d–%d seeds each", lo, hi)
	}
	s := fmt.Sprintf("%d transformer%s (%d model%s, %s), ", c.TrainingRuns(), plural(c.TrainingRuns()), len(ms), plural(len(ms)), seeds)
	if tlo == thi {
		return s + fmt.Sprintf("≤ %s training tokens each", tokens(thi))
	}
	return s + fmt.Sprintf("≤ %s–%s training tokens each (%s at ×%d, %s at ×%d)", tokens(tlo), tokens(thi), tokens(tlo), blo, tokens(thi), bhi)
}

// tokens writes a token count with three significant digits in M or G.
func tokens(t float64) string {
	if t >= 1e9 {
		return fmt.Sprintf("%.3gG", t/1e9)
	}
	return fmt.Sprintf("%.3gM", t/1e6)
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
		s += float64(c.SeedsOf(m)) * c.ModelTrainTokens(m) / m.EstimateTokensPerSecond(c)
	}
	return s / 3600
}
