package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestAttention runs 'vomc attention' end to end on a freshly initialised
// tiny model, on a data set window and on a file.
func TestAttention(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	cfg := transformer.Config{Layers: 2, Heads: []int{2, 1}, Embed: 16, Context: 48, Alphabet: 3,
		FeedForward: true, LayerNorm: true, Activation: transformer.GELU, Positional: transformer.Learned}
	m, err := transformer.NewOn(cpu.NewDefault(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p("model"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.SaveSafetensors(p("model/model.safetensors")); err != nil {
		t.Fatal(err)
	}
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "4", "-N", "64", "--seed", "3", "--out", p("test"))

	runOK(t, "attention", "--model", p("model"), "--data", p("test"), "--window", "2", "--out", p("a"), "--queries", "20,47", "--k", "2")
	exists(t, p("a/heatmaps.png"), p("a/heatmaps.svg"), p("a/suffix_match.png"), p("a/suffix_match.svg"), p("a/scores.json"))
	b, err := os.ReadFile(p("a/scores.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep attnReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	// T = the model's N (the data set's windows are longer); D = 2
	if rep.T != 48 || rep.D != 2 || rep.MaxK != 3 || rep.Window != 2 || len(rep.Heads) != 3 {
		t.Fatalf("report: T=%d D=%d maxK=%d window %d, %d heads", rep.T, rep.D, rep.MaxK, rep.Window, len(rep.Heads))
	}
	f := rep.Figure
	if f.K != 2 || len(f.Queries) != 2 || f.Queries[0].Position != 20 || f.Queries[1].Position != 47 {
		t.Fatalf("figure: %+v", f)
	}
	for _, h := range rep.Heads {
		if h.Label == "" || len(h.Relative) != 4 || len(h.Suffix) != 8 {
			t.Errorf("head %d.%d: label %q, %d relative, %d suffix scores", h.Layer, h.Head, h.Label, len(h.Relative), len(h.Suffix))
		}
	}

	// --profile: one CSV row per head and query position of the model's N
	runOK(t, "attention", "--model", p("model"), "--data", p("test"), "--out", p("pa"), "--profile", p("prof.csv"), "--profile-windows", "3")
	pb, err := os.ReadFile(p("prof.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(pb)), "\n")
	if len(rows) != 1+3*48 || !strings.HasPrefix(rows[0], "layer,head,position,rel_0,") {
		t.Fatalf("profile CSV: %d rows, header %q", len(rows), rows[0])
	}
	// position 10 of layer 1 head 1: all 3 windows have k=0 matches
	if f := strings.Split(rows[11], ","); len(f) != 23 || f[2] != "10" || f[15] != "3" {
		t.Errorf("profile row %q: want position 10 with matched_0 = 3", rows[11])
	}
	runFail(t, "attention", "--model", p("model"), "--data", p("test"), "--out", p("pb"), "--profile", p("prof.csv")) // exists
	runFail(t, "attention", "--model", p("model"), "--data", p("test"), "--out", p("pc"), "--profile", p("p2.csv"), "--profile-windows", "0")
	runFail(t, "attention", "--model", p("model"), "--data", p("test"), "--out", p("pd"), "--profile", p("p3.txt"))

	// existing outputs need --force; a file input with a chosen head
	runFail(t, "attention", "--model", p("model"), "--data", p("test"), "--out", p("a"))
	if err := os.WriteFile(p("seq.txt"), []byte(strings.Repeat("abcab", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	runOK(t, "attention", "--model", p("model/model.safetensors"), "--file", p("seq.txt"), "--start", "10", "--out", p("a"),
		"--head", "2.1", "--offset", "0", "--force")
	b, _ = os.ReadFile(p("a/scores.json"))
	rep = attnReport{}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.T != 48 || rep.Start != 10 || rep.Window != -1 || rep.Figure.Layer != 2 || rep.Figure.Head != 1 || rep.Figure.Offset != 0 ||
		rep.Figure.K != 3 || len(rep.Figure.Queries) != 2 || rep.Figure.Queries[0].Position != 34 || rep.Figure.Queries[1].Position != 46 {
		t.Fatalf("file report: T=%d start %d window %d figure %+v", rep.T, rep.Start, rep.Window, rep.Figure)
	}

	// usage errors
	for _, args := range [][]string{
		{"--data", p("test"), "--out", p("b")},   // no model
		{"--model", p("model"), "--out", p("b")}, // no input
		{"--model", p("model"), "--data", p("test"), "--file", p("seq.txt"), "--out", p("b")},
		{"--model", p("model"), "--data", p("test"), "--out", p("b"), "--queries", "48"},
		{"--model", p("model"), "--data", p("test"), "--out", p("b"), "--window", "99"},
		{"--model", p("model"), "--data", p("test"), "--out", p("b"), "--head", "3.1"},
		{"--model", p("model"), "--data", p("test"), "--out", p("b"), "--offset", "2"},
	} {
		runFail(t, append([]string{"attention"}, args...)...)
	}
}
