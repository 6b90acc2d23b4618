package reproduce

import (
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/synth"
)

// TestSynthEncodingsGraph checks the Fig. 8 stages under several
// encodings: a model is trained once per distinct feature set (TF 2-0 under
// every encoding, the count variants under paper and linear, "w/o counts"
// once), the paper's stages keep the hashes they have without encodings,
// and bad encoding lists are refused.
func TestSynthEncodingsGraph(t *testing.T) {
	t.Parallel()
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Version: "test", CodeKey: "test"}
	g0, err := Graph(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	enc := cfg
	enc.SynthEncodings = []string{synth.Paper, synth.Log, synth.Linear}
	g1, err := Graph(enc, opts)
	if err != nil {
		t.Fatal(err)
	}
	h0 := map[string]string{}
	for _, s := range g0 {
		h0[s.Name] = s.Hash
	}
	var synthStages []string
	for _, s := range g1 {
		if strings.HasPrefix(s.Name, "synth-") {
			synthStages = append(synthStages, s.Name)
			if h, ok := h0[s.Name]; ok && h != s.Hash {
				t.Errorf("%s changed hash when encodings were added", s.Name)
			}
		}
	}
	want := []string{"synth-tf20", "synth-nocounts", "synth-totalcounts", "synth-allcounts",
		"synth-tf20-log", "synth-tf20-linear", "synth-totalcounts-linear", "synth-allcounts-linear"}
	if !slices.Equal(synthStages, want) {
		t.Errorf("synth stages %v, want %v", synthStages, want)
	}
	for _, bad := range [][]string{{"paper", "paper"}, {"cubic"}, {""}} {
		c := cfg
		c.SynthEncodings = bad
		if err := c.Validate(); err == nil {
			t.Errorf("synth_encodings %q accepted", bad)
		}
	}
	if err := enc.Validate(); err != nil {
		t.Error(err)
	}
}

// TestGapSentence checks the verdicts on "TF 2-0 ≈ TF 2-0 w/ all counts".
func TestGapSentence(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	iv := func(m, h float64) jsonInterval { return jsonInterval{Mean: f(m), Lo: f(m - h), Hi: f(m + h)} }
	cases := []struct {
		gap  jsonInterval
		want string
	}{
		{iv(0.003, 0.004), "holds (the interval contains 0)"},
		{iv(0.003, 0.001), "holds (within ±0.005 nats)"},
		{iv(-0.004, 0.0005), "holds (within ±0.005 nats)"},
		{iv(0.0044, 0.0041), "does not hold"},
		{iv(0.02, 0.006), "does not hold"},
		{jsonInterval{Mean: f(0.01)}, "cannot be decided"},
	}
	for _, c := range cases {
		s := gapSentence([]synthGap{{Encoding: "log", SecondHalf: c.gap, Window: c.gap}})
		if !strings.Contains(s, "log encoding: ") || !strings.Contains(s, c.want) {
			t.Errorf("gap %v ± : %q, want %q", *c.gap.Mean, s, c.want)
		}
	}
	multi := gapSentence([]synthGap{
		{Encoding: "paper", Replicate: 0, SecondHalf: iv(0.02, 0.005), Window: iv(0.02, 0.005)},
		{Encoding: "paper", Replicate: 1, SecondHalf: iv(0.001, 0.004), Window: iv(0.001, 0.004)},
		{Encoding: "paper", Replicate: 2, SecondHalf: iv(0.03, 0.005), Window: iv(0.03, 0.005)},
		{Encoding: "linear", Replicate: 0, SecondHalf: iv(0.002, 0.001), Window: iv(0.002, 0.001)},
	})
	for _, want := range []string{"paper encoding: seed 0 +0.0200 ± 0.0050, seed 1 +0.0010 ± 0.0040, seed 2 +0.0300 ± 0.0050; it holds in 1 of 3 seeds; across seeds +0.0170 ±",
		"linear encoding: +0.0020 ± 0.0010 (window +0.0020), holds (within ±0.005 nats)"} {
		if !strings.Contains(multi, want) {
			t.Errorf("gap sentence %q lacks %q", multi, want)
		}
	}
	if gapSentence(nil) != "" {
		t.Error("no gaps should give no sentence")
	}
}
