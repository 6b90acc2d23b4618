package methods

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
)

// Parameter defaults of an intervention.
const (
	// DefaultRefs is the number of reference windows of mean and
	// resample ablation.
	DefaultRefs = 256
	// DefaultInterveneSeed seeds the reference windows and resample's
	// choices.
	DefaultInterveneSeed = 1
	// RefsTest (refs=test) takes the evaluated windows as the reference
	// windows.
	RefsTest = "test"
)

// headsValue accepts heads joined by '+', each L<layer>H<head>
// (1-based; transformer.ParseHeads), canonical in upper case.
func headsValue(v string) (string, error) {
	hs, err := transformer.ParseHeads(v)
	if err != nil {
		return "", fmt.Errorf("is not heads L<layer>H<head> joined by '+' (1-based, e.g. L1H2+L1H3): %v", err)
	}
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return strings.Join(out, "+"), nil
}

// patternValue accepts HEAD=PATTERN pairs joined by '+', PATTERN offset:d
// or suffix:k (transformer.ParsePatterns), canonical as their String.
func patternValue(v string) (string, error) {
	ps, err := transformer.ParsePatterns(v)
	if err != nil {
		return "", fmt.Errorf("is not HEAD=offset:d or HEAD=suffix:k pairs joined by '+': %v", err)
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Head.String() + "=" + p.Pattern.String()
	}
	return strings.Join(out, "+"), nil
}

// checkTF checks, before any work, what a tf spec's intervention asks of
// its model: the heads it names exist (read from the model file's header).
func checkTF(s Spec) error {
	if !intervened(s) {
		return nil
	}
	path, _ := s.Value("path")
	cfg, err := transformer.ReadModelConfig(modelFile(path))
	if err != nil {
		return nil // Build reports why the model cannot be read
	}
	_, err = interventionOf(s, cfg)
	return err
}

// modelFile is the model file of a tf path: DIR/model.safetensors, or
// the path itself when it is a file.
func modelFile(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return filepath.Join(path, "model.safetensors")
	}
	return path
}

// interventionLabel is iv in the form of s's parameters, with refs and
// seed when s gives them, so that two specs differing in those have
// different names.
func interventionLabel(s Spec, iv transformer.Intervention) string {
	l := iv.String()
	for _, p := range []string{"refs", "seed"} {
		if v, ok := s.Value(p); ok {
			l += ":" + p + "=" + v
		}
	}
	return l
}

// namedIntervened is an intervened transformer under its name.
type namedIntervened struct {
	*transformer.Intervened
	name string
}

// Name is the label given to the model.
func (n namedIntervened) Name() string { return n.name }

// intervened reports whether s gives a parameter of an intervention.
func intervened(s Spec) bool {
	for _, p := range []string{"ablate", "mode", "pattern", "refs", "seed"} {
		if _, ok := s.Value(p); ok {
			return true
		}
	}
	return false
}

// modeValue accepts an ablation mode (transformer.ParseAblation).
func modeValue(v string) (string, error) {
	a, err := transformer.ParseAblation(v)
	if err != nil {
		return "", fmt.Errorf("is not one of %s%s", strings.Join(transformer.AblationModes, ", "), opterr.DidYouMean(v, transformer.AblationModes, "", true))
	}
	return a.String(), nil
}

// interventionOf is the intervention that s asks of a model of c, its
// reference windows not yet drawn: every head checked against c (an
// unknown one with the nearest head c has, and the heads c has).
func interventionOf(s Spec, c transformer.Config) (transformer.Intervention, error) {
	var iv transformer.Intervention
	if v, ok := s.Value("ablate"); ok {
		iv.Ablate, _ = transformer.ParseHeads(v) // checked by ParseSpec
		iv.Mode = transformer.AblateZero
		if m, ok := s.Value("mode"); ok {
			iv.Mode, _ = transformer.ParseAblation(m) // checked by ParseSpec
		}
	} else if _, ok := s.Value("mode"); ok {
		return iv, fmt.Errorf("methods: %q: mode without ablate=HEADS", s.Text())
	}
	if v, ok := s.Value("pattern"); ok {
		iv.Patterns, _ = transformer.ParsePatterns(v) // checked by ParseSpec
	}
	if !iv.NeedsReferences() {
		for _, p := range []string{"refs", "seed"} {
			if _, ok := s.Value(p); ok {
				return iv, fmt.Errorf("methods: %q: %s is for ablate=HEADS with mode=mean or mode=resample", s.Text(), p)
			}
		}
	}
	if err := iv.CheckHeads(c); err != nil {
		return iv, fmt.Errorf("methods: %q: %w (the model's heads: %s)", s.Text(), err, headRange(c))
	}
	return iv, nil
}

