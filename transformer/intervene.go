package transformer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vomc/vomc/internal/opterr"
)

// Head names one attention head. Layer and Head are 0-based; its String
// (and ParseHead) is the 1-based "L1H2", as attention maps label heads.
type Head struct{ Layer, Head int }

// String is "L<layer>H<head>", 1-based.
func (h Head) String() string { return fmt.Sprintf("L%dH%d", h.Layer+1, h.Head+1) }

// ParseHead parses "L1H2" (case-insensitive, 1-based) into Head{0, 1}. It
// checks the syntax only; Config.CheckHead checks that the head exists.
func ParseHead(s string) (Head, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	l, h, ok := strings.Cut(strings.TrimPrefix(u, "L"), "H")
	if !ok || !strings.HasPrefix(u, "L") {
		return Head{}, fmt.Errorf("transformer: head %q is not of the form L<layer>H<head> (1-based, e.g. L1H2)", s)
	}
	li, err1 := strconv.Atoi(l)
	hi, err2 := strconv.Atoi(h)
	if err1 != nil || err2 != nil || li < 1 || hi < 1 {
		return Head{}, fmt.Errorf("transformer: head %q is not of the form L<layer>H<head> (1-based, e.g. L1H2)", s)
	}
	return Head{li - 1, hi - 1}, nil
}

