package reproduce

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/trainrun"
)

// Files of a training stage: the trained model and its TrainInfo.
const (
	modelFile = "model.safetensors"
	infoFile  = "train.json"
)

// TrainInfo is what a training stage records besides the weights.
type TrainInfo struct {
	Spec, Label, Name string
	Params            int
	Steps, Epochs     int
	Tokens            float64
	Seconds           float64 // training wall time, over all resumptions
	// EarlierSeconds is the training wall time of the invocations before
	// the one that completed the stage, up to the checkpoint that one
	// resumed from (0, and not written, when it started afresh): the
	// stage took about EarlierSeconds plus its recorded time (stageTime).
	EarlierSeconds float64 `json:",omitempty"`
	BestVal        float64 // NaN without validation
	FinalTrainLoss float64
	Stopped        bool
}

// repSuffix is the stage-name suffix of training replicate r: none for
// replicate 0, "-s1", "-s2", … otherwise.
func repSuffix(r int) string {
	if r == 0 {
		return ""
	}
	return fmt.Sprintf("-s%d", r)
}

// trainStageName names the training stage of replicate r of model m.
func trainStageName(m Model, r int) string { return "train-tf-" + m.Slug() + repSuffix(r) }

// RepLabel is the method name of replicate r of model m in the results:
// the model's label for replicate 0, "LABEL [seed r]" otherwise.
func RepLabel(m Model, r int) string {
	if r == 0 {
		return m.Label()
	}
	return fmt.Sprintf("%s [seed %d]", m.Label(), r)
}

// trainSplit reads the training set and splits it by tree
// (transformer.SplitByTree with the study's seed), as trainrun.DataSpec
// describes it: the same metadata in every engine's checkpoint as in
// 'vomc train”s, plus the stage's label.
func trainSplit(cfg Config, sc *pipeline.StageContext) (train, val transformer.Windows, meta map[string]string, err error) {
	spec := trainrun.DataSpec{Data: filepath.Join(sc.Deps[StageTrainData].Dir, dataDir), ValFrac: cfg.ValFrac, SplitSeed: cfg.Seed}
	train, val, _, meta, err = spec.Load()
	if err != nil {
		return nil, nil, nil, err
	}
	meta["stage"] = sc.Label
	return train, val, meta, nil
}

// trainStage trains replicate r of model m (seed cfg.ReplicateSeed(r) for
// the initialisation and the shuffling; the same training data and split
// for every replicate).
func trainStage(cfg Config, m Model, r int, opts Options) pipeline.Stage {
	tcfg := m.TransformerConfig(cfg)
	topt := m.TrainConfig(cfg)
	seed := cfg.ReplicateSeed(r)
	topt.Seed = seed
	name := trainStageName(m, r)
	inputs := map[string]any{"model": tcfg, "train": topt, "val_frac": cfg.ValFrac, "init_seed": seed}
	if cfg.Engine == trainrun.EngineTorch {
		inputs["engine"] = cfg.Engine // a Go engine's stage keeps its hash
	}
	dyn := cfg.snapshotsOf(r)
	if dyn != "" {
		inputs["snapshots"] = dyn // likewise without snapshots
	}
	return pipeline.Stage{
		Name:      name,
		Inputs:    inputs,
		Deps:      []string{StageTrainData},
		Resumable: true,
		Kind:      pipeline.KindTrain,
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			train, val, meta, err := trainSplit(cfg, sc)
			if err != nil {
				return nil, err
			}
			snaps, err := trainrun.SnapshotSteps(dyn, transformer.TotalSteps(topt, train.Windows()))
			if err != nil {
				return nil, err
			}
			if dyn != "" {
				meta[trainrun.MetaSnapshots] = dyn
			}
			if cfg.Engine == trainrun.EngineTorch {
				return torchTrain(ctx, cfg, sc, opts, m, r, tcfg, topt, seed, meta, snaps, train, val)
			}
			run, err := resumeOrStart(sc, opts, cfg.CheckpointEvery, name, tcfg, topt, seed, meta, snaps, train, val)
			if err != nil {
				return nil, err
			}
			earlier := run.Trainer.Elapsed.Seconds() // restored from the checkpoint; 0 on a fresh start
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
				Steps: tr.Step, Epochs: tr.Epoch, Seconds: tr.ElapsedTotal().Seconds(), EarlierSeconds: earlier, BestVal: tr.BestVal,
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
func torchTrain(ctx context.Context, cfg Config, sc *pipeline.StageContext, opts Options, m Model, r int, tcfg transformer.Config, topt transformer.TrainConfig, seed uint64, meta map[string]string, snaps []int, train, val transformer.Windows) ([]string, error) {
	tor := opts.Torch
	if tor == nil {
		tor = &trainrun.Torch{}
	}
	if _, err := tor.Check(); err != nil { // before the stage's directory gets a file
		return nil, err
	}
	// meta["data"] is the training set where it is now (the output
	// directory may have moved since the run started; its checksum is
	// checked)
	var earlier float64 // training time before this invocation (TrainInfo.EarlierSeconds)
	if _, err := os.Stat(filepath.Join(sc.Dir, trainrun.CheckpointFile)); err != nil {
		if err := trainrun.StartTorch(sc.Dir, tcfg, topt, seed, meta, train, val); err != nil {
			return nil, err
		}
	} else {
		fmt.Fprintf(sc.Log, "%s: resuming from its checkpoint on the torch engine\n", sc.Label)
		// only for the record: a checkpoint that cannot be read here is
		// left to the engine to judge
		if c, err := transformer.LoadCheckpoint(filepath.Join(sc.Dir, trainrun.CheckpointFile)); err == nil {
			earlier = c.State.Elapsed.Seconds()
		}
	}
	c, err := tor.Train(ctx, trainrun.TorchRun{Dir: sc.Dir, CheckpointEvery: cfg.CheckpointEvery, Data: meta["data"], Snapshots: snaps, Log: sc.Log})
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
	mod, err := transformer.LoadSafetensorsOn(opts.Backend, filepath.Join(sc.Dir, modelFile))
	if err != nil {
		return nil, err
	}
	s := c.State
	info := TrainInfo{Spec: m.Spec, Label: RepLabel(m, r), Name: mod.Name(), Params: tcfg.NumParams(),
		Steps: s.Step, Epochs: s.Epoch, Seconds: s.Elapsed.Seconds(), EarlierSeconds: earlier, BestVal: s.BestVal, Stopped: s.Stopped}
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
// every `every` steps, at epoch ends, at the end and on cancellation, the
// training log and curve (trainrun.LogFile), a progress bar on the
// stage's log.
func resumeOrStart(sc *pipeline.StageContext, o Options, every int, name string, mc transformer.Config, tc transformer.TrainConfig, seed uint64, meta map[string]string, snaps []int, train, val transformer.Windows) (*trainrun.Run[*transformer.Activations, *transformer.Model], error) {
	opts := trainrun.Options{Dir: sc.Dir, Meta: meta, CheckpointEvery: every, Snapshots: snaps,
		FinalCheckpoint: true, Progress: sc.Log, Label: sc.Label, Log: true}
	if o.OnStep != nil {
		opts.OnStep = func(step int) { o.OnStep(name, step) }
	}
	be := o.Backend
	path := opts.CheckpointPath()
	if _, err := os.Stat(path); err == nil {
		c, err := transformer.LoadCheckpoint(path)
		if err != nil {
			return nil, err
		}
		tr, err := c.ResumeOn(be, train, val)
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
	tr, err := trainrun.NewTrainer(be, mc, tc, seed, train, val)
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
