package trainrun

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/transformer"
)

// TestNoSpace: a full disk is a *NoSpaceError naming the intact
// checkpoint (issue 35, item 5); other errors are kept as they are.
func TestNoSpace(t *testing.T) {
	err := noSpace(fmt.Errorf("write x: %w", syscall.ENOSPC), "run/checkpoint.safetensors", 40)
	var ns *NoSpaceError
	if !errors.As(err, &ns) || ns.Step != 40 || ns.Checkpoint != "run/checkpoint.safetensors" || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("ENOSPC: %v", err)
	}
	if other := errors.New("x"); noSpace(other, "c", 1) != other {
		t.Error("another error was wrapped")
	}
}

// budgetCases are the budget rules (budget.go), one case each: a new run
// under each BudgetRule (ext none, state zero), an extension of a resumed
// run (ext), which also restarts the early-stopping count. n windows in
// batches of 16 (44 windows: 3 steps an epoch).
var budgetCases = []struct {
	name                           string
	rule                           BudgetRule
	epochs, maxSteps               int // the run's settings
	state                          transformer.TrainerState
	ext                            Extension
	wantEpochs, wantMax, wantTotal int
	wantEpoch, wantIndex           int    // where an extended run goes on
	wantErr                        string // "": no error
}{
	{name: "new, no max steps", rule: EpochsAsked, epochs: 4, wantEpochs: 4, wantTotal: 12},
	{name: "new, max steps within the epochs", rule: EpochsAsked, epochs: 4, maxSteps: 10, wantEpochs: 4, wantMax: 10, wantTotal: 10},
	{name: "new, either bound: the epochs win", rule: EitherBound, epochs: 2, maxSteps: 10, wantEpochs: 2, wantMax: 10, wantTotal: 6},
	{name: "new, steps win: epochs raised", rule: StepsWin, epochs: 2, maxSteps: 10, wantEpochs: 4, wantMax: 10, wantTotal: 10},
	{name: "new, epochs asked: refused", rule: EpochsAsked, epochs: 2, maxSteps: 10,
		wantErr: "max_steps 10 is more than epochs 2 allows (3 steps per epoch: the epochs end the run at step 6, so the epochs bound would win); give epochs 4 to train 10 steps, or leave out max_steps"},
	{name: "extend by steps: epochs raised", epochs: 2, state: transformer.TrainerState{Step: 6, Epoch: 2, Stopped: true, SinceBest: 3},
		ext: Extension{MaxSteps: 20}, wantEpochs: 7, wantMax: 20, wantTotal: 20, wantEpoch: 2},
	{name: "extend a run max steps ended mid-epoch: that epoch goes on", epochs: 100, maxSteps: 4, state: transformer.TrainerState{Step: 4, Epoch: 2},
		ext: Extension{MaxSteps: 6}, wantEpochs: 100, wantMax: 6, wantTotal: 6, wantEpoch: 1, wantIndex: 16},
	{name: "extend a run max steps ended at an epoch's end", epochs: 100, maxSteps: 6, state: transformer.TrainerState{Step: 6, Epoch: 2},
		ext: Extension{MaxSteps: 9}, wantEpochs: 100, wantMax: 9, wantTotal: 9, wantEpoch: 2},
	{name: "extend by epochs: a max steps they pass is dropped", epochs: 2, maxSteps: 6, state: transformer.TrainerState{Step: 6, Epoch: 2},
		ext: Extension{Epochs: 5}, wantEpochs: 5, wantTotal: 15, wantEpoch: 2},
	{name: "extend by epochs: a larger max steps stays", epochs: 2, maxSteps: 100, state: transformer.TrainerState{Step: 6, Epoch: 2},
		ext: Extension{Epochs: 5}, wantEpochs: 5, wantMax: 100, wantTotal: 15, wantEpoch: 2},
	{name: "extend mid-epoch by steps", epochs: 2, maxSteps: 5, state: transformer.TrainerState{Step: 5, Epoch: 1, Index: 32},
		ext: Extension{MaxSteps: 7}, wantEpochs: 3, wantMax: 7, wantTotal: 7, wantEpoch: 1, wantIndex: 32},
	{name: "extend by both, epochs too few", epochs: 2, state: transformer.TrainerState{Step: 6, Epoch: 2},
		ext: Extension{MaxSteps: 20, Epochs: 3}, wantErr: "max_steps 20 is more than epochs 3 allows (the run is at step 6; the epochs bound would win): give epochs 7 or more"},
	{name: "extend to no more steps", epochs: 4, state: transformer.TrainerState{Step: 12, Epoch: 4},
		ext: Extension{MaxSteps: 12}, wantErr: "the run in d is at step 12 (epoch 4) of 12: extending it needs a larger budget (max_steps or epochs)"},
	{name: "extend to fewer epochs", epochs: 4, state: transformer.TrainerState{Step: 12, Epoch: 4},
		ext: Extension{Epochs: 3}, wantErr: "the run in d is at step 12 (epoch 4) of 12: extending it needs a larger budget (max_steps or epochs)"},
}