// ParseHeads parses heads joined by '+', e.g. "L1H2+L1H3" (ParseHead).
func ParseHeads(s string) ([]Head, error) {
	var hs []Head
	for _, name := range strings.Split(s, "+") {
		h, err := ParseHead(name)
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// AllHeads lists every head of c, layer by layer.
func (c Config) AllHeads() []Head {
	var hs []Head
	for l, n := range c.Heads {
		for h := range n {
			hs = append(hs, Head{l, h})
		}
	}
	return hs
}

// CheckHead reports whether h is a head of c: an error names the layers
// or the heads of h's layer when it is not, and the nearest head c has
// (layer and head clamped to c's) as a did-you-mean.
func (c Config) CheckHead(h Head) error {
	near := Head{min(max(h.Layer, 0), len(c.Heads)-1), 0}
	near.Head = min(max(h.Head, 0), c.Heads[near.Layer]-1)
	if h.Layer < 0 || h.Layer >= len(c.Heads) {
		return fmt.Errorf("transformer: head %s: the model has %d layer(s), L1..L%d; did you mean %s?", h, len(c.Heads), len(c.Heads), near)
	}
	if h.Head < 0 || h.Head >= c.Heads[h.Layer] {
		return fmt.Errorf("transformer: head %s: layer %d has %d head(s), H1..H%d; did you mean %s?", h, h.Layer+1, c.Heads[h.Layer], c.Heads[h.Layer], near)
	}
	return nil
}

// Ablation is how an ablated head's attention output (its hs entries of
// the layer's (B,T,C) attention output, before the output projection) is
// replaced.
type Ablation uint8

// The ablation modes.
const (
	// AblateZero sets the head's output to 0; the output projection's
	// bias stays.
	AblateZero Ablation = iota + 1
	// AblateMean sets the head's output at position t to its mean at
	// position t over the reference windows (Intervention.References),
	// computed on the intact model.
	AblateMean
	// AblateResample sets the head's output at position t to its output
	// at position t in one reference window, computed on the intact model:
	// window r = resample(Seed, x_0..x_t) mod R, a hash of the seed and of
	// the pass's symbols up to t, so the choice is causal and a function of
	// what the model sees (see Intervention).
	AblateResample
)

// AblationModes are the modes' names, in order.
var AblationModes = []string{"zero", "mean", "resample"}

// String is "zero", "mean" or "resample".
func (a Ablation) String() string {
	if a >= AblateZero && int(a) <= len(AblationModes) {
		return AblationModes[a-1]
	}
	return fmt.Sprintf("Ablation(%d)", uint8(a))
}

// ParseAblation parses a mode name.
func ParseAblation(s string) (Ablation, error) {
	for i, n := range AblationModes {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Ablation(i + 1), nil
		}
	}
	return 0, fmt.Errorf("transformer: unknown ablation mode %q%s (modes: %s)", s, opterr.DidYouMean(s, AblationModes, "", true), strings.Join(AblationModes, ", "))
}

// PatternKind is the family of an exact attention pattern.
type PatternKind uint8

// The pattern families.
const (
	// PatternOffset: query t puts weight 1 on key t−N (key 0 when t < N);
	// N = 1 is a previous-symbol head, N = 0 attends to itself.
	PatternOffset PatternKind = iota + 1
	// PatternSuffix: query t attends uniformly to the keys j < t that
	// follow an occurrence of its length-N suffix, x_{j−N..j−1} =
	// x_{t−N+1..t} (attnmap.SuffixMatches at offset 1: key j holds the
	// symbol that followed the suffix there). Where nothing matches
	// (t < N, or a suffix not seen before) it attends uniformly to every key
	// 0..t, as a softmax head whose scores do not distinguish the keys does.
	PatternSuffix
)

// PatternKinds are the families' names, in order.
var PatternKinds = []string{"offset", "suffix"}

// Pattern is an exact attention pattern: Kind with its parameter N (the
// offset d, or the suffix length k).
type Pattern struct {
	Kind PatternKind
	N    int
}

// String is "offset:d" or "suffix:k".
func (p Pattern) String() string {
	if p.Kind >= PatternOffset && int(p.Kind) <= len(PatternKinds) {
		return fmt.Sprintf("%s:%d", PatternKinds[p.Kind-1], p.N)
	}
	return fmt.Sprintf("Pattern(%d):%d", uint8(p.Kind), p.N)
}

// ParsePattern parses "offset:d" (d ≥ 0) or "suffix:k" (k ≥ 1).
func ParsePattern(s string) (Pattern, error) {
	kind, n, ok := strings.Cut(strings.TrimSpace(s), ":")
	var p Pattern
	for i, name := range PatternKinds {
		if strings.EqualFold(kind, name) {
			p.Kind = PatternKind(i + 1)
		}
	}
	if p.Kind == 0 || !ok {
		return p, fmt.Errorf("transformer: pattern %q is not offset:d or suffix:k%s", s, opterr.DidYouMean(strings.ToLower(kind), PatternKinds, "", true))
	}
	v, err := strconv.Atoi(n)
	if err != nil || v < 0 || (p.Kind == PatternSuffix && v < 1) {
		return p, fmt.Errorf("transformer: pattern %q: %s needs an integer %s", s, PatternKinds[p.Kind-1], map[PatternKind]string{PatternOffset: "d ≥ 0", PatternSuffix: "k ≥ 1"}[p.Kind])
	}
	p.N = v
	return p, nil
}

// HeadPattern replaces Head's attention weights by Pattern.
type HeadPattern struct {
	Head    Head
	Pattern Pattern
}

// ParsePatterns parses HEAD=PATTERN pairs joined by '+', e.g.
// "L1H1=offset:1+L2H3=suffix:2" (ParseHead, ParsePattern).
func ParsePatterns(s string) ([]HeadPattern, error) {
	var ps []HeadPattern
	for _, part := range strings.Split(s, "+") {
		hs, pat, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("transformer: %q is not HEAD=offset:d or HEAD=suffix:k", part)
		}
		h, err := ParseHead(hs)
		if err != nil {
			return nil, err
		}
		p, err := ParsePattern(pat)
		if err != nil {
			return nil, err
		}
		ps = append(ps, HeadPattern{h, p})
	}
	return ps, nil
}

// Intervention changes some heads of a model's forward pass; the rest of
// the pass is the intact one. An ablated head's output is replaced (Mode);
// a patterned head's output is Σ_j w_tj·v_j with its own values v_j and the
// pattern's weights w in place of its softmax. A head may appear once.
//
// The reference windows of AblateMean and AblateResample are a fixed set
// chosen by the caller (methods draws them from the data's prior with a
// seed), not the evaluated windows, so that an intervened model is a
// predictor like any other: its prediction for a window depends on that
// window only, the same through PredictSequence, PredictBatch and a
// State, whatever the batching. Their values are the intact model's head
// outputs on the first N symbols of each reference window.
type Intervention struct {
	// Ablate are the ablated heads and Mode how.
	Ablate []Head
	Mode   Ablation
	// Patterns are the patterned heads.
	Patterns []HeadPattern
	// References are the reference windows (mean and resample modes),
	// each of at least N symbols.
	References [][]byte
	// Outputs, when not nil, are the model's head outputs on reference
	// windows already computed (Model.HeadOutputs), read instead of a
	// reference pass over References (which may then be nil).
	Outputs *HeadOutputs
	// Seed seeds resample's choice of reference window.
	Seed uint64
}

