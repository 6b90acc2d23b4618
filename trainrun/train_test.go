package trainrun

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// trainOptions is the job of a tiny Go-engine run of 'vomc train' on the
// data set of meta in dir.
func trainOptions(meta map[string]string, dir string) Job {
	tc := transformer.DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.LogEvery, tc.WarmupSteps, tc.MaxSteps, tc.Seed = 4, 2, 1, 1, 6, 1
	return Job{Dir: dir, Data: DataSpec{Data: meta["data"], ValFrac: 0.25, N: 8, SplitSeed: tc.Seed}, Train: tc, CheckpointEvery: 2, Budget: StepsWin,
		Model: ModelOptions{Layers: 1, Heads: "2", Embed: 8, FeedForward: true, LayerNorm: true,
			Activation: transformer.GELU, Positional: transformer.Learned}}
}

// TestTrainOptionErrors: a bad setting is refused with an *OptionError
// naming it (and no flag), before the run directory is created.
func TestTrainOptionErrors(t *testing.T) {
	meta := testData(t, "0", "")
	dir := filepath.Join(t.TempDir(), "run")
	for _, tc := range []struct {
		name   string
		change func(o *Job)
		option string
		text   string
	}{
		{"no data", func(o *Job) { o.Data.Data = "" }, "data", "data DIR is required"},
		{"lr", func(o *Job) { o.Train.LR = math.NaN() }, "lr", "lr NaN: want a finite number ≥ 0"},
		{"batch", func(o *Job) { o.Train.BatchSize = 0 }, "batch_size", "batch_size 0: want 1.."},
		{"layers", func(o *Job) { o.Model = withModel(o, func(m *ModelOptions) { m.Layers = 100000 }) }, "layers", "layers 100000 outside 0..1024"},
		{"embed", func(o *Job) { o.Model = withModel(o, func(m *ModelOptions) { m.Embed = 0 }) }, "embed", "embed 0 outside 1..65536"},
		{"arch", func(o *Job) { o.Model = withModel(o, func(m *ModelOptions) { m.Arch = "gru" }) }, "arch", `arch "gru": want transformer, lstm or MODULE:FACTORY`},
		{"lstm", func(o *Job) { o.Model = withModel(o, func(m *ModelOptions) { m.Arch, m.Layers = ArchLSTM, 0 }) }, "arch", "lstm needs layers ≥ 1 and hidden ≥ 1 (got 0, 8)"},
		{"heads", func(o *Job) { o.Model = withModel(o, func(m *ModelOptions) { m.Heads = "x" }) }, "heads", `heads "x": want positive integers`},
		{"val frac", func(o *Job) { o.Data.ValFrac = 1 }, "val_frac", "val_frac 1 outside [0, 1)"},
		{"N", func(o *Job) { o.Data.N = -1 }, "N", "N -1 is negative"},
		{"window", func(o *Job) { o.Data.N = 1000 }, "", "window"},
		{"config", func(o *Job) { o.Model = withModel(o, func(m *ModelOptions) { m.Activation = "tanh" }) }, "", "tanh"},
		{"checkpoint", func(o *Job) { o.CheckpointEvery = -1 }, "checkpoint_every", "checkpoint_every -1: want ≥ 0 (0: only at epoch ends)"},
	} {
		o := trainOptions(meta, dir)
		tc.change(&o)
		_, err := GoEngine(cpu.NewDefault()).Train(context.Background(), o)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != tc.option || !strings.Contains(err.Error(), tc.text) || strings.Contains(err.Error(), "--") {
			t.Errorf("%s: error %v, want an OptionError %q containing %q", tc.name, err, tc.option, tc.text)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the run directory was created", tc.name)
		}
	}
}

// withModel is the job's ModelOptions changed by f.
func withModel(o *Job, f func(m *ModelOptions)) ModelOptions {
	m := o.Model.(ModelOptions)
	f(&m)
	return m
}

