package methods

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

func TestBuild(t *testing.T) {
	d := Defaults{Backend: cpu.NewDefault(), A: 3, D: 2, Lambda: 0.15, Alpha: 0.5,
		Tune: [][]byte{{0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 1, 0}, {2, 2, 1, 0, 2, 2, 1, 0, 2, 2}}, TuneNote: "test windows"}
	bs, err := parseBuild("ctw, ctw:D=3:lambda=0.3:init=shorter:form=ratio, kn:delta=0.5, kn:order=1, ppm:escape=C:excl, markov:k=1, unigram:alpha=1", d)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CTW(D=2,λ=0.15,α=0.5)", "CTW(D=3,λ=0.3,α=0.5,ratio,shorter)", "KN(D=2,δ=0.5)", "KN(D=1,", "PPM(D=2,C,excl)", "Markov(k=1,α=0.5)", "Unigram(α=1)"}
	if len(bs) != len(want) {
		t.Fatalf("%d methods, want %d", len(bs), len(want))
	}
	for i, b := range bs {
		if !strings.HasPrefix(b.Predictor.Name(), want[i]) {
			t.Errorf("method %d: name %q, want prefix %q", i, b.Predictor.Name(), want[i])
		}
		if b.Predictor.AlphabetSize() != 3 {
			t.Errorf("%s: alphabet %d", b.Predictor.Name(), b.Predictor.AlphabetSize())
		}
	}
	if !strings.Contains(bs[3].Note, "tuned on test windows") {
		t.Errorf("KN note %q", bs[3].Note)
	}
	for _, bad := range []string{"", "nope", "ctw:D=x", "ctw:foo=1", "ctw:lambda=2", "ppm:escape=Q", "kn:order=2:order=3", "ctw,ctw", "markov:init=condition", "ctw:form=fast"} {
		if _, err := parseBuild(bad, d); err == nil {
			t.Errorf("parseBuild(%q) accepted", bad)
		}
	}
	d.Tune = nil
	if _, err := parseBuild("kn", d); err == nil {
		t.Error("kn without delta or tuning windows accepted")
	}
}

// TestBuildTF loads trained transformers saved as 'vomc train' does and
// checks names, the predictions and the errors.
func TestBuildTF(t *testing.T) {
	dir := t.TempDir()
	save := func(name string, seed uint64, A int) (string, *transformer.Model) {
		m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(1, 2, 8, 16, A), seed)
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, name)
		os.MkdirAll(d, 0o755)
		if err := m.SaveSafetensors(filepath.Join(d, "model.safetensors")); err != nil {
			t.Fatal(err)
		}
		return d, m
	}
	run1, m1 := save("run1", 1, 3)
	run2, _ := save("run2", 2, 3)
	d := Defaults{Backend: cpu.NewDefault(), A: 3, D: 2, Lambda: 0.15, Alpha: 0.5}
	bs, err := parseBuild("ctw,tf:path="+run1+",tf:path="+run2+",tf:path="+filepath.Join(run1, "model.safetensors")+":name=first", d)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CTW(D=2,λ=0.15,α=0.5)", "TF(L=1,H=[2],E=8,N=16)@run1", "TF(L=1,H=[2],E=8,N=16)@run2", "first"}
	for i, b := range bs {
		if b.Predictor.Name() != want[i] {
			t.Errorf("method %d is %q, want %q", i, b.Predictor.Name(), want[i])
		}
	}
	if _, ok := bs[1].Predictor.(predict.SequencePredictor); !ok {
		t.Error("tf is not a SequencePredictor")
	}
	x := []byte{0, 1, 2, 2, 1, 0, 0, 1, 2, 1, 1, 1, 0, 2, 2, 0, 1, 2, 0, 1} // longer than N
	got, want2 := make([]float64, len(x)), make([]float64, len(x))
	if _, err := predict.LogLoss(bs[1].Predictor, x, got); err != nil {
		t.Fatal(err)
	}
	predict.LogLoss(m1, x, want2)
	for i := range got {
		if got[i] != want2[i] {
			t.Fatalf("position %d: loss %v, model's own %v", i, got[i], want2[i])
		}
	}
	run4, _ := save("run4", 1, 4)
	ckptOnly := filepath.Join(dir, "unfinished")
	os.MkdirAll(ckptOnly, 0o755)
	os.WriteFile(filepath.Join(ckptOnly, "checkpoint.safetensors"), []byte("x"), 0o644)
	for _, bad := range []string{"tf", "tf:path=" + filepath.Join(dir, "missing"), "tf:path=" + run4, "tf:path=" + run1 + ":foo=1",
		"tf:path=" + run1 + ",tf:path=" + run1, "tf:path=" + ckptOnly} {
		if _, err := parseBuild(bad, d); err == nil {
			t.Errorf("parseBuild(%q) accepted", bad)
		} else if strings.Contains(bad, "unfinished") && (!strings.Contains(err.Error(), "has not finished") || strings.Contains(err.Error(), "--")) {
			t.Errorf("unfinished run: %v", err)
		}
	}
}

