package synth

import (
	"context"
	"encoding/json"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"math/rand/v2"
	"testing"
)

func TestRunSummary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var train sliceWindows
	for range 16 {
		train = append(train, randSeq(rng, 16, 3))
	}
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.WarmupSteps = 8, 1, 1
	for _, val := range []sliceWindows{nil, train[:4]} {
		var tr *Trainer
		var err error
		if val == nil {
			tr, err = NewTrainer(cpu.NewDefault(), Config{Variant: TF20, A: 3, D: 1}, train, nil, tc)
		} else {
			tr, err = NewTrainer(cpu.NewDefault(), Config{Variant: TF20, A: 3, D: 1}, train, val, tc)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		m := Finish(tr)
		info := RunSummary(m, tr, "d", "v")
		if _, err := json.Marshal(info); err != nil {
			t.Fatal(err)
		}
		if info["steps"] != 2 || info["data"] != "d" || info["val"] != "v" || info["params"] != m.Config.NumParams() || info["variant"] != ShortName(TF20) {
			t.Errorf("summary %v", info)
		}
		if _, has := info["best_val"]; has != (val != nil) {
			t.Errorf("with validation %v: best_val present %v", val != nil, has)
		}
	}
}
