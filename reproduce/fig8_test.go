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
	// ["paper"] is the default spelled out: the same stages and hashes.
	paper := cfg
	paper.SynthEncodings = []string{synth.Paper}
	gp, err := Graph(paper, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range gp {
		if gp[i].Name != g0[i].Name || gp[i].Hash != g0[i].Hash {
			t.Errorf("synth_encodings [paper] changes stage %s (%s vs %s)", gp[i].Name, gp[i].Hash, g0[i].Hash)
		}
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