// TestConstruct: the construction is built from a spec and coincides with
// CTW (Theorem 2 made a transformer).
func TestConstruct(t *testing.T) {
	d := Defaults{Backend: cpu.NewDefault(), A: 3, D: 2, Lambda: 0.15, Alpha: 0.5}
	bs, err := parseBuild("ctw,construct,construct:c=1e6", d)
	if err != nil {
		t.Fatal(err)
	}
	x := []byte{0, 1, 2, 2, 1, 0, 0, 1, 2, 1, 1, 0, 2, 2, 2, 1}
	losses := make([][]float64, len(bs))
	for i, b := range bs {
		losses[i] = make([]float64, len(x))
		if _, err := predict.LogLoss(b.Predictor, x, losses[i]); err != nil {
			t.Fatal(err)
		}
	}
	for j := range x {
		if math.Abs(losses[0][j]-losses[1][j]) > 1e-9 {
			t.Errorf("position %d: CTW %v, construction %v", j, losses[0][j], losses[1][j])
		}
	}
	if bs[2].Predictor.Name() == bs[1].Predictor.Name() {
		t.Error("finite and infinite c share a name")
	}
	for _, bad := range []string{"construct:c=-1", "construct:c=x", "construct:D=0"} {
		if _, err := parseBuild(bad, d); err == nil {
			t.Errorf("parseBuild(%q) accepted", bad)
		}
	}
}
func TestDefaultsFor(t *testing.T) {
	d := DefaultsFor(source.Prior{A: 4, Depths: []int{2, 5, 3}, Lambda: 0.2, Alpha: []float64{0.7, 1, 1, 1}})
	d.Backend = cpu.NewDefault()
	if d.A != 4 || d.D != 5 || d.Lambda != 0.2 || d.Alpha != 0.7 {
		t.Errorf("defaults %+v", d)
	}
}

// TestBuildBayes checks the bayes method: built from a data set's prior
// (DefaultsFor), refused without one or with another alphabet.
func TestBuildBayes(t *testing.T) {
	p := source.Prior{A: 3, Depths: []int{1, 2, 3}, Lambda: 0.15, Alpha: []float64{0.5}}
	b, err := parseBuild("bayes", DefaultsFor(p))
	if err != nil {
		t.Fatal(err)
	}
	if got := b[0].Predictor.Name(); got != "Bayes(D=1..3,λ=0.15,α=0.5)" {
		t.Errorf("name %q", got)
	}
	if _, err := parseBuild("bayes", Defaults{Backend: cpu.NewDefault(), A: 3, D: 3, Lambda: 0.15, Alpha: 0.5}); err == nil || !strings.Contains(err.Error(), "prior") {
		t.Errorf("no prior: error %v", err)
	}
	d := DefaultsFor(p)
	d.Backend = cpu.NewDefault()
	d.A = 4
	if _, err := parseBuild("bayes", d); err == nil {
		t.Error("alphabet mismatch: no error")
	}
	if _, err := parseBuild("bayes:D=3", DefaultsFor(p)); err == nil {
		t.Error("bayes takes no parameters: no error")
	}
}

