package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/progress"
	"github.com/vomc/vomc/internal/study"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/trainrun"
)

// Options are the run's settings that are not part of the study's
// configuration.
type Options struct {
	// Out is the output directory: stages/ holds the cached stages, and
	// report.html, figures/ and results.json are written at its top.
	Out string
	// Version is the vomc version (in the report, and part of every stage
	// hash).
	Version string
	// CodeKey identifies the code (part of every stage hash, so that
	// stages cached by other code are computed again); empty means
	// CodeKey(), from the binary's VCS information or its SHA-256. Tests
	// inject it.
	CodeKey string
	// Rerun names stages to compute again even when cached ("all": every
	// stage); stages depending on them are computed again where the rerun
	// changed their outputs.
	Rerun []string
	// Log receives progress lines (nil: discard).
	Log io.Writer
	// OnStep, if set, is called after every training step of every model
	// (tests use it to cancel a run mid-training).
	OnStep func(stage string, step int)
	// Lock configures the claims that keep concurrent runs sharing Out
	// (Slurm tasks, several machines) from computing the same stage.
	Lock LockConfig
	// Torch is the PyTorch engine (interpreter, device, speed features)
	// that trains the transformers when Config.Engine is "torch"; nil
	// there means one with the defaults (device auto).
	Torch *trainrun.Torch
}

// Stage names of the fixed stages.
const (
	StageTrainData = "data-train"
	StageTestData  = "data-test"
	StageBaselines = "eval-baselines"
	StageConstruct = "eval-construct"
	StageFig5      = "fig5-attention"
	StageSynth     = "fig8-synth"
	StageFigures   = "figures"
	StageReport    = "report"
)

// KNTuneWindows is the most training windows KN's discount is tuned on.
const KNTuneWindows = 1000

// dataDir is the data set's directory inside its stage.
const dataDir = "data"

// Files of a training stage.
const (
	ckptFile  = "checkpoint.safetensors"
	modelFile = "model.safetensors"
	infoFile  = "train.json"
	resFile   = "results.json"
)

// TrainInfo is what a training stage records besides the weights.
type TrainInfo struct {
	Spec, Label, Name string
	Params            int
	Steps, Epochs     int
	Tokens            float64
	Seconds           float64 // training wall time, over all resumptions
	BestVal           float64 // NaN without validation
	FinalTrainLoss    float64
	Stopped           bool
}

// Plan returns the stages of the study in order.
func Plan(cfg Config, opts Options) []Stage {
	w := cfg.Workers
	trainDS := dataset.Config{Prior: cfg.Prior(), K: cfg.TrainTrees, NK: cfg.TrainNK, N: cfg.N, Fresh: false, Seed: cfg.Seed + 1_000_003}
	testDS := dataset.Config{Prior: cfg.Prior(), K: cfg.TestTrees, NK: cfg.N, N: cfg.N, Fresh: true, Seed: cfg.Seed}
	bspec := baselineSpec
	if cfg.ExtraMethods != "" {
		bspec += "," + cfg.ExtraMethods
	}
	stages := []Stage{
		dataStage(StageTrainData, trainDS, w),
		dataStage(StageTestData, testDS, w),
		{
			Name:   StageBaselines,
			Inputs: map[string]any{"defaults": defaults(cfg), "methods": bspec, "tune_windows": KNTuneWindows},
			Deps:   []string{StageTrainData, StageTestData},
			Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
				train, err := dataset.Read(filepath.Join(sc.Deps[StageTrainData].Dir, dataDir))
				if err != nil {
					return nil, err
				}
				test, err := dataset.Read(filepath.Join(sc.Deps[StageTestData].Dir, dataDir))
				if err != nil {
					return nil, err
				}
				d := defaults(cfg)
				d.Tune = study.Windows(train)
				if len(d.Tune) > KNTuneWindows {
					d.Tune = d.Tune[:KNTuneWindows]
				}
				d.TuneNote = fmt.Sprintf("%d training windows", len(d.Tune))
				bar := progress.New(sc.Log, sc.Label, test.Windows()).DelayStart(2 * time.Second)
				res, _, err := study.Evaluate(ctx, study.Windows(test), bspec, d, eval.Config{Workers: w, Progress: bar.Update})
				bar.Done()
				if err != nil {
					return nil, err
				}
				return []string{resFile}, saveResult(sc.Dir, res)
			},
		},
		{
			Name:   StageConstruct,
			Inputs: map[string]any{"defaults": defaults(cfg), "windows": cfg.ConstructWindows},
			Deps:   []string{StageTestData},
			Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
				return runConstruct(ctx, cfg, sc)
			},
		},
	}
	for r := range cfg.NumSeeds() {
		for _, m := range cfg.Models() {
			stages = append(stages, trainStage(cfg, m, r, opts))
		}
	}
	for r := range cfg.NumSeeds() {
		for _, m := range cfg.Models() {
			stages = append(stages, evalModelStage(cfg, m, r))
		}
	}
	if s, ok := fig5Stage(cfg); ok {
		stages = append(stages, s)
	}
	ss, err := synthStages(cfg, opts)
	if err == nil {
		stages = append(stages, ss...)
	}
	figInputs := map[string]any{"fig3": cfg.Fig3Models, "fig4": cfg.Fig4Models, "synth": cfg.SynthVariants, "smooth": cfg.Smooth, "N": cfg.N}
	if cfg.NumSeeds() > 1 {
		figInputs["seeds"] = cfg.NumSeeds()
	}
	if cfg.normalized().SynthEncodings != nil {
		figInputs["encodings"] = cfg.Encodings()
	}
	var evals []string
	for _, s := range stages {
		if s.Name == StageBaselines || s.Name == StageConstruct || s.Name == StageSynth || (len(s.Name) > 8 && s.Name[:8] == "eval-tf-") {
			evals = append(evals, s.Name)
		}
	}
	stages = append(stages, Stage{
		Name:   StageFigures,
		Kind:   KindFigures,
		Inputs: figInputs,
		Deps:   evals,
		Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
			return writeFigures(cfg, sc)
		},
	})
	var all []string
	for _, s := range stages {
		all = append(all, s.Name)
	}
	stages = append(stages, Stage{
		Name:   StageReport,
		Kind:   KindReport,
		Inputs: cfg.normalized(),
		Deps:   all,
		Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
			return writeReport(cfg, opts, sc)
		},
	})
	return stages
}