func TestParseHeads(t *testing.T) {
	for _, tc := range []struct {
		s    string
		L    int
		want []int
	}{
		{"8", 3, []int{8, 8, 8}}, {"2, 1", 2, []int{2, 1}}, {"4", 0, []int{}}, {"0", 1, nil}, {"2,1", 3, nil}, {"a", 1, nil},
	} {
		hs, err := ParseHeads(tc.s, tc.L)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%q, L=%d: %v accepted", tc.s, tc.L, hs)
			}
			continue
		}
		if err != nil || len(hs) != len(tc.want) || len(hs) > 0 && !reflect.DeepEqual(hs, tc.want) {
			t.Errorf("%q, L=%d: %v, %v, want %v", tc.s, tc.L, hs, err, tc.want)
		}
	}
}

// TestNewEngine: a Spec names the engine; bad names and settings are
// *OptionErrors naming the option, and the torch engine takes no backend.
func TestNewEngine(t *testing.T) {
	be := cpu.New(kernels.Default())
	tor := &Torch{Device: "cpu"}
	for _, tc := range []struct {
		spec         Spec
		name, option string
	}{
		{Spec{CPU: be}, EngineGo, ""}, {Spec{Name: EngineGo, Backend: "cpu", CPU: be}, EngineGo, ""},
		{Spec{Name: EngineTorch, Torch: tor, CPU: be}, EngineTorch, ""}, {Spec{Name: "jax"}, "", "engine"},
		{Spec{Backend: "tpu"}, "", "backend"}, {Spec{Backend: "cuda:x"}, "", "backend"},
		{Spec{Name: EngineTorch, Backend: "cuda"}, "", "backend"}, {Spec{Name: EngineTorch, Torch: &Torch{Device: "gpu"}}, "", "-"},
	} {
		e, err := NewEngine(tc.spec)
		var oe *OptionError
		switch {
		case tc.name != "" && (err != nil || e.Name() != tc.name || e.Backend() != be):
			t.Errorf("%+v: %v, %v", tc.spec, e, err)
		case tc.name != "" && tc.name == EngineTorch && e.Torch() != tor:
			t.Errorf("%+v: torch engine %v", tc.spec, e.Torch())
		case tc.name == "" && (!errors.As(err, &oe) || oe.Option != strings.Trim(tc.option, "-") || strings.Contains(err.Error(), "--")):
			t.Errorf("%+v: error %v, want an OptionError of %q", tc.spec, err, tc.option)
		}
	}
	if err := (&OptionError{Option: "backend", Msg: " is the go engine's; the torch engine's device is %s", Also: []string{"device"}}).Text(func(o string) string { return "--" + o }); err != "--backend is the go engine's; the torch engine's device is --device" {
		t.Errorf("%q", err)
	}
	var nilEngine *Engine
	if nilEngine.Name() != EngineGo || nilEngine.Backend() != nil || nilEngine.Torch() != nil || nilEngine.Close() != nil || nilEngine.Check() != nil {
		t.Error("a nil *Engine is not the Go engine on the models' own backends")
	}
}