// TestCheckFirst: every method of a list is checked before any is built
// (issue 35: a typo in the last method was reported after KN's tuning),
// with the closest valid name or parameter suggested.
func TestCheckFirst(t *testing.T) {
	d := DefaultsFor(source.Prior{A: 3, Depths: []int{2}, Lambda: 0.15, Alpha: []float64{0.5}})
	d.Backend = cpu.NewDefault()
	for _, c := range []struct{ list, want string }{
		{"ctw,kn,ppmm", `unknown method "ppmm"; did you mean "ppm"?`},
		{"ctw,kn,ppmm", "methods: bayes, ctw, kn, ppm, markov, unigram, tf, construct, synth, npy"},
		{"markov:k=3,ctw:lamda=0.2", `ctw takes no parameter "lamda"; did you mean "lambda"?`},
		{"bayes:D=3", `bayes takes no parameter "D" (its parameters: none)`},
		{"ctw:d=3:D=4", `gives D twice`},
		{"ctw:init=shoter", `init="shoter" is not one of pad, condition, shorter; did you mean "shorter"?`},
		{"ctw:LAMBDA", `lambda needs a value`},
		{"tf:name=x", `tf needs path=DIR`},
		{"kn:order=-1", `order="-1" is below 0`},
		{"ctw:", `empty parameter name`},
		{"kn,tf:path=/no/such/run", "no such file or directory"},
		{"xyzzy", `unknown method "xyzzy" (methods:`},
		{" , ", "no method"},
	} {
		_, err := parseBuild(c.list, d)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.list, err, c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"ppm", "ppmm", 1}, {"kitten", "sitting", 3}, {"ctw", "", 3}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// TestTorchModuleHint: a PyTorch-engine module (an LSTM run) given as tf
// names the method that evaluates it (torch:path=); as torch without an
// engine, without windows or unfinished, it is refused saying so.
func TestTorchModuleHint(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, map[string]string{"format": "vomc-torch-module", "config": `{"alphabet":3,"arch":"lstm"}`}, []safetensors.Tensor{{Name: "w", DType: "F32", Shape: []int{1}, Data: make([]byte, 4)}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	d := DefaultsFor(source.Prior{A: 3, Depths: []int{2}, Lambda: 0.15, Alpha: []float64{0.5}})
	d.Backend = cpu.NewDefault()
	_, err := parseBuild("tf:path="+dir, d)
	if err == nil || !strings.Contains(err.Error(), "evaluate it as torch:path="+dir) {
		t.Errorf("error %v", err)
	}
	unfinished := t.TempDir()
	if err := os.WriteFile(filepath.Join(unfinished, "checkpoint.safetensors"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	d.Windows = [][]byte{{0, 1, 2}}
	for _, c := range []struct {
		spec  string
		torch *trainrun.Torch
		win   [][]byte
		want  string
	}{
		{"torch:path=" + dir, nil, d.Windows, "no torch engine"},
		{"torch:path=" + dir, &trainrun.Torch{}, nil, "no evaluated windows"},
		{"torch:path=" + unfinished, &trainrun.Torch{}, d.Windows, "has a checkpoint but no model.safetensors"},
		{"torch:path=" + dir + ":nam=x", &trainrun.Torch{}, d.Windows, `did you mean "name"?`},
	} {
		d.Torch, d.Windows = c.torch, c.win
		if _, err := parseBuild(c.spec, d); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.spec, err, c.want)
		}
	}
}

// TestKnownParams keeps the kinds table, the builders and the package
// documentation in step: every kind of Names has an entry, a spec giving
// every parameter of its kind builds (Build refuses a parameter its
// builder ignores), and each parameter is named in the kind's line of the
// package documentation.
func TestKnownParams(t *testing.T) {
	values := map[string]string{
		"ctw/D": "2", "ctw/lambda": "0.2", "ctw/alpha": "0.5", "ctw/init": "condition", "ctw/form": "ratio",
		"kn/order": "2", "kn/delta": "0.7", "kn/cont": "true",
		"ppm/order": "2", "ppm/escape": "C", "ppm/excl": "true", "ppm/norm": "true",
		"markov/k": "1", "markov/alpha": "1", "markov/init": "shorter",
		"unigram/alpha": "1", "unigram/init": "shorter",
		"construct/D": "1", "construct/lambda": "0.3", "construct/alpha": "0.5", "construct/c": "50",
		"tf/ablate": "L1H1", "tf/mode": "mean", "tf/pattern": "L1H2=offset:1", "tf/refs": "2", "tf/seed": "3",
	}
	src, err := os.ReadFile("methods.go")
	if err != nil {
		t.Fatal(err)
	}
	docLine := func(name string) string {
		for _, l := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(l, "//\t"+name+"[") || strings.HasPrefix(l, "//\t"+name+":") || l == "//\t"+name || strings.HasPrefix(l, "//\t"+name+" ") {
				return l
			}
		}
		return ""
	}
	if len(kinds) != len(Names) {
		t.Errorf("%d kinds, %d names", len(kinds), len(Names))
	}
	d := Defaults{Backend: cpu.NewDefault(), A: 3, D: 2, Lambda: 0.15, Alpha: 0.5}
	for _, name := range Names {
		k, ok := kinds[name]
		if !ok || k.build == nil {
			t.Errorf("%s: not in the kinds table", name)
			continue
		}
		doc := docLine(name)
		if doc == "" {
			t.Errorf("%s: no line in the package documentation", name)
		}
		spec := name
		for i, p := range k.params {
			if !strings.Contains(doc, ":"+p.name+"=") && !strings.Contains(doc, "["+p.name+"]") && !strings.Contains(doc, ":"+p.name+"]") {
				t.Errorf("%s: parameter %q is not in its documentation line %q", name, p.name, doc)
			}
			for _, q := range k.params[:i] {
				if strings.EqualFold(p.name, q.name) {
					t.Errorf("%s: parameters %q and %q differ only in case", name, q.name, p.name)
				}
			}
			v, ok := values[name+"/"+p.name]
			if !ok {
				if p.name != "path" && p.name != "name" { // files: TestBuildTF and the synth/npy tests
					t.Errorf("%s: parameter %q has no test value", name, p.name)
				}
				continue
			}
			spec += ":" + p.name + "=" + v
		}
		if name == "tf" || name == "synth" || name == "npy" || name == "torch" || name == "bayes" {
			continue // need files or a data set's prior (TestBuildTF, TestBuildBayes, TestSpellings)
		}
		if _, err := parseBuild(spec, d); err != nil {
			t.Errorf("%s with every accepted parameter: %v", spec, err)
		}
	}
	if _, err := Parse("unigram:k=2"); err == nil {
		t.Error("unigram:k=2 parsed, but the unigram builder does not read k")
	}
}

// parseBuild is Parse, then Build.
func parseBuild(list string, d Defaults) ([]Built, error) {
	l, err := Parse(list)
	if err != nil {
		return nil, err
	}
	return Build(l, d)
}

// TestBuildTFCheckpoint: tf:path= naming a training checkpoint evaluates
// its current parameters (an unfinished run where it stands), labelled by
// the run's directory and the checkpoint's step; a checkpoint of another
// model kind is refused.
func TestBuildTFCheckpoint(t *testing.T) {
	be := cpu.NewDefault()
	cfg := transformer.DefaultConfig(1, 2, 8, 16, 3)
	params := transformer.InitParams(cfg, 5)
	m, err := transformer.FromParamsOn(be, cfg, params)
	if err != nil {
		t.Fatal(err)
	}
	c, err := transformer.FreshCheckpoint(cfg, transformer.DefaultTrainConfig(), params, 10, 0, 16, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run7")
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, "checkpoint.safetensors")
	if err := c.Save(file); err != nil {
		t.Fatal(err)
	}
	d := Defaults{Backend: be, A: 3, D: 2, Lambda: 0.15, Alpha: 0.5}
	bs, err := parseBuild("tf:path="+file, d)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := bs[0].Predictor.Name(), m.Name()+"@run7-step0"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	x := []byte{0, 1, 2, 2, 1, 0, 0, 1, 2, 1, 1, 1, 0, 2, 2, 0, 1, 2}
	got, want := make([]float64, len(x)), make([]float64, len(x))
	if _, err := predict.LogLoss(bs[0].Predictor, x, got); err != nil {
		t.Fatal(err)
	}
	predict.LogLoss(m, x, want)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("position %d: loss %v, the checkpoint's model %v", i, got[i], want[i])
		}
	}
	// the directory itself (no model.safetensors) is still an unfinished run
	if _, err := parseBuild("tf:path="+dir, d); !errors.Is(err, ErrUnfinished) {
		t.Errorf("tf:path=DIR with only a checkpoint: %v, want ErrUnfinished", err)
	}
	if _, _, err := transformer.LoadCheckpointModelOn(nil, file); !errors.Is(err, transformer.ErrNoBackend) {
		t.Errorf("nil backend: %v, want ErrNoBackend", err)
	}
}
