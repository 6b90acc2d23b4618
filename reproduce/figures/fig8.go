package figures

import (
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/synth"
)

// Fig8File is the Fig. 8 figure (written by the figures stage).
const Fig8File = "fig8_synthetic.png"

// TwoLayer is the canonical two-layer transformer of Fig. 8 ("TF 0-2"):
// the first full two-layer model of Fig3Models.
func TwoLayer(cfg study.Config) (study.Model, bool) {
	for _, s := range cfg.Fig3Models {
		if m, err := study.ParseModel(s); err == nil && len(m.Heads) == 2 && m.FF && m.LN && !m.Sin {
			return m, true
		}
	}
	return study.Model{}, false
}

// Fig8FileFor is the Fig. 8 figure of encoding enc: Fig8File for the paper's,
// "fig8_synthetic_<enc>.png" otherwise.
func Fig8FileFor(enc string) string {
	if enc == synth.Paper || enc == "" {
		return Fig8File
	}
	return "fig8_synthetic_" + enc + ".png"
}

// fig8Names are the methods drawn in Fig. 8 under encoding enc.
func fig8Names(cfg study.Config, res *eval.Result, enc string) []string {
	names := []string{res.Ref().Name}
	if m, ok := TwoLayer(cfg); ok && res.Method(m.Label()) != nil {
		names = append(names, m.Label())
	}
	for _, v := range cfg.SynthVariants {
		if p, err := synth.ParseVariant(v); err == nil {
			if l := results.SynthLabel(p, enc); res.Method(l) != nil {
				names = append(names, l)
			}
		}
	}
	return names
}