// headRange describes c's heads for an error: "L1H1..L1H4, L2H1..L2H4".
func headRange(c transformer.Config) string {
	parts := make([]string, len(c.Heads))
	for l, n := range c.Heads {
		parts[l] = fmt.Sprintf("L%dH1..L%dH%d", l+1, l+1, n)
	}
	return strings.Join(parts, ", ")
}

// referenceSet is the reference windows that refs names: the evaluated
// windows (refs=test: d.Windows, each of at least N symbols), or that many
// windows of N symbols drawn from d.Prior with seed.
func referenceSet(refs string, seed uint64, N int, d Defaults) ([][]byte, error) {
	if refs == RefsTest {
		if len(d.Windows) == 0 {
			return nil, fmt.Errorf("refs=test takes the evaluated windows, which this caller does not give")
		}
		for i, w := range d.Windows {
			if len(w) < N {
				return nil, fmt.Errorf("refs=test: evaluated window %d has %d symbols, fewer than the model's context N=%d", i, len(w), N)
			}
		}
		return d.Windows, nil
	}
	if d.Prior == nil {
		return nil, fmt.Errorf("the reference windows are drawn from the data's prior, read from a vomc data set's manifest (this data has none): use refs=test, or mode=zero")
	}
	n, _ := strconv.Atoi(refs) // checked by ParseSpec
	w, err := ReferenceWindows(*d.Prior, n, N, seed)
	if err != nil {
		return nil, fmt.Errorf("reference windows: %w", err)
	}
	return w, nil
}

// refsValue accepts an integer ≥ 1 or test.
func refsValue(v string) (string, error) {
	if strings.EqualFold(v, RefsTest) {
		return RefsTest, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return "", fmt.Errorf("is not a number of windows ≥ 1 or %s (the evaluated windows)", RefsTest)
	}
	return strconv.Itoa(n), nil
}

// ReferenceWindows draws n windows of N symbols from the prior p with
// seed: window i is generated by a tree drawn from stream 2i, its symbols
// from stream 2i+1 (source.RNG), so window i does not depend on n.
func ReferenceWindows(p source.Prior, n, N int, seed uint64) ([][]byte, error) {
	out := make([][]byte, n)
	for i := range out {
		t, err := p.Sample(source.RNG(seed, 2*uint64(i)))
		if err != nil {
			return nil, err
		}
		if out[i], err = t.Generate(source.RNG(seed, 2*uint64(i)+1), N, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// intervene applies s's intervention to m: for mean and resample, the
// reference windows drawn from d.Prior, or the evaluated windows d.Windows
// with refs=test.
func intervene(s *args, m *transformer.Model, d Defaults) (*transformer.Intervened, error) {
	seed := uint64(s.int("seed", DefaultInterveneSeed))
	refs := s.str("refs", strconv.Itoa(DefaultRefs))
	s.str("ablate", "")
	s.str("mode", "")
	s.str("pattern", "")
	iv, err := interventionOf(s.Spec, m.Config)
	if err != nil {
		return nil, err
	}
	if iv.NeedsReferences() {
		if iv.References, err = referenceSet(refs, seed, m.Config.Context, d); err != nil {
			return nil, fmt.Errorf("methods: %q: %w", s.text, err)
		}
		iv.Seed = seed
	}
	x, err := m.Intervene(iv)
	if err != nil {
		return nil, fmt.Errorf("methods: %q: %w", s.text, err)
	}
	return x, nil
}
