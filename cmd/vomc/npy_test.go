package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
)

// TestEvalExportNPY: 'vomc eval --export' writes CTW's distributions, and
// evaluating the export as an npy method gives CTW's losses exactly.
func TestEvalExportNPY(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "25", "-N", "48", "--seed", "5", "--out", p("test"))
	runOK(t, "eval", "--data", p("test"), "--methods", "ctw,kn:delta=0.5", "--out", p("ev1"), "--export", p("exp"))
	ctwFile := p("exp/CTW_D=2_lambda=0.15_alpha=0.5.npy")
	exists(t, ctwFile, p("exp/KN_D=2_delta=0.5.npy"))
	runOK(t, "eval", "--data", p("test"), "--methods", "ctw,npy:path="+ctwFile+":name=exported", "--out", p("ev2"))
	res, err := eval.LoadJSONFile(p("ev2/results.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, e := res.Methods[0], res.Method("exported")
	if e == nil {
		t.Fatal("no method 'exported'")
	}
	for i := range c.Position {
		if c.Position[i].Mean != e.Position[i].Mean || e.Excess[i].Mean != 0 {
			t.Fatalf("position %d: CTW %v, export %v (excess %v)", i+1, c.Position[i].Mean, e.Position[i].Mean, e.Excess[i].Mean)
		}
	}
	// an existing export needs --force; a mismatched data set is refused
	runFail(t, "eval", "--data", p("test"), "--methods", "ctw", "--out", p("ev3"), "--export", p("exp"))
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "24", "-N", "48", "--seed", "5", "--out", p("other"))
	runFail(t, "eval", "--data", p("other"), "--methods", "ctw,npy:path="+ctwFile, "--out", p("ev4"))
}

func TestSharedTreesWarning(t *testing.T) {
	if w := sharedTreesWarning(dataset.Config{K: 10, NK: 256, N: 256}); w != "" {
		t.Errorf("one window per tree warned %q", w)
	}
	if w := sharedTreesWarning(dataset.Config{K: 10, NK: 1024, N: 256}); !strings.Contains(w, "40 windows come from 10 trees (4 per tree)") {
		t.Errorf("warning %q", w)
	}
}