// baselineSpec are the reference methods of Figs. 3 and 10: PPM (method A)
// in its three variants — as is (probabilities summing to < 1), normalised,
// and with exclusion — because the KN-vs-PPM conclusion depends on which.
const baselineSpec = "ctw,kn,ppm,ppm:norm,ppm:excl,unigram"

func defaults(cfg Config) methods.Defaults {
	return methods.Defaults{A: cfg.A, D: cfg.MaxDepth(), Lambda: cfg.Lambda, Alpha: cfg.Alpha}
}

func dataStage(name string, dc dataset.Config, workers int) Stage {
	return Stage{
		Name:   name,
		Kind:   KindData,
		Inputs: dc,
		Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
			if err := dc.Validate(); err != nil {
				return nil, err
			}
			bar := progress.New(sc.Log, sc.Label, dc.K).DelayStart(2 * time.Second)
			ds, err := dataset.Build(dc, workers, bar.Update)
			bar.Done()
			if err != nil {
				return nil, err
			}
			if err := ds.Write(filepath.Join(sc.Dir, dataDir), true); err != nil {
				return nil, err
			}
			return []string{filepath.Join(dataDir, "symbols.bin")}, nil
		},
	}
}

func saveResult(dir string, res *eval.Result) error {
	return fsutil.WriteFile(filepath.Join(dir, resFile), true, res.WriteJSON)
}

func loadResult(d *Done) (*eval.Result, error) {
	return eval.LoadJSONFile(filepath.Join(d.Dir, resFile))
}

// ConstructInfo is the comparison of the construction with CTW.
type ConstructInfo struct {
	Windows int
	// MaxProbDiff is the largest |P_construct − P_CTW| over every position,
	// symbol and window compared.
	MaxProbDiff float64
	Layers      int
	Seconds     float64
}

func runConstruct(ctx context.Context, cfg Config, sc *StageContext) ([]string, error) {
	test, err := dataset.Read(filepath.Join(sc.Deps[StageTestData].Dir, dataDir))
	if err != nil {
		return nil, err
	}
	ws := study.Windows(test)[:cfg.ConstructWindows]
	start := time.Now()
	bar := progress.New(sc.Log, sc.Label, len(ws)).DelayStart(2 * time.Second)
	res, built, err := study.Evaluate(ctx, ws, "ctw,construct", defaults(cfg), eval.Config{Workers: cfg.Workers, Progress: bar.Update})
	bar.Done()
	if err != nil {
		return nil, err
	}
	info := ConstructInfo{Windows: len(ws), Layers: cfg.MaxDepth() + 2}
	A := cfg.A
	pc, pt := make([]float64, cfg.N*A), make([]float64, cfg.N*A)
	for _, x := range ws {
		if err := predict.Sequence(built[0].Predictor, x, pc); err != nil {
			return nil, err
		}
		if err := predict.Sequence(built[1].Predictor, x, pt); err != nil {
			return nil, err
		}
		for i := range pc {
			info.MaxProbDiff = math.Max(info.MaxProbDiff, math.Abs(pc[i]-pt[i]))
		}
	}
	info.Seconds = time.Since(start).Seconds()
	if err := saveResult(sc.Dir, res); err != nil {
		return nil, err
	}
	return []string{resFile, "construct.json"}, writeJSON(sc.Dir, "construct.json", info)
}

