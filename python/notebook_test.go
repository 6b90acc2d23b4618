package python

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// notebook is the tour, relative to the repository root.
const notebook = "docs/notebooks/tour.ipynb"

// tourTestSeconds is the notebook's training budget (VOMC_TOUR_SECONDS)
// when the test executes it; with VOMC_UPDATE_NOTEBOOK=1 the notebook's own
// budget (VOMC_TOUR_SECONDS from the environment, else 60 s) is kept for
// the copy committed.
const tourTestSeconds = "5"

// executeNotebook is the Python that runs a notebook with nbclient in a
// working directory and writes the executed copy.
const executeNotebook = `import sys, nbformat, nbclient
src, out, cwd = sys.argv[1:4]
nb = nbformat.read(src, as_version=4)
nbclient.NotebookClient(nb, timeout=1200, kernel_name="python3", record_timing=False,
                        resources={"metadata": {"path": cwd}}).execute()
for c in nb.cells:
    c.get("metadata", {}).pop("execution", None)
nbformat.write(nb, out)`

// TestTourNotebook executes docs/notebooks/tour.ipynb with Debian's
// nbclient and ipykernel (libvomc and the package from this checkout),
// then checks its numbers against the command line's on the files it
// wrote: `vomc eval` on its test set and model (Bayes, CTW and Markov(k)
// to 1e-12 relative, the transformer — torch in the notebook, vomc's Go
// engine here — to 1e-5 nats) and `vomc attention` (the same heads
// labelled, with the same hypotheses). It trains for tourTestSeconds;
// with VOMC_UPDATE_NOTEBOOK=1 it trains for the notebook's own budget and
// writes the executed notebook back (the rendered copy committed).
func TestTourNotebook(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the notebook tour (starts a kernel, trains for " + tourTestSeconds + " s)")
	}
	py, why := pythonWith("nbclient, nbformat, ipykernel, numpy, torch")
	if py == "" {
		t.Skipf("no Python with nbclient, nbformat, ipykernel, numpy and torch (Debian: python3-nbclient python3-nbformat python3-ipykernel python3-torch): %s", why)
	}
	tmp := t.TempDir()
	lib, bin := buildLibvomc(t)
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("..")
	executed := filepath.Join(tmp, "tour.ipynb")
	cmd := exec.CommandContext(withDeadline(t), py, "-c", executeNotebook, filepath.Join(root, notebook), executed, work)
	cmd.Env = append(os.Environ(), "VOMC_LIB="+lib, "PYTHONPATH="+filepath.Join(root, "python"), "PYTHONDONTWRITEBYTECODE=1", "VOMC_TOUR_OUT=")
	if os.Getenv("VOMC_UPDATE_NOTEBOOK") != "1" {
		// The checks compare what the notebook computed with the command
		// line, whatever it learnt: a short training budget proves as much
		// as the rendered copy's long one.
		cmd.Env = append(cmd.Env, "VOMC_TOUR_SECONDS="+tourTestSeconds)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("executing %s: %v\n%s", notebook, err, out)
	}
	tour := filepath.Join(work, "tour")
	checkTourEval(t, bin, tour)
	checkTourHeads(t, bin, tour)
	if os.Getenv("VOMC_UPDATE_NOTEBOOK") == "1" {
		b, err := os.ReadFile(executed)
		if err == nil {
			err = os.WriteFile(filepath.Join(root, notebook), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote the executed notebook to %s", notebook)
	}
}

// evalMethod is what the checks read of a method in results.json.
type evalMethod struct {
	Name                        string
	Window, SecondHalf          struct{ Mean, Lo, Hi float64 }
	ExcessWindow, ExcessSecHalf struct{ Mean float64 }
}

func readEval(t *testing.T, path string) []evalMethod {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Methods []struct {
			Name             string
			Window           struct{ Mean, Lo, Hi float64 }
			SecondHalf       struct{ Mean, Lo, Hi float64 } `json:"second_half"`
			ExcessWindow     struct{ Mean float64 }         `json:"excess_window"`
			ExcessSecondHalf struct{ Mean float64 }         `json:"excess_second_half"`
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var ms []evalMethod
	for _, m := range doc.Methods {
		e := evalMethod{Name: m.Name}
		e.Window.Mean, e.Window.Lo, e.Window.Hi = m.Window.Mean, m.Window.Lo, m.Window.Hi
		e.SecondHalf.Mean = m.SecondHalf.Mean
		e.ExcessWindow.Mean, e.ExcessSecHalf.Mean = m.ExcessWindow.Mean, m.ExcessSecondHalf.Mean
		ms = append(ms, e)
	}
	return ms
}

// checkTourEval evaluates the notebook's model and test set with `vomc
// eval` and compares the notebook's results.json with it.
func checkTourEval(t *testing.T, bin, tour string) {
	out := filepath.Join(tour, "cli-eval")
	spec := "bayes,ctw,markov:k=1,markov:k=2,markov:k=3,tf:path=" + filepath.Join(tour, "tf")
	if b, err := exec.Command(bin, "eval", "--data", filepath.Join(tour, "test"), "--methods", spec, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("vomc eval: %v\n%s", err, b)
	}
	nb, cli := readEval(t, filepath.Join(tour, "results.json")), readEval(t, filepath.Join(out, "results.json"))
	if len(nb) != len(cli) {
		t.Fatalf("the notebook evaluated %d methods, vomc eval %d", len(nb), len(cli))
	}
	for i, m := range nb {
		c := cli[i]
		exact := m.Name != "TF"
		if exact && m.Name != c.Name {
			t.Errorf("method %d: %s in the notebook, %s in vomc eval", i, m.Name, c.Name)
		}
		for _, v := range [][2]float64{{m.Window.Mean, c.Window.Mean}, {m.Window.Lo, c.Window.Lo}, {m.SecondHalf.Mean, c.SecondHalf.Mean},
			{m.ExcessWindow.Mean, c.ExcessWindow.Mean}, {m.ExcessSecHalf.Mean, c.ExcessSecHalf.Mean}} {
			d := math.Abs(v[0] - v[1])
			if exact && d > 1e-12*math.Abs(v[1]) || !exact && d > 1e-5 {
				t.Errorf("%s: the notebook's %v, vomc eval's %v (%s's %v)", m.Name, v[0], v[1], c.Name, d)
			}
		}
	}
}

// checkTourHeads runs `vomc attention` on the notebook's model and the
// same 16 windows and compares which heads are labelled, and how.
func checkTourHeads(t *testing.T, bin, tour string) {
	out := filepath.Join(tour, "cli-attn")
	if b, err := exec.Command(bin, "attention", "--model", filepath.Join(tour, "tf"), "--data", filepath.Join(tour, "test"),
		"--window", "0", "--windows", "16", "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("vomc attention: %v\n%s", err, b)
	}
	type heads struct {
		MaxK  int `json:"max_k"`
		Heads []struct {
			Layer, Head int
			Labelled    bool
			Label       string
		}
	}
	var nb, cli heads
	for _, f := range []struct {
		path string
		v    *heads
	}{{filepath.Join(tour, "heads.json"), &nb}, {filepath.Join(out, "scores.json"), &cli}} {
		b, err := os.ReadFile(f.path)
		if err == nil {
			err = json.Unmarshal(b, f.v)
		}
		if err != nil {
			t.Fatalf("%s: %v", f.path, err)
		}
	}
	if nb.MaxK != cli.MaxK || len(nb.Heads) != len(cli.Heads) {
		t.Fatalf("the notebook scored %d heads up to k=%d, vomc attention %d up to k=%d", len(nb.Heads), nb.MaxK, len(cli.Heads), cli.MaxK)
	}
	hypothesis := func(label string) string { // "suffix-match k=3 (offset 1)" of "…, mass 0.72 vs chance …"
		label, _, _ = strings.Cut(label, ", mass")
		return label
	}
	labelled := 0
	for i, h := range nb.Heads {
		c := cli.Heads[i]
		if h.Labelled {
			labelled++
		}
		if h.Layer != c.Layer || h.Head != c.Head || h.Labelled != c.Labelled || (h.Labelled && hypothesis(h.Label) != hypothesis(c.Label)) {
			t.Errorf("head %d.%d: the notebook's %q, vomc attention's %q", h.Layer, h.Head, h.Label, c.Label)
		}
	}
	t.Logf("%d of %d heads labelled in the notebook (compared with vomc attention's labels)", labelled, len(nb.Heads))
}