// String is e.g. "ablate=L1H2+L1H3:mode=mean:pattern=L2H1=suffix:2", the
// form method specifications take.
func (iv Intervention) String() string {
	var parts []string
	if len(iv.Ablate) > 0 {
		hs := make([]string, len(iv.Ablate))
		for i, h := range iv.Ablate {
			hs[i] = h.String()
		}
		parts = append(parts, "ablate="+strings.Join(hs, "+"), "mode="+iv.Mode.String())
	}
	if len(iv.Patterns) > 0 {
		ps := make([]string, len(iv.Patterns))
		for i, p := range iv.Patterns {
			ps[i] = p.Head.String() + "=" + p.Pattern.String()
		}
		parts = append(parts, "pattern="+strings.Join(ps, "+"))
	}
	return strings.Join(parts, ":")
}

// NeedsReferences reports whether iv reads reference windows: it
// ablates heads with AblateMean or AblateResample.
func (iv Intervention) NeedsReferences() bool {
	return len(iv.Ablate) > 0 && (iv.Mode == AblateMean || iv.Mode == AblateResample)
}

// Check reports the first problem of iv for a model of c: those of
// CheckHeads, or missing or short reference windows or symbols outside
// the alphabet.
func (iv Intervention) Check(c Config) error {
	if err := iv.CheckHeads(c); err != nil {
		return err
	}
	if !iv.NeedsReferences() || iv.Outputs != nil {
		return nil
	}
	if len(iv.References) == 0 {
		return fmt.Errorf("transformer: ablation mode %v needs reference windows", iv.Mode)
	}
	for i, r := range iv.References {
		if len(r) < c.Context {
			return fmt.Errorf("transformer: reference window %d has %d symbols, the context N=%d", i, len(r), c.Context)
		}
		for j, s := range r[:c.Context] {
			if int(s) >= c.Alphabet {
				return fmt.Errorf("transformer: reference window %d: symbol %d at position %d is outside the alphabet 0..%d", i, s, j, c.Alphabet-1)
			}
		}
	}
	return nil
}

// CheckHeads reports the first problem of iv's heads for a model of c,
// whatever its reference windows: nothing to do, a head that does not
// exist or appears twice, a missing or unknown mode, or a pattern outside
// the context.
func (iv Intervention) CheckHeads(c Config) error {
	if len(iv.Ablate) == 0 && len(iv.Patterns) == 0 {
		return errors.New("transformer: an intervention with no head")
	}
	seen := map[Head]bool{}
	heads := append([]Head(nil), iv.Ablate...)
	for _, p := range iv.Patterns {
		heads = append(heads, p.Head)
	}
	for _, h := range heads {
		if err := c.CheckHead(h); err != nil {
			return err
		}
		if seen[h] {
			return fmt.Errorf("transformer: head %s is intervened on twice", h)
		}
		seen[h] = true
	}
	if len(iv.Ablate) > 0 && (iv.Mode < AblateZero || int(iv.Mode) > len(AblationModes)) {
		return fmt.Errorf("transformer: ablation mode %v (modes: %s)", iv.Mode, strings.Join(AblationModes, ", "))
	}
	for _, p := range iv.Patterns {
		if p.Pattern.Kind < PatternOffset || int(p.Pattern.Kind) > len(PatternKinds) {
			return fmt.Errorf("transformer: head %s: unknown pattern %v", p.Head, p.Pattern)
		}
		if lo := map[PatternKind]int{PatternOffset: 0, PatternSuffix: 1}[p.Pattern.Kind]; p.Pattern.N < lo || p.Pattern.N >= c.Context {
			return fmt.Errorf("transformer: head %s: pattern %v outside %d..%d (the context is N=%d)", p.Head, p.Pattern, lo, c.Context-1, c.Context)
		}
	}
	return nil
}