// repSuffix is the stage-name suffix of training replicate r: none for
// replicate 0, "-s1", "-s2", … otherwise.
func repSuffix(r int) string {
	if r == 0 {
		return ""
	}
	return fmt.Sprintf("-s%d", r)
}

// trainStageName and evalStageName name replicate r's stages of model m.
func trainStageName(m Model, r int) string { return "train-tf-" + m.Slug() + repSuffix(r) }
func evalStageName(m Model, r int) string  { return "eval-tf-" + m.Slug() + repSuffix(r) }

// RepLabel is the method name of replicate r of model m in the results:
// the model's label for replicate 0, "LABEL [seed r]" otherwise.
func RepLabel(m Model, r int) string {
	if r == 0 {
		return m.Label()
	}
	return fmt.Sprintf("%s [seed %d]", m.Label(), r)
}

// trainSplit reads the training set and splits it by tree.
func trainSplit(cfg Config, sc *StageContext) (train, val transformer.Windows, err error) {
	ds, err := dataset.Read(filepath.Join(sc.Deps[StageTrainData].Dir, dataDir))
	if err != nil {
		return nil, nil, err
	}
	tr, va, err := transformer.SplitByTree(ds, cfg.ValFrac, cfg.Seed)
	if err != nil {
		return nil, nil, err
	}
	if len(va.Idx) == 0 {
		return tr, nil, nil
	}
	return tr, va, nil
}

// trainStage trains replicate r of model m (seed cfg.ReplicateSeed(r) for
// the initialisation and the shuffling; the same training data and split
// for every replicate).
func trainStage(cfg Config, m Model, r int, opts Options) Stage {
	tcfg := m.TransformerConfig(cfg)
	topt := cfg.TrainConfig()
	seed := cfg.ReplicateSeed(r)
	topt.Seed = seed
	name := trainStageName(m, r)
	inputs := map[string]any{"model": tcfg, "train": topt, "val_frac": cfg.ValFrac, "init_seed": seed}
	if cfg.Engine == trainrun.EngineTorch {
		inputs["engine"] = cfg.Engine // a Go engine's stage keeps its hash
	}
	return Stage{
		Name:      name,
		Inputs:    inputs,
		Deps:      []string{StageTrainData},
		Resumable: true,
		Kind:      KindTrain,
		Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
			train, val, err := trainSplit(cfg, sc)
			if err != nil {
				return nil, err
			}
			if cfg.Engine == trainrun.EngineTorch {
				return torchTrain(ctx, cfg, sc, opts.Torch, m, r, tcfg, topt, seed, train, val)
			}
			run, err := resumeOrStart(sc, cfg.CheckpointEvery, name, opts.OnStep, tcfg, topt, seed, train, val)
			if err != nil {
				return nil, err
			}
			if err := run.Run(ctx); err != nil {
				var ie *trainrun.InterruptedError
				if errors.As(err, &ie) {
					return nil, fmt.Errorf("interrupted at step %d (checkpoint saved; run again to resume): %w", ie.Step, ie.Err)
				}
				return nil, err
			}
			tr := run.Trainer
			if err := tr.Model.SaveSafetensors(filepath.Join(sc.Dir, modelFile)); err != nil {
				return nil, err
			}
			info := TrainInfo{Spec: m.Spec, Label: RepLabel(m, r), Name: tr.Model.Name(), Params: tcfg.NumParams(),
				Steps: tr.Step, Epochs: tr.Epoch, Seconds: tr.ElapsedTotal().Seconds(), BestVal: tr.BestVal,
				Stopped: tr.Stopped}
			if len(tr.History) > 0 {
				info.FinalTrainLoss = tr.History[len(tr.History)-1].TrainLoss
			}
			info.Tokens = float64(tr.Step) * float64(min(topt.BatchSize, train.Windows())) * float64(cfg.N)
			if math.IsInf(info.BestVal, 0) {
				info.BestVal = math.NaN()
			}
			return []string{modelFile}, writeJSON(sc.Dir, infoFile, jsonSafe(info))
		},
	}
}

