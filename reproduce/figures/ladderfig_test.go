package figures

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// ladderResult is a constructed evaluation of the ladder preset's models:
// the excess over Bayes of every model and seed from excess (by label
// without the seed; seed 1 adds seedShift), CTW and Markov(4) beside.
func ladderResult(cfg study.Config, excess map[string]float64, seedShift float64) *eval.Result {
	res := &eval.Result{Methods: []eval.MethodResult{{Name: "Bayes(D=1..5)"}}}
	add := func(name string, ex float64) {
		m := eval.MethodResult{Name: name}
		m.ExcessSecondHalf.Mean = ex
		res.Methods = append(res.Methods, m)
	}
	add("CTW(D=5)", 0.0093)
	add("Markov(k=4,α=0.5)", 0.0529)
	for _, s := range cfg.Fig3Models {
		m, err := study.ParseModel(s)
		if err != nil {
			continue
		}
		ex, ok := excess[results.RepLabel(m, 0)]
		if !ok {
			continue
		}
		for r := range cfg.SeedsOf(m) {
			add(results.RepLabel(m, r), ex+float64(r)*seedShift)
		}
	}
	return res
}

// TestLadderFits: the figure's extrapolations are the floorless and the
// floor laws of the two-layer learned-position family, through its seed
// means, from its smallest budget to 4× its largest; the figure is drawn
// with them and its axis marks the doublings they reach.
func TestLadderFits(t *testing.T) {
	cfg, err := study.Preset("ladder")
	if err != nil {
		t.Fatal(err)
	}
	ex := map[string]float64{"TF(4,4)": 0.1546, "TF(4,4) ×2 steps": 0.0482, "TF(4,4) ×4 steps": 0.0220,
		"TF(4,4) sin ×4 steps": 0.0182, "TF(4,4,4) ×4 steps": 0.0217}
	res := ladderResult(cfg, ex, 0.001)
	fams := ladderFamilies(cfg)
	fits := ladderFits(cfg, fams, res)
	if len(fits) != 3 {
		t.Fatalf("%d fitted curves, want 3: %+v", len(fits), fits)
	}
	x1 := cfg.TrainTokens()
	// the last local slope goes through the ×2 and ×4 seed means
	for i, want := range []float64{0.0487, 0.0225} {
		if got := fits[2].law.At(x1 * math.Pow(2, float64(i+1))); math.Abs(got-want) > 1e-9 {
			t.Errorf("local slope at ×%d: %.6f, want %.4f", 2<<i, got, want)
		}
	}
	if fits[0].from != x1 || fits[0].to != 16*x1 {
		t.Errorf("range %g..%g, want %g..%g", fits[0].from, fits[0].to, x1, 16*x1)
	}
	if !strings.Contains(fits[0].label, "TF(4,4): power law") || !strings.Contains(fits[1].label, "TF(4,4): floor c = 0.01") {
		t.Errorf("labels %q, %q", fits[0].label, fits[1].label)
	}
	// the floor law goes through the seed means (0.1551, 0.0487, 0.0225)
	for i, want := range []float64{0.1551, 0.0487, 0.0225} {
		if got := fits[1].law.At(x1 * math.Pow(2, float64(i))); math.Abs(got-want) > 1e-9 {
			t.Errorf("floor law at ×%d: %.6f, want %.4f", 1<<i, got, want)
		}
	}
	pts := fits[0].points(0.0093)
	if first := pts[0]; first.X != x1 || math.Abs(first.Y-(fits[0].law.At(x1)-0.0093)) > 1e-12 {
		t.Errorf("first point %+v", first)
	}
	var labels []string
	for _, tk := range ladderTicks(cfg, fams, fits) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); !strings.Contains(got, "\n(×4) (×8) (×16)") {
		t.Errorf("ticks %q", got)
	}
	dir := t.TempDir()
	if err := drawLadder(cfg, res, dir); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, LadderFile)); err != nil || st.Size() == 0 {
		t.Errorf("%s: %v", LadderFile, err)
	}
	// with the ×8 rung (and sinusoidal models at ×1–×4 and ×8): the laws
	// still read ×1–×4 and predict the rung, the sin family's power law
	// beside them
	rc := cfg
	rc.Fig3Models = append(append([]string{}, cfg.Fig3Models...), "4,4-x8", "4,4-sin-x8")
	rex := map[string]float64{"TF(4,4) ×8 steps": 0.005, "TF(4,4) sin ×8 steps": 0.013}
	for k, v := range ex {
		rex[k] = v
	}
	// seed 0's sinusoidal excesses (seed 1 adds 0.001: the mean's law differs)
	rex["TF(4,4) sin"], rex["TF(4,4) sin ×2 steps"], rex["TF(4,4) sin ×4 steps"] = 0.034776, 0.024557, 0.018188
	rfits := ladderFits(rc, ladderFamilies(rc), ladderResult(rc, rex, 0.001))
	if len(rfits) != 4 {
		t.Fatalf("%d fitted curves with the rung, want 4: %+v", len(rfits), rfits)
	}
	for i := range fits {
		if rfits[i].law != fits[i].law || !strings.HasSuffix(rfits[i].label, []string{"(post hoc)", "(F)", "(L)"}[i]) { // the floorless law was not a prediction
			t.Errorf("curve %d with the rung: %+v, without %+v", i, rfits[i], fits[i])
		}
	}
	// K is the rule's (study.Config.LadderRule), not any three-layer model's
	// largest budget: a TF(2,2,2) at ×8 leaves the laws reading ×1–×4
	oc := rc
	oc.Fig3Models = append(append([]string{}, rc.Fig3Models...), "2,2,2-x8")
	rex["TF(2,2,2) ×8 steps"] = 0.03
	ofits := ladderFits(oc, ladderFamilies(oc), ladderResult(oc, rex, 0.001))
	if len(ofits) != len(rfits) {
		t.Fatalf("%d fitted curves with a TF(2,2,2) ×8, want %d", len(ofits), len(rfits))
	}
	for i := range rfits {
		if ofits[i].law != rfits[i].law || ofits[i].label != rfits[i].label {
			t.Errorf("curve %d with a TF(2,2,2) ×8: %+v, want %+v", i, ofits[i], rfits[i])
		}
	}
	if rfits[3].label != "TF(4,4) sin: power law, ×1–×4, seed 0 (P)" || rfits[3].to != 16*x1 || math.Abs(rfits[3].law.At(8*x1)-0.0130) > 5e-5 {
		t.Errorf("sin curve %+v: at ×8 %.5f, want the registered P = 0.0130 (seed 0's law)", rfits[3], rfits[3].law.At(8*x1))
	}
	// a budget between K and the rung 2K is an input, as in the report's
	// rule (its budgets below the rung): a TF(4,4)-sin at ×6 moves the sin
	// law to ×1–×6; a TF(4,4)-sin at ×16 (above the rung) does not
	for _, c := range []struct {
		model   string
		excess  float64
		through string
	}{{"4,4-sin-x6", 0.0150, "×1–×6"}, {"4,4-sin-x16", 0.0090, "×1–×4"}} {
		sc := rc
		sc.Fig3Models = append(append([]string{}, rc.Fig3Models...), c.model)
		sex := map[string]float64{}
		for k, v := range rex {
			sex[k] = v
		}
		m, err := study.ParseModel(c.model)
		if err != nil {
			t.Fatal(err)
		}
		sex[m.Label()] = c.excess
		sf := ladderFits(sc, ladderFamilies(sc), ladderResult(sc, sex, 0.001))
		want := "TF(4,4) sin: power law, " + c.through + ", seed 0 (P)"
		if len(sf) != 4 || sf[3].label != want {
			t.Errorf("with %s: %d curves, sin curve %+v, want %q", c.model, len(sf), sf[len(sf)-1], want)
		}
	}
	// without a rung the laws are post hoc; the last slope starts at ×2
	if !strings.HasSuffix(fits[1].label, "(post hoc)") || !strings.HasSuffix(fits[2].label, "(post hoc)") || fits[2].from != 2*x1 {
		t.Errorf("without a rung: %q, %q from %g", fits[1].label, fits[2].label, fits[2].from)
	}
	// without a three-layer model the laws read every budget
	nc := rc
	nc.Fig3Models = []string{"4,4", "4,4-x2", "4,4-x4", "4,4-x8"}
	if nf := ladderFits(nc, ladderFamilies(nc), ladderResult(nc, rex, 0.001)); len(nf) != 3 || nf[0].to != 32*x1 || !strings.Contains(nf[1].label, "×1–×8 (post hoc)") {
		t.Errorf("no three-layer model: %+v", nf)
	}
	if err := drawLadder(rc, ladderResult(rc, rex, 0.001), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// one budget only: nothing to fit
	if f := ladderFits(cfg, fams, ladderResult(cfg, map[string]float64{"TF(4,4) ×4 steps": 0.02}, 0)); f != nil {
		t.Errorf("fits from one budget: %+v", f)
	}
}
