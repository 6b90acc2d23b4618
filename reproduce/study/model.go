package study

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vomc/vomc/transformer"
)

// Model is one transformer architecture of the study.
type Model struct {
	// Spec is the notation it was parsed from, e.g. "1,1,1-ff".
	Spec string
	// Heads per layer; FF and LN say whether feed-forward sub-layers and
	// LayerNorms are present.
	Heads  []int
	FF, LN bool
	// Sin selects fixed sinusoidal positional embeddings instead of
	// learned ones (suffix "-sin").
	Sin bool
	// Budget multiplies the study's step limit (Config.MaxSteps) for this
	// model (suffix "-xK", K ≥ 2; 0 and 1 mean the study's budget): a
	// model trained K times longer tells whether its loss is limited by
	// the training budget.
	Budget int
}

// ParseModel reads the notation "H1,H2,…[-ff][-ln][-sin][-xK]".
func ParseModel(s string) (Model, error) {
	m := Model{Spec: s, FF: true, LN: true}
	parts := strings.Split(strings.TrimSpace(s), "-")
	for _, p := range strings.Split(parts[0], ",") {
		h, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || h < 1 {
			return m, fmt.Errorf("reproduce: model %q: heads must be positive integers", s)
		}
		m.Heads = append(m.Heads, h)
	}
	for _, p := range parts[1:] {
		switch strings.ToLower(strings.TrimSpace(p)) {
		case "ff":
			m.FF = false
		case "ln":
			m.LN = false
		case "sin":
			m.Sin = true
		default:
			k, err := strconv.Atoi(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(p)), "x"))
			if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(p)), "x") || err != nil || k < 2 || k > 100 {
				return m, fmt.Errorf("reproduce: model %q: unknown suffix -%s (-ff, -ln, -sin, -xK for K = 2..100 times the step budget)", s, p)
			}
			m.Budget = k
		}
	}
	return m, nil
}

// Label is the paper's notation: "TF(4,4)", with " attn-only" for
// networks without FF and LayerNorm, " w/o FF" or " w/o LN" otherwise, and
// " sin" for sinusoidal positions.
func (m Model) Label() string {
	hs := make([]string, len(m.Heads))
	for i, h := range m.Heads {
		hs[i] = strconv.Itoa(h)
	}
	l := "TF(" + strings.Join(hs, ",") + ")"
	switch {
	case !m.FF && !m.LN:
		l += " attn-only"
	case !m.FF:
		l += " w/o FF"
	case !m.LN:
		l += " w/o LN"
	}
	if m.Sin {
		l += " sin"
	}
	if m.Budget > 1 {
		l += fmt.Sprintf(" ×%d steps", m.Budget)
	}
	return l
}

// Architecture is m's label without its budget: models with the same
// Architecture differ only in how long they were trained (the rungs of a
// budget ladder).
func (m Model) Architecture() string {
	m.Budget = 0
	return m.Label()
}

// Plain reports whether m is a full transformer (feed-forward sub-layers
// and LayerNorms) with learned positions and the given number of layers:
// TF(4,4) for layers = 2, the architecture a ladder's rule reads.
func (m Model) Plain(layers int) bool {
	return !m.Sin && m.FF && m.LN && len(m.Heads) == layers
}

// Slug is a file-name-safe form of the spec, e.g. "1-1-1-noff".
func (m Model) Slug() string {
	s := strings.ReplaceAll(strings.Split(m.Spec, "-")[0], ",", "-")
	if !m.FF {
		s += "-noff"
	}
	if !m.LN {
		s += "-noln"
	}
	if m.Sin {
		s += "-sin"
	}
	if m.Budget > 1 {
		s += fmt.Sprintf("-x%d", m.Budget)
	}
	return "h" + s
}

// TrainConfig is the study's training configuration for this model: the
// step limit (or, without one, the epoch limit) times Budget.
func (m Model) TrainConfig(c Config) transformer.TrainConfig {
	tc := c.TrainConfig()
	if m.Budget > 1 {
		if tc.MaxSteps > 0 {
			tc.MaxSteps *= m.Budget
		} else {
			tc.Epochs *= m.Budget
		}
	}
	return tc
}

// TransformerConfig is the model's architecture under the study's E, N
// and A (GELU, learned positions).
func (m Model) TransformerConfig(c Config) transformer.Config {
	tc := transformer.DefaultConfig(len(m.Heads), 1, c.Embed, c.N, c.A)
	tc.Heads = append([]int(nil), m.Heads...)
	tc.FeedForward, tc.LayerNorm = m.FF, m.LN
	if m.Sin {
		tc.Positional = transformer.Sinusoidal
	}
	return tc
}
