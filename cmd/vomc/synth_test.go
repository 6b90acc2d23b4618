package main

import (
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/synth"
)

// TestSynthCLI trains two small synthetic models and evaluates them with
// CTW through the synth method.
func TestSynthCLI(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "12", "-N", "24", "--NK", "96", "--fresh=false", "--seed", "1", "--out", p("train"))
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "10", "-N", "24", "--seed", "2", "--out", p("test"))
	common := []string{"synth", "--data", p("train"), "--batch", "8", "--epochs", "2", "--warmup", "2", "--eval-every", "3"}
	runOK(t, append(common, "--variant", "allcounts", "--out", p("all"), "--val", p("test"))...)
	runOK(t, append(common, "--variant", "tf20", "--out", p("tf20"), "--embed", "8", "--hidden", "16", "--act", "relu", "--count-norm", "scale")...)
	runFail(t, append(common, "--variant", "tf20", "--out", p("tf20"))...) // exists
	runFail(t, append(common, "--variant", "bogus", "--out", p("x"))...)
	runFail(t, append(common, "--variant", "tf20", "--out", p("x"), "--act", "tanh")...)
	exists(t, p("all/"+synthModel), p("all/"+synthLog), p("all/"+synthInfo))
	m, err := synth.Load(p("tf20/" + synthModel))
	if err != nil || m.Config.Embed != 8 || m.Config.Hidden != 16 || m.Config.D != 2 || m.Config.Context != 24 {
		t.Fatalf("tf20 model: %+v, %v", m, err)
	}
	runOK(t, "eval", "--data", p("test"), "--methods", "ctw,synth:path="+p("all")+",synth:path="+p("tf20"), "--out", p("ev"))
	res, err := eval.LoadJSONFile(p("ev/results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Methods) != 3 || res.Methods[1].Name != "TF 2-0 w/ all counts" || res.Methods[2].Name != "TF 2-0" {
		t.Fatalf("methods %v %v", res.Methods[1].Name, res.Methods[2].Name)
	}
	runFail(t, "eval", "--data", p("test"), "--methods", "synth:path="+p("nothing"), "--out", p("ev2"))
}
