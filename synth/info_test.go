package synth

import (
	"math"
	"strings"
	"testing"
)

// TestInfoJSON: a run's losses go to the model file by vomc's JSON
// convention (jsonfloat): without validation the best loss is "NaN", and
// it reads back as NaN; files of before wrote it as −1, which reads as
// NaN too.
func TestInfoJSON(t *testing.T) {
	info := TrainInfo{Steps: 4, BestVal: math.NaN(), History: []Eval{{Step: 4, TrainLoss: 1.25, ValLoss: math.NaN()}}}
	b, err := infoJSON(info)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"best_val":"NaN"`) || !strings.Contains(s, `"val_loss":"NaN"`) || !strings.Contains(s, `"train_loss":1.25`) {
		t.Errorf("infoJSON: %s", s)
	}
	for _, in := range []string{string(b), strings.ReplaceAll(string(b), `"NaN"`, `-1`)} {
		back, err := parseInfo([]byte(in))
		if err != nil || back.Steps != 4 || !math.IsNaN(back.BestVal) || len(back.History) != 1 ||
			!math.IsNaN(back.History[0].ValLoss) || back.History[0].TrainLoss != 1.25 {
			t.Errorf("parseInfo(%s) = %+v, %v", in, back, err)
		}
	}
	info.BestVal, info.History[0].ValLoss = 0.75, 0.75
	b, _ = infoJSON(info)
	if back, err := parseInfo(b); err != nil || back.BestVal != 0.75 || back.History[0].ValLoss != 0.75 {
		t.Errorf("finite losses: %s → %+v, %v", b, back, err)
	}
}
