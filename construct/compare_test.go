package construct

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vomc/vomc/internal/fsutil"
)

func TestParseSymbols(t *testing.T) {
	for _, c := range []struct {
		s    string
		A    int
		want []byte
		ok   bool
	}{
		{"0120112", 3, []byte{0, 1, 2, 0, 1, 1, 2}, true},
		{" 0,1,12,3 ", 13, []byte{0, 1, 12, 3}, true},
		{"1 2,0", 3, []byte{1, 2, 0}, true},
		{"", 3, []byte{}, true},
		{"0193", 3, nil, false},
		{"0,13", 13, nil, false},
		{"0,-1", 3, nil, false},
		{"0,a", 3, nil, false},
	} {
		x, err := ParseSymbols(c.s, c.A)
		if (err == nil) != c.ok || c.ok && !reflect.DeepEqual(x, c.want) {
			t.Errorf("ParseSymbols(%q, %d) = %v, %v", c.s, c.A, x, err)
		}
	}
}

func TestParseTemperatureRange(t *testing.T) {
	for _, c := range []struct {
		s    string
		want float64
		ok   bool
	}{
		{"inf", 0, true}, {"INF", 0, true}, {"+Inf", 0, true}, {"∞", 0, true}, {"50", 50, true}, {"1E-3", 1e-3, true},
		{"0", 0, false}, {"-3", 0, false}, {"1e999", 0, false}, {"nan", 0, false}, {"x", 0, false}, {"", 0, false},
	} {
		if v, err := ParseTemperature(c.s); (err == nil) != c.ok || v != c.want {
			t.Errorf("ParseTemperature(%q) = %v, %v", c.s, v, err)
		}
	}
	for _, c := range []struct {
		s      string
		lo, hi float64
		ok     bool
	}{
		{"1,1000", 1, 1000, true}, {" 0.5 , 2", 0.5, 2, true},
		{"5,1", 0, 0, false}, {"0,1", 0, 0, false}, {"1,inf", 0, 0, false}, {"1", 0, 0, false}, {"1,2,3", 0, 0, false},
	} {
		if lo, hi, err := ParseRange(c.s); (err == nil) != c.ok || lo != c.lo || hi != c.hi {
			t.Errorf("ParseRange(%q) = %v, %v, %v", c.s, lo, hi, err)
		}
	}
}

// compareOptions are Compare's options for the paper's prior with D = 2
// on the input 0120112 at c = ∞.
func compareOptions() CompareOptions {
	return CompareOptions{Config: Config{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5}, Input: []byte{0, 1, 2, 0, 1, 1, 2},
		InputName: "0120112", FF: "exact", FFMaxK: 1024, CRange: "1,1000", CPoints: 25}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	o := compareOptions()
	o.Weights, o.ErrorPlot, o.CPoints = filepath.Join(dir, "w.safetensors"), filepath.Join(dir, "err.svg"), 3
	var out bytes.Buffer
	if err := Compare(&out, o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// the header, the column heads, rows j = 0..7, the maximum; the
	// weights; c = 1, 31.6, 1000 and ∞; the plot
	if len(lines) != 18 || lines[0] != "TF-construct A=3 D=2 λ=0.15 α=0.5 c=∞ N=10: 4 layers, E="+strconv.Itoa(mustBuild(t, o.Config, 10).Layout.E)+", input 0120112" ||
		!strings.HasPrefix(lines[1], "   j  P_TF(x_{j+1} | x_1^j)") || lines[12] != "error vs c (N=10):" || lines[17] != "wrote "+o.ErrorPlot {
		t.Fatalf("report:\n%s", out.String())
	}
	ref, err := CTWDist(Config{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5, N: 10}, o.Input)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 8 {
		if f := strings.Fields(lines[2+j]); len(f) != 8 || f[0] != strconv.Itoa(j) || strings.Join(f[4:7], " ") != fmtProbs(ref[j]) {
			t.Errorf("row %d: %q, CTW %v", j, lines[2+j], ref[j])
		} else if e, err := strconv.ParseFloat(f[7], 64); err != nil || e > 1e-12 {
			t.Errorf("row %d: max|diff| %s at c = ∞", j, f[7])
		}
	}
	if m := regexp.MustCompile(`^wrote (\S+) \((\d+) tensors\)$`).FindStringSubmatch(lines[11]); m == nil || m[1] != o.Weights {
		t.Errorf("weights line %q", lines[11])
	}
	if err := Compare(&out, o); !errors.Is(err, fsutil.ErrExists) {
		t.Errorf("existing weights without Force: %v", err)
	}
}

// mustBuild builds the construction of cfg with period N.
func mustBuild(t *testing.T, cfg Config, N int) *Construction {
	t.Helper()
	cfg.N = N
	c, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCompareRandomAndSoft(t *testing.T) {
	o := compareOptions()
	o.Random, o.Seed, o.C = 5, 2, 50
	var out bytes.Buffer
	if err := Compare(&out, o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+1+6+1 || !strings.HasSuffix(lines[0], "c=50 N=8: 4 layers, E="+strconv.Itoa(mustBuild(t, o.Config, 8).Layout.E)+", input random:5 (seed 2)") {
		t.Fatalf("report:\n%s", out.String())
	}
	worst, err := strconv.ParseFloat(strings.TrimPrefix(lines[8], "max |P_TF − P_CTW| over all 6 positions: "), 64)
	if err != nil || worst < 1e-6 || worst > 0.05 {
		t.Errorf("c = 50: max error %q (%v)", lines[8], err)
	}
}

func TestCompareOptionErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(o *CompareOptions)
		flag string // the error's Flag("--"); "": not checked
	}{
		{"width with exact", func(o *CompareOptions) { o.Width = 100 }, "--width is for --ff mlp"},
		{"no ff", func(o *CompareOptions) { o.FF = "" }, `--ff "": want exact or mlp`},
		{"mlp without width", func(o *CompareOptions) { o.FF = "mlp" }, "--ff mlp needs --width W > 0"},
		{"ff", func(o *CompareOptions) { o.FF = "relu" }, `--ff "relu": want exact or mlp`},
		{"ff max k", func(o *CompareOptions) { o.FFMaxK = 0 }, "--ff-max-k 0: want ≥ 1"},
		{"depth", func(o *CompareOptions) { o.D = 0 }, "construct: depth D=0 outside 1..16"},
		{"lambda", func(o *CompareOptions) { o.Lambda = 1 }, "construct: stop probability λ=1 outside (0,1)"},
		{"narrow", func(o *CompareOptions) { o.FF, o.Width = "mlp", 5 }, ""},
		{"c range", func(o *CompareOptions) { o.ErrorPlot, o.CRange = "x.png", "5,1" }, `--c-range "5,1": want lo,hi with 0 < lo < hi`},
		{"c points", func(o *CompareOptions) { o.ErrorPlot, o.CPoints = "x.png", 1 }, "--c-points 1: want at least 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := compareOptions()
			c.edit(&o)
			var oe *OptionError
			err := Compare(&bytes.Buffer{}, o)
			switch {
			case !errors.As(err, &oe):
				t.Fatalf("error %v (%T): want *OptionError", err, err)
			case c.flag != "" && oe.Flag("--") != c.flag:
				t.Errorf("Flag(\"--\") = %q, want %q", oe.Flag("--"), c.flag)
			case strings.Contains(err.Error(), "--") || !strings.HasPrefix(err.Error(), "construct: "):
				t.Errorf("error %q names a flag", err)
			}
		})
	}
}
