package reproduce

import (
	"fmt"
	"strings"

	"github.com/vomc/vomc/eval"
)

// findFig4 is Fig. 4's finding: the attention-only and single-head
// models against the full reference transformer (fullReference).
func findFig4(cfg Config, mg *merged) Finding {
	f := Finding{Claim: "Attention-only networks (no FF layers, no LayerNorm) perform considerably worse than CTW and a full four-layer transformer; " +
		"two-layer single-head transformers TF(1,1) and three-layer single-head transformers without FF layers also perform poorly, particularly the former: " +
		"the mechanisms known for fixed-order chains do not explain in-context learning of VOMCs, and the FF layers matter.", Agrees: true}
	res := mg.Res
	ref, ok := fullReference(cfg)
	var rm *eval.MethodResult
	if ok {
		rm = res.Method(ref.Label())
	}
	if rm == nil {
		f.Found, f.Agrees = "No full transformer with at most four layers was trained, so there is no reference.", false
		return f
	}
	parts := []string{fmt.Sprintf("full %s %s", rm.Name, excessSH(rm))}
	var diffs []string
	for _, s := range cfg.Fig4Models {
		m, _ := ParseModel(s)
		r := res.Method(m.Label())
		if r == nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", r.Name, excessSH(r)))
		if !clearlyAbove(r, rm) {
			diffs = append(diffs, fmt.Sprintf("%s is not clearly worse than the full %s", r.Name, rm.Name))
		}
	}
	f.Found = "Second-half loss above CTW (nats per symbol, 95% CI): " + strings.Join(parts, "; ") + "."
	a, b := res.Method("TF(1,1)"), res.Method("TF(1,1,1) w/o FF")
	if a != nil && b != nil {
		if a.ExcessSecondHalf.Mean > b.ExcessSecondHalf.Mean {
			f.Found += " TF(1,1) is the worse of the two single-head models, as in the paper."
		} else {
			diffs = append(diffs, "TF(1,1) is not worse than TF(1,1,1) w/o FF")
		}
	}
	if len(diffs) > 0 {
		f.Agrees = false
		f.Found += " This differs from the paper: " + strings.Join(diffs, "; ") + "."
	} else {
		f.Found += " Every variant is clearly worse than the full transformer, as the paper reports."
	}
	return f
}
