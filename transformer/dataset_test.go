package transformer

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestDatasetIntegration trains one epoch on a real vomc data set split by
// tree.
func TestDatasetIntegration(t *testing.T) {
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(3), K: 8, NK: 256, N: 64, Fresh: true, Seed: 3}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	train, val, err := SplitByTree(ds, 0.25, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []float64{2, 1, -0.1, math.NaN(), math.Inf(1)} {
		if _, _, err := SplitByTree(ds, f, 1); err == nil || !strings.Contains(err.Error(), "outside [0, 1)") {
			t.Errorf("fraction %g: error %v", f, err)
		}
	}
	if train.Windows()+val.Windows() != ds.Windows() || val.Windows() != 2*4 {
		t.Fatalf("split %d + %d of %d", train.Windows(), val.Windows(), ds.Windows())
	}
	seen := map[int32]bool{}
	for _, w := range val.Idx {
		seen[ds.TreeOf[w]] = true
	}
	for _, w := range train.Idx {
		if seen[ds.TreeOf[w]] {
			t.Fatalf("tree %d on both sides", ds.TreeOf[w])
		}
	}
	m, _ := NewOn(cpu.NewDefault(), DefaultConfig(1, 2, 8, ds.Config().N, ds.Config().Prior.A), 1)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs = 8, 1
	tr, err := NewTrainer(m, tc, train, val)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tr.Run(context.Background())
	if err != nil || st.Steps != 3 || !(st.ValLoss > 0) {
		t.Fatalf("%+v %v", st, err)
	}
}
