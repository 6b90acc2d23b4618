package experiment

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/plot"
)

// TestQuickstart runs a tiny quickstart and checks that CTW, the
// Bayes-optimal predictor for the prior, is the reference and is not
// beaten, and that a second run refuses to overwrite the outputs.
func TestQuickstart(t *testing.T) {
	q := DefaultQuick()
	q.K, q.KTrain, q.N = 100, 20, 96
	out := t.TempDir()
	res, err := Quickstart(context.Background(), q, out, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Windows != 100 || res.N != 96 || len(res.Methods) != 5 {
		t.Fatalf("result %d×%d with %d methods", res.Windows, res.N, len(res.Methods))
	}
	ref := res.Ref()
	if ref.Name != "CTW(D=3,λ=0.15,α=0.5)" {
		t.Errorf("reference %s", ref.Name)
	}
	for _, m := range res.Methods {
		if m.Name != ref.Name && m.ExcessWindow.Mean < 0 {
			t.Errorf("%s beats CTW on average: %v", m.Name, m.ExcessWindow.Mean)
		}
		if math.IsNaN(m.Window.Mean) {
			t.Errorf("%s: NaN mean", m.Name)
		}
	}
	if _, err := Quickstart(context.Background(), q, out, false); err == nil {
		t.Error("a second run without force overwrote the first")
	}
	if _, err := Quickstart(context.Background(), q, out, true); err != nil {
		t.Errorf("a second run with force: %v", err)
	}
	if err := WriteOutputs(res, out, false, plot.Options{}); !errors.Is(err, fsutil.ErrExists) {
		t.Errorf("WriteOutputs over existing files: %v", err)
	}
	if err := WriteOutputs(res, filepath.Join(out, "again"), false, plot.Options{}); err != nil {
		t.Error(err)
	}
}
