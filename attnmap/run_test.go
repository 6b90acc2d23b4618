package attnmap

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// runFixture writes a freshly initialised tiny model (2 layers, heads 2
// and 1, context 48, alphabet 3) to DIR/model, a symbol file of 100
// symbols to DIR/seq.txt and a data set of 64-symbol windows to DIR/data;
// it returns DIR.
func runFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := transformer.Config{Layers: 2, Heads: []int{2, 1}, Embed: 16, Context: 48, Alphabet: 3,
		FeedForward: true, LayerNorm: true, Activation: transformer.GELU, Positional: transformer.Learned}
	m, err := transformer.NewOn(cpu.NewDefault(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "model"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.SaveSafetensors(filepath.Join(dir, "model", modelFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "seq.txt"), []byte(strings.Repeat("abcab", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(2), K: 4, NK: 64, N: 64, Fresh: true, Seed: 3}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Write(filepath.Join(dir, "data"), false); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fileOptions are valid options of Run on DIR/seq.txt from symbol 10.
func fileOptions(dir, out string) RunOptions {
	return RunOptions{Backend: cpu.NewDefault(), Model: filepath.Join(dir, "model"), File: filepath.Join(dir, "seq.txt"), Mode: "text", Start: 10,
		Out: filepath.Join(dir, out), K: 3, Offset: -1, Windows: 16, Seed: 1, D: -1, Gamma: 0.5, ProfileWindows: 256}
}

func TestRunOptionErrors(t *testing.T) {
	dir := runFixture(t)
	data := filepath.Join(dir, "data")
	for _, c := range []struct {
		name string
		edit func(o *RunOptions)
		flag string // the error's Flag("--")
	}{
		{"no model", func(o *RunOptions) { o.Model = "" }, "--model and --out are required"},
		{"data and file", func(o *RunOptions) { o.Data = data }, "give exactly one of --data and --file"},
		{"neither", func(o *RunOptions) { o.File = "" }, "give exactly one of --data and --file"},
		{"start with data", func(o *RunOptions) { o.File, o.Data = "", data }, "--start is for --file (use --window with --data)"},
		{"k", func(o *RunOptions) { o.K = -1 }, "--k -1: want ≥ 0"},
		{"offset", func(o *RunOptions) { o.Offset = 2 }, "--offset 2: want 0, 1 or -1 (auto)"},
		{"windows", func(o *RunOptions) { o.Windows = 0 }, "--windows 0, --perms 0: want ≥ 1 and ≥ 0"},
		{"perms", func(o *RunOptions) { o.Perms = -1 }, "--windows 16, --perms -1: want ≥ 1 and ≥ 0"},
		{"profile windows", func(o *RunOptions) { o.ProfileWindows = 0 }, "--profile-windows 0: want ≥ 1"},
		{"profile name", func(o *RunOptions) { o.Profile = "p.txt" }, "--profile p.txt: want a .csv file name"},
		{"gamma 0", func(o *RunOptions) { o.Gamma = 0 }, "--gamma 0: want a finite number > 0"},
		{"gamma inf", func(o *RunOptions) { o.Gamma = math.Inf(1) }, "--gamma +Inf: want a finite number > 0"},
		{"mode", func(o *RunOptions) { o.Mode = "bits" }, `symbols: unknown file mode "bits" (want text or raw)`},
		{"start", func(o *RunOptions) { o.Start = 100 }, "--start 100 outside 0..99 (the file's length)"},
		{"window", func(o *RunOptions) { o.File, o.Start, o.Data, o.Window = "", 0, data, 4 }, "--window 4 outside 0..3"},
		{"query range", func(o *RunOptions) { o.Queries = "20,48" }, `--queries: "48" is not a position 0..47 of the window`},
		{"query text", func(o *RunOptions) { o.Queries = "1, x" }, `--queries: " x" is not a position 0..47 of the window`},
		{"head syntax", func(o *RunOptions) { o.Head = "2" }, `--head "2": want LAYER.HEAD, e.g. 2.1`},
		{"head layer 0", func(o *RunOptions) { o.Head = "0.1" }, `--head "0.1": want LAYER.HEAD, e.g. 2.1`},
		{"no such head", func(o *RunOptions) { o.Head = "3.1" }, "--head 3.1: the model has no layer 3 head 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := fileOptions(dir, "bad")
			c.edit(&o)
			_, err := Run(o)
			var oe *OptionError
			switch {
			case !errors.As(err, &oe):
				t.Fatalf("error %v (%T): want *OptionError", err, err)
			case oe.Flag("--") != c.flag:
				t.Errorf("Flag(\"--\") = %q, want %q", oe.Flag("--"), c.flag)
			case strings.Contains(err.Error(), "--") || !strings.HasPrefix(err.Error(), "attnmap: "):
				t.Errorf("error %q names a flag", err)
			}
			if _, err := os.Stat(o.Out); err == nil {
				t.Errorf("%s written despite the error", o.Out)
			}
		})
	}
}

func TestRunFile(t *testing.T) {
	dir := runFixture(t)
	o := fileOptions(dir, "a")
	o.Head, o.Offset = "2.1", 0
	r, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	rep := r.Report
	// one window of 48 symbols from 10 (the next, from 58, would end past 100)
	if rep.T != 48 || rep.Start != 10 || rep.Window != -1 || rep.D != 3 || rep.MaxK != 4 || !reflect.DeepEqual(rep.Windows, []int{10}) ||
		rep.Figure.Layer != 2 || rep.Figure.Head != 1 || rep.Figure.Offset != 0 || rep.Figure.K != 3 || len(rep.Heads) != 3 {
		t.Fatalf("report: T=%d start %d window %d D=%d maxK %d windows %v, %d heads, figure %+v",
			rep.T, rep.Start, rep.Window, rep.D, rep.MaxK, rep.Windows, len(rep.Heads), rep.Figure)
	}
	if q := rep.Figure.Queries; len(q) != 2 || q[0].Position != 34 || q[1].Position != 46 { // DefaultQueries(48)
		t.Errorf("queries %+v", q)
	}
	b, err := os.ReadFile(filepath.Join(o.Out, ScoresJSON))
	if err != nil {
		t.Fatal(err)
	}
	var got Report
	if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got.Windows, rep.Windows) || got.T != rep.T || len(got.Heads) != 3 {
		t.Errorf("%s: %+v (%v)", ScoresJSON, got, err)
	}
	for _, name := range OutFiles {
		if _, err := os.Stat(filepath.Join(o.Out, name)); err != nil {
			t.Error(err)
		}
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	// the header, a blank line, the column heads, 3 heads, a blank line, the
	// legend, a blank line, the suffix_match line, the files
	if len(lines) != 11 || !strings.HasPrefix(lines[0], rep.Model+", 1 windows of T=48 from ") || !strings.HasPrefix(lines[3], "1.1   ") ||
		!strings.HasPrefix(lines[9], "suffix_match: layer 2 head 1, k=3 offset 0: ") || lines[10] != "wrote "+o.Out+"/{heatmaps.png,heatmaps.svg,suffix_match.png,suffix_match.svg,scores.json}" {
		t.Errorf("text:\n%s", text.String())
	}
	if _, err := Run(o); !errors.Is(err, fsutil.ErrExists) {
		t.Errorf("existing figures without Force: %v", err)
	}
	o.Force = true
	if _, err := Run(o); err != nil {
		t.Errorf("with Force: %v", err)
	}
}

func TestRunData(t *testing.T) {
	dir := runFixture(t)
	o := fileOptions(dir, "d")
	o.File, o.Start, o.Data, o.Window, o.Windows, o.Queries, o.K = "", 0, filepath.Join(dir, "data"), 2, 3, "20, 47", 2
	o.Profile, o.ProfileWindows = filepath.Join(dir, "prof.csv"), 5
	r, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	rep := r.Report
	// 3 windows from 2, wrapping over the data set's 4; D = 2 (the prior's)
	if rep.T != 48 || rep.D != 2 || rep.MaxK != 3 || rep.Window != 2 || !reflect.DeepEqual(rep.Windows, []int{2, 3, 0}) || rep.Source != o.Data {
		t.Fatalf("report: T=%d D=%d maxK=%d window %d windows %v source %s", rep.T, rep.D, rep.MaxK, rep.Window, rep.Windows, rep.Source)
	}
	if q := rep.Figure.Queries; rep.Figure.K != 2 || len(q) != 2 || q[0].Position != 20 || q[1].Position != 47 {
		t.Errorf("figure %+v", rep.Figure)
	}
	// the profile averages min(5, 4) windows
	if r.ProfileWindows != 4 || r.Profile != o.Profile || r.ProfileFigure != filepath.Join(dir, "prof.png") || r.Study.Profile == nil {
		t.Errorf("profile: %d windows, %s, %s", r.ProfileWindows, r.Profile, r.ProfileFigure)
	}
	pb, err := os.ReadFile(o.Profile)
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Split(strings.TrimSpace(string(pb)), "\n"); len(rows) != 1+3*48 {
		t.Errorf("profile CSV: %d rows", len(rows))
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := "wrote " + o.Profile; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
}

func TestParseQueriesHead(t *testing.T) {
	for _, c := range []struct {
		s    string
		want []int
		ok   bool
	}{
		{"", []int{34, 46}, true}, {"0", []int{0}, true}, {"3, 47", []int{3, 47}, true},
		{"-1", nil, false}, {"48", nil, false}, {"1,,2", nil, false}, {"a", nil, false},
	} {
		qs, err := parseQueries(c.s, 48)
		if (err == nil) != c.ok || c.ok && !reflect.DeepEqual(qs, c.want) {
			t.Errorf("parseQueries(%q) = %v, %v", c.s, qs, err)
		}
	}
	for _, c := range []struct {
		s           string
		layer, head int
		ok          bool
	}{
		{"", 0, 0, true}, {"2.1", 2, 1, true}, {"10.3", 10, 3, true},
		{"2", 0, 0, false}, {"0.1", 0, 0, false}, {"a.1", 0, 0, false}, {"1.b", 0, 0, false},
	} {
		l, h, err := parseHead(c.s)
		if (err == nil) != c.ok || l != c.layer || h != c.head {
			t.Errorf("parseHead(%q) = %d, %d, %v", c.s, l, h, err)
		}
	}
}