// TestBudgetRules checks every case of budgetCases: the settings a run
// trains with, its length (transformer.TotalSteps), the refusals (as
// *OptionErrors), and that an extension counts early stopping afresh.
func TestBudgetRules(t *testing.T) {
	const n = 44
	for _, c := range budgetCases {
		tc := transformer.DefaultTrainConfig()
		tc.BatchSize, tc.Epochs, tc.MaxSteps = 16, c.epochs, c.maxSteps
		st := c.state
		var got transformer.TrainConfig
		var err error
		if c.ext.none() {
			got, err = newBudget(c.rule, tc, n)
		} else {
			got, err = extendBudget("d", tc, n, &st, c.ext)
		}
		if c.wantErr != "" {
			var oe *OptionError
			if !errors.As(err, &oe) || err.Error() != c.wantErr {
				t.Errorf("%s: error %v, want an OptionError %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Epochs != c.wantEpochs || got.MaxSteps != c.wantMax || transformer.TotalSteps(got, n) != c.wantTotal {
			t.Errorf("%s: epochs %d, max steps %d, total %d; want %d, %d, %d", c.name, got.Epochs, got.MaxSteps, transformer.TotalSteps(got, n),
				c.wantEpochs, c.wantMax, c.wantTotal)
		}
		if !c.ext.none() && (st.Stopped || st.SinceBest != 0) {
			t.Errorf("%s: early stopping not counted afresh (%+v)", c.name, st)
		}
		if !c.ext.none() && (st.Epoch != c.wantEpoch || st.Index != c.wantIndex) {
			t.Errorf("%s: goes on at epoch %d, window %d; want %d, %d", c.name, st.Epoch, st.Index, c.wantEpoch, c.wantIndex)
		}
	}
}

// TestEpochsFor: the epochs an extended run needs to take its steps,
// from an epoch end or the middle of an epoch (a run cut by MaxSteps
// counts its partial epoch).
func TestEpochsFor(t *testing.T) {
	for _, tc := range []struct {
		s                      transformer.TrainerState
		per, n, B, steps, want int
	}{
		{transformer.TrainerState{Step: 6, Epoch: 2}, 3, 44, 16, 20, 7},
		{transformer.TrainerState{Step: 1000, Epoch: 4}, 313, 10000, 32, 2000, 8},
		{transformer.TrainerState{Step: 5, Epoch: 1, Index: 32}, 3, 44, 16, 6, 2},
		{transformer.TrainerState{Step: 5, Epoch: 1, Index: 32}, 3, 44, 16, 7, 3},
	} {
		if got := epochsFor(tc.s, tc.per, tc.n, tc.B, tc.steps); got != tc.want {
			t.Errorf("%+v to %d steps: %d epochs, want %d", tc.s, tc.steps, got, tc.want)
		}
	}
}

// TestProgressAgrees: the progress bar's last text is written after the
// last validation, so its best validation loss and epochs are the
// summary's (issue 35, item 6; before, the bar kept "best val 0.9371"
// from before the final validation, the summary said 0.9288).
func TestProgressAgrees(t *testing.T) {
	meta := testData(t, "0.25", "8")
	tr := newTrainer(t, meta)
	tr.Cfg.MaxSteps = 15 // ends in the middle of the second epoch
	var last string
	var lastEpoch int // the completed epochs when the last text was made
	var r *Run[*transformer.Activations, *transformer.Model]
	var err error
	opts := Options{Dir: t.TempDir(), Meta: meta, Events: events.Discard, Status: func(step int, loss float64) string {
		last, lastEpoch = r.DefaultStatus(step, loss), tr.Epoch
		return last
	}}
	if r, err = Start(tr, opts); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	epochs := EpochsOf(tr.Step, tr.Cfg.BatchSize, tr.Train.Windows())
	want := fmt.Sprintf("step 15 epoch %.2f loss", epochs)
	if !strings.HasPrefix(last, want) || !strings.Contains(last, fmt.Sprintf(" best val %.4f ", tr.BestVal)) {
		t.Errorf("the bar's last text %q, want %q… and best val %.4f", last, want, tr.BestVal)
	}
	if lastEpoch != tr.Epoch {
		t.Errorf("the bar's last text was made before the last validation (epoch %d of %d)", lastEpoch, tr.Epoch)
	}
	if epochs <= 1 || epochs >= 2 {
		t.Errorf("15 steps are %.2f epochs, want between 1 and 2", epochs)
	}
}

// TestCurveTitle: curve.png is titled with the run and draws the
// reference (issue 35, item 8; before, only "Training curve").
func TestCurveTitle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my-run")
	hist := []transformer.LogEntry{{Step: 1, TrainLoss: 1.1, ValLoss: math.NaN()}, {Step: 2, TrainLoss: 1, EpochEnd: true, ValLoss: 1.05}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := DrawCurveRef(dir, hist, Reference{Name: "CTW(D=3,λ=0.15)", Loss: 0.97}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, CurveSVG))
	if err != nil || !strings.Contains(string(b), "Training curve of my-run") {
		t.Errorf("curve.svg is not titled with the run: %v", err)
	}
	if !strings.Contains(string(b), "CTW(D=3,λ=0.15) on validation: 0.9700") {
		t.Error("curve.svg does not draw the reference")
	}
}

// TestCTWReference: the reference drawn on the training curve is CTW's
// loss per predicted symbol on the validation windows: the sum over
// positions 2..T of -ln P(x_t | x_<t) that a CTW predictor gives.
func TestCTWReference(t *testing.T) {
	meta := testData(t, "0.25", "8")
	_, val, _, err := Data(meta)
	if err != nil {
		t.Fatal(err)
	}
	ref, ok := CTWReference(val)
	if !ok || !strings.HasPrefix(ref.Name, "CTW(D=") {
		t.Fatalf("CTWReference = %+v, %v", ref, ok)
	}
	pr := DatasetOf(val).Config().Prior
	p, err := ctw.New(ctw.Config{A: pr.A, D: slices.Max(pr.Depths), Lambda: pr.Lambda, Alpha: pr.Alpha[0]})
	if err != nil {
		t.Fatal(err)
	}
	sum, n, dist := 0.0, 0, make([]float64, pr.A)
	for i := range val.Windows() {
		st := p.NewState()
		for j, a := range val.Window(i) {
			if j > 0 {
				st.Predict(dist)
				sum -= math.Log(dist[a])
				n++
			}
			st.Observe(a)
		}
	}
	if want := sum / float64(n); math.Abs(ref.Loss-want) > 1e-9 {
		t.Errorf("reference %.10f, sequential CTW %.10f", ref.Loss, want)
	}
}
