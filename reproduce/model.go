package reproduce

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
}

// ParseModel reads the notation "H1,H2,…[-ff][-ln][-sin]".
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
			return m, fmt.Errorf("reproduce: model %q: unknown suffix -%s (-ff, -ln, -sin)", s, p)
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
	return l
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
	return "h" + s
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
