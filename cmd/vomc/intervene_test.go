package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestEvalInterventionErrors: a tf spec asking for a head, mode or
// pattern the model does not have is refused before any work, with a
// did-you-mean, and writes nothing; a good one evaluates.
func TestEvalInterventionErrors(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "4", "-N", "16", "--seed", "3", "--out", p("test"))
	m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(2, 2, 8, 16, 3), 1)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(p("run"), 0o755)
	if err := m.SaveSafetensors(p("run/model.safetensors")); err != nil {
		t.Fatal(err)
	}
	tf := "bayes,tf:path=" + p("run")
	for _, c := range []struct{ spec, want string }{
		{":ablate=L3H1", "did you mean L2H1?"},
		{":ablate=L1H5", "did you mean L1H2?"},
		{":ablate=L1H1:mode=maen", `did you mean "mean"?`},
		{":pattern=L1H1=ofset:1", `did you mean "offset"?`},
		{":pattern=L2H1=suffix:16", "outside 1..15"},
		{":ablate=L1H1:pattern=L1H1=offset:1", "twice"},
	} {
		code, stderr := stderrOf(t, "eval", "--data", p("test"), "--methods", tf+","+tf[len("bayes,"):]+c.spec, "--out", p("ev"))
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %q; want 2 with %q", c.spec, code, stderr, c.want)
		}
		if _, err := os.Stat(p("ev")); !os.IsNotExist(err) {
			t.Fatalf("%s: the output directory was written (%v)", c.spec, err)
		}
	}
	runOK(t, "eval", "--data", p("test"), "--methods", tf+","+tf[len("bayes,"):]+":ablate=L1H1+L2H2:mode=resample:refs=4,"+tf[len("bayes,"):]+":pattern=L1H2=suffix:2", "--out", p("ev"))
	exists(t, p("ev/results.json"))
}