// torchTrain is trainStage's run on the PyTorch engine: the run directory
// is the stage's (started as trainrun.StartTorch starts it, with the data
// described so that the engine draws trainSplit's split), resumed from its
// checkpoint when there is one.
func torchTrain(ctx context.Context, cfg Config, sc *StageContext, tor *trainrun.Torch, m Model, r int, tcfg transformer.Config, topt transformer.TrainConfig, seed uint64, train, val transformer.Windows) ([]string, error) {
	if tor == nil {
		tor = &trainrun.Torch{}
	}
	if _, err := tor.Check(); err != nil { // before the stage's directory gets a file
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(sc.Dir, trainrun.CheckpointFile)); err != nil {
		data, err := filepath.Abs(filepath.Join(sc.Deps[StageTrainData].Dir, dataDir))
		if err != nil {
			return nil, err
		}
		meta := map[string]string{"data": data, "val": "", "val_frac": strconv.FormatFloat(cfg.ValFrac, 'g', -1, 64),
			"N": "0", "split_seed": strconv.FormatUint(cfg.Seed, 10), "stage": sc.Label}
		if err := trainrun.StartTorch(sc.Dir, tcfg, topt, seed, meta, train, val); err != nil {
			return nil, err
		}
	} else {
		fmt.Fprintf(sc.Log, "%s: resuming from its checkpoint on the torch engine\n", sc.Label)
	}
	c, err := tor.Train(ctx, trainrun.TorchRun{Dir: sc.Dir, CheckpointEvery: cfg.CheckpointEvery, Log: sc.Log})
	if err != nil {
		var ie *trainrun.InterruptedError
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("interrupted at step %d (checkpoint saved; run again to resume): %w", ie.Step, ie.Err)
		}
		return nil, err
	}
	if c.TrainWindows != train.Windows() {
		return nil, fmt.Errorf("%s: the torch engine trained on %d windows, the split has %d", sc.Label, c.TrainWindows, train.Windows())
	}
	mod, err := transformer.LoadSafetensors(filepath.Join(sc.Dir, modelFile))
	if err != nil {
		return nil, err
	}
	s := c.State
	info := TrainInfo{Spec: m.Spec, Label: RepLabel(m, r), Name: mod.Name(), Params: tcfg.NumParams(),
		Steps: s.Step, Epochs: s.Epoch, Seconds: s.Elapsed.Seconds(), BestVal: s.BestVal, Stopped: s.Stopped}
	if len(c.History) > 0 {
		info.FinalTrainLoss = c.History[len(c.History)-1].TrainLoss
	}
	info.Tokens = float64(s.Step) * float64(min(topt.BatchSize, train.Windows())) * float64(cfg.N)
	if math.IsInf(info.BestVal, 0) {
		info.BestVal = math.NaN()
	}
	return []string{modelFile}, writeJSON(sc.Dir, infoFile, jsonSafe(info))
}

// jsonSafe replaces NaN (which JSON cannot hold) by -1 in a TrainInfo.
func jsonSafe(t TrainInfo) TrainInfo {
	if math.IsNaN(t.BestVal) {
		t.BestVal = -1
	}
	return t
}

// resumeOrStart continues the run whose checkpoint is in the stage's
// directory, or starts one (trainrun.Resume, trainrun.Start): checkpoints
// every `every` steps, at epoch ends, at the end and on cancellation, no
// training log, a progress bar on the stage's log.
func resumeOrStart(sc *StageContext, every int, name string, onStep func(string, int), mc transformer.Config, tc transformer.TrainConfig, seed uint64, train, val transformer.Windows) (*trainrun.Run[*transformer.Activations, *transformer.Model], error) {
	opts := trainrun.Options{Dir: sc.Dir, Meta: map[string]string{"stage": sc.Label}, CheckpointEvery: every,
		FinalCheckpoint: true, Progress: sc.Log, Label: sc.Label}
	if onStep != nil {
		opts.OnStep = func(step int) { onStep(name, step) }
	}
	path := opts.CheckpointPath()
	if _, err := os.Stat(path); err == nil {
		c, err := transformer.LoadCheckpoint(path)
		if err != nil {
			return nil, err
		}
		tr, err := c.Resume(train, val)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(sc.Log, "%s: resuming from checkpoint at step %d\n", sc.Label, tr.Step)
		r, err := trainrun.Resume(tr, opts)
		if err != nil {
			return nil, err
		}
		r.Status = progressText(tr)
		return r, nil
	}
	tr, err := trainrun.NewTrainer(mc, tc, seed, train, val)
	if err != nil {
		return nil, err
	}
	r, err := trainrun.Start(tr, opts)
	if err != nil {
		return nil, err
	}
	r.Status = progressText(tr)
	return r, nil
}