// TestTrainInterruptResume: a Go-engine run interrupted by its context
// resumes to the same model as an uninterrupted one; a held directory is
// refused unless Force; the summary and the messages describe the run.
func TestTrainInterruptResume(t *testing.T) {
	meta := testData(t, "0", "")
	base := t.TempDir()
	ref := trainOptions(meta, filepath.Join(base, "ref"))
	var out bytes.Buffer
	ref.Events = events.Writer(&out)
	s, err := GoEngine(cpu.NewDefault()).Train(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if s.Engine != EngineGo || s.Step != 6 || s.Train.MaxSteps != 6 || !s.HasValidation() || !strings.Contains(out.String(), "training memory ≈") {
		t.Fatalf("summary %+v, output %q", s, out.String())
	}
	if _, err := GoEngine(cpu.NewDefault()).Train(context.Background(), ref); !errors.As(err, new(*HeldError)) {
		t.Fatalf("held directory: %v", err)
	}

	o := trainOptions(meta, filepath.Join(base, "run"))
	ctx, cancel := context.WithCancel(context.Background())
	o.OnStep = func(step int) {
		if step == 3 {
			cancel()
		}
	}
	_, err = GoEngine(cpu.NewDefault()).Train(ctx, o)
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Step != 3 {
		t.Fatalf("interrupted run: %v", err)
	}
	out.Reset()
	r := Job{Dir: o.Dir, Mode: ModeResume, Model: ModelOptions{}, Events: events.Writer(&out)}
	if s, err = GoEngine(cpu.NewDefault()).Train(context.Background(), r); err != nil || s.Step != 6 {
		t.Fatalf("resumed run: %+v, %v", s, err)
	}
	if !strings.Contains(out.String(), "resuming "+o.Dir+" at step 3") {
		t.Errorf("resume message %q", out.String())
	}
	a, _ := os.ReadFile(filepath.Join(ref.Dir, ModelFile))
	b, err := os.ReadFile(filepath.Join(o.Dir, ModelFile))
	if err != nil || !bytes.Equal(a, b) {
		t.Errorf("the resumed run's model differs from the uninterrupted run's (%v)", err)
	}
	ref.Force = true
	if _, err := GoEngine(cpu.NewDefault()).Train(context.Background(), ref); err != nil {
		t.Errorf("Force: %v", err)
	}
}

// TestTrainDiverged: a learning rate that blows up returns a
// *DivergedError naming the last good checkpoint, and no model.
func TestTrainDiverged(t *testing.T) {
	meta := testData(t, "0", "")
	o := trainOptions(meta, filepath.Join(t.TempDir(), "div"))
	o.Train.LR, o.Train.WarmupSteps, o.Train.ClipNorm, o.Train.WeightDecay, o.Train.MinLR = 1e30, 0, 0, 0, 0
	_, err := GoEngine(cpu.NewDefault()).Train(context.Background(), o)
	var de *DivergedError
	if !errors.As(err, &de) || de.LR != 1e30 || de.Checkpoint != filepath.Join(o.Dir, CheckpointFile) || de.Step < 0 {
		t.Fatalf("diverging run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, ModelFile)); err == nil {
		t.Error("a diverged run wrote its model")
	}
}

// TestTrainLSTMNeedsTorch: the Go engine refuses an LSTM, and a Go
// resume of a run whose model only torch trains is a *ModelFormatError.
func TestTrainLSTMNeedsTorch(t *testing.T) {
	meta := testData(t, "0", "")
	o := trainOptions(meta, filepath.Join(t.TempDir(), "lstm"))
	o.Model = withModel(&o, func(m *ModelOptions) { m.Arch = ArchLSTM })
	var oe *OptionError
	if _, err := GoEngine(cpu.NewDefault()).Train(context.Background(), o); !errors.As(err, &oe) || oe.Option != "arch" || !strings.Contains(err.Error(), `arch "lstm" needs engine torch`) {
		t.Errorf("LSTM on the Go engine: %v", err)
	}
	e := &ModelFormatError{Dir: "d", Format: "f", Config: "c"}
	if strings.Contains(e.Error(), "--") || !strings.Contains(e.Error(), "torch engine") {
		t.Errorf("%v", e)
	}
}

// TestConstantScheduleContinues: with the paper's optimiser (constant
// learning rate, no warm-up, no clipping) a run interrupted and resumed, or
// ended at a smaller budget and extended (--resume --epochs), is an
// exact continuation: the same model bytes as an uninterrupted run of the
// same budget; the schedule and the clipping come back from the checkpoint.
// (Under the cosine schedule an extension changes the rate of every later
// step, so no extended run is one that was asked for from the start.) The
// uninterrupted run spells the schedule "Constant": the same keyword.
func TestConstantScheduleContinues(t *testing.T) {
	meta := testData(t, "0", "")
	base := t.TempDir()
	paper := func(dir string, epochs int) Job {
		j := trainOptions(meta, filepath.Join(base, dir))
		j.Train.Schedule, j.Train.WarmupSteps, j.Train.ClipNorm, j.Train.MaxSteps, j.Train.Patience = transformer.ScheduleConstant, 0, 0, 0, 0
		j.Train.Epochs = epochs
		return j
	}
	eng := GoEngine(cpu.NewDefault())
	ref := paper("ref", 3)
	ref.Train.Schedule = "Constant" // keywords ignore case: the same schedule, recorded as "constant"
	rs, err := eng.Train(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Train.Schedule != transformer.ScheduleConstant {
		t.Fatalf("--lr-schedule Constant ran with schedule %q, want %q", rs.Train.Schedule, transformer.ScheduleConstant)
	}

	cut := paper("cut", 3)
	ctx, cancel := context.WithCancel(context.Background())
	cut.OnStep = func(step int) {
		if step == 2 {
			cancel()
		}
	}
	if _, err := eng.Train(ctx, cut); !errors.As(err, new(*InterruptedError)) {
		t.Fatalf("interrupted run: %v", err)
	}
	c, err := transformer.LoadCheckpoint(filepath.Join(cut.Dir, CheckpointFile))
	if err != nil || c.Train.Schedule != transformer.ScheduleConstant || c.Train.ClipNorm != 0 || c.Train.WarmupSteps != 0 {
		t.Fatalf("the checkpoint's settings %+v, %v: want the constant schedule without warm-up or clipping", c.Train, err)
	}
	resumed := Job{Dir: cut.Dir, Mode: ModeResume, Model: ModelOptions{}}

	short := paper("short", 2)
	if _, err := eng.Train(context.Background(), short); err != nil {
		t.Fatal(err)
	}
	extended := Job{Dir: short.Dir, Mode: ModeResume, Model: ModelOptions{}, Extend: Extension{Epochs: 3}}

	want, err := os.ReadFile(filepath.Join(ref.Dir, ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	steps := rs.Step
	for name, j := range map[string]Job{"resumed": resumed, "extended": extended} {
		s, err := eng.Train(context.Background(), j)
		if err != nil || s.Step != steps || s.Train.Schedule != transformer.ScheduleConstant || s.Train.ClipNorm != 0 {
			t.Fatalf("%s run: %+v, %v", name, s, err)
		}
		for _, e := range s.History {
			if e.LR != 1e-3 {
				t.Fatalf("%s run: learning rate %g at step %d, want the constant 1e-3", name, e.LR, e.Step)
			}
		}
		if got, err := os.ReadFile(filepath.Join(j.Dir, ModelFile)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("the %s run's model differs from the uninterrupted run's (%v)", name, err)
		}
	}

	// ended by --max-steps in the middle of an epoch, then extended: the
	// epoch goes on where it stopped (without validation, the model is
	// the last step's parameters)
	per := (rs.TrainWindows + ref.Train.BatchSize - 1) / ref.Train.BatchSize
	if per < 2 {
		t.Fatalf("%d steps an epoch: no middle to end in", per)
	}
	bySteps := func(dir string, maxSteps int) Job {
		j := paper(dir, 100)
		j.Data.ValFrac, j.Train.MaxSteps = 0, maxSteps
		return j
	}
	whole, cutMid := bySteps("whole", 2*per+1), bySteps("mid", per+per/2)
	for _, j := range []Job{whole, cutMid} {
		if _, err := eng.Train(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eng.Train(context.Background(), Job{Dir: cutMid.Dir, Mode: ModeResume, Model: ModelOptions{}, Extend: Extension{MaxSteps: 2*per + 1}}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(whole.Dir, ModelFile))
	if b, err := os.ReadFile(filepath.Join(cutMid.Dir, ModelFile)); err != nil || !bytes.Equal(a, b) {
		t.Errorf("a run ended mid-epoch at step %d and extended to %d differs from the uninterrupted run (%v)", per+per/2, 2*per+1, err)
	}
}