// progressText is the progress bar's text of a training stage.
func progressText(tr *transformer.Trainer) func(step int, loss float64) string {
	return func(step int, loss float64) string {
		return fmt.Sprintf("step %d/%d loss %.4f", step, tr.TotalSteps(), loss)
	}
}

// named gives a trained model the study's label as its name.
type named struct {
	*transformer.Model
	name string
}

func (n named) Name() string { return n.name }

// evalModelStage evaluates replicate r of model m beside CTW.
func evalModelStage(cfg Config, m Model, r int) Stage {
	return Stage{
		Name:   evalStageName(m, r),
		Inputs: map[string]any{"defaults": defaults(cfg), "label": RepLabel(m, r)},
		Deps:   []string{StageTestData, trainStageName(m, r)},
		Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
			test, err := dataset.Read(filepath.Join(sc.Deps[StageTestData].Dir, dataDir))
			if err != nil {
				return nil, err
			}
			model, err := transformer.LoadSafetensors(filepath.Join(sc.Deps[trainStageName(m, r)].Dir, modelFile))
			if err != nil {
				return nil, err
			}
			return evalWithCTW(ctx, cfg, sc, study.Windows(test), named{model, RepLabel(m, r)})
		},
	}
}

// evalWithCTW evaluates CTW and p on the windows and saves the result.
func evalWithCTW(ctx context.Context, cfg Config, sc *StageContext, ws [][]byte, ps ...predict.Predictor) ([]string, error) {
	built, err := methods.Build("ctw", defaults(cfg))
	if err != nil {
		return nil, err
	}
	bar := progress.New(sc.Log, sc.Label, len(ws)).DelayStart(2 * time.Second)
	res, err := eval.Evaluate(ctx, ws, cfg.A, append([]predict.Predictor{built[0].Predictor}, ps...), eval.Config{Workers: cfg.Workers, Progress: bar.Update})
	bar.Done()
	if err != nil {
		return nil, err
	}
	return []string{resFile}, saveResult(sc.Dir, res)
}

// merged is every in-context result of the run in one Result (the
// baselines', then each model's, then the synthetic models'), with the
// construction's separate result and the models' training records.
type merged struct {
	Res       *eval.Result
	Construct *eval.Result
	CInfo     ConstructInfo
	Train     map[string]TrainInfo // by label
}

func mergeResults(cfg Config, deps map[string]*Done) (*merged, error) {
	base, ok := deps[StageBaselines]
	if !ok {
		return nil, errors.New("baselines have not run")
	}
	res, err := loadResult(base)
	if err != nil {
		return nil, err
	}
	mg := &merged{Res: res, Train: map[string]TrainInfo{}}
	add := func(d *Done) error {
		r, err := loadResult(d)
		if err != nil {
			return err
		}
		if r.Windows != res.Windows || r.N != res.N {
			return fmt.Errorf("%s: %d windows of %d, baselines %d of %d", d.Name, r.Windows, r.N, res.Windows, res.N)
		}
		for i, mr := range r.Methods {
			if i != r.Reference && res.Method(mr.Name) == nil {
				res.Methods = append(res.Methods, mr)
			}
		}
		return nil
	}
	for r := range cfg.NumSeeds() {
		for _, m := range cfg.Models() {
			if d, ok := deps[evalStageName(m, r)]; ok {
				if err := add(d); err != nil {
					return nil, err
				}
			}
			if d, ok := deps[trainStageName(m, r)]; ok {
				var ti TrainInfo
				if err := readJSON(d.Dir, infoFile, &ti); err != nil {
					return nil, err
				}
				mg.Train[RepLabel(m, r)] = ti
			}
		}
	}
	if d, ok := deps[StageSynth]; ok {
		if err := add(d); err != nil {
			return nil, err
		}
	}
	if d, ok := deps[StageConstruct]; ok {
		if mg.Construct, err = loadResult(d); err != nil {
			return nil, err
		}
		if err := readJSON(d.Dir, "construct.json", &mg.CInfo); err != nil {
			return nil, err
		}
	}
	return mg, nil
}
