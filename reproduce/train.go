package reproduce

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/jsonfloat"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
)

// trainData is the training set of the study, split by tree
// (transformer.SplitByTree with the study's seed) as trainrun.DataSpec
// describes it: the same metadata in every engine's checkpoint as in
// 'vomc train”s.
func trainData(cfg study.Config, sc *pipeline.StageContext) trainrun.DataSpec {
	return trainrun.DataSpec{Data: filepath.Join(sc.Deps[results.StageTrainData].Dir, results.DataDir), ValFrac: cfg.ValFrac, SplitSeed: cfg.Seed}
}

// trainSplit reads the training set and splits it (trainData); meta also
// holds the stage's label, as in the training stages' checkpoints.
func trainSplit(cfg study.Config, sc *pipeline.StageContext) (train, val transformer.Windows, meta map[string]string, err error) {
	train, val, _, meta, err = trainData(cfg, sc).Load()
	if err != nil {
		return nil, nil, nil, err
	}
	meta["stage"] = sc.Label
	return train, val, meta, nil
}

// trainJob is the run-driver job of a training stage (trainrun's
// ModeContinue: resumed from the checkpoint a previous run of the stage
// left in its directory, else started): the training set split by tree
// (trainData; the checkpoints' metadata also holds the stage's label, as
// trainSplit's), checkpoints every
// cfg.CheckpointEvery steps, at epoch ends, at the end and on
// cancellation, the training log and curve (trainrun.LogFile), a progress
// bar on the stage's log, and a line there when the stage resumes.
func trainJob(cfg study.Config, sc *pipeline.StageContext, o Options, name string, m trainrun.Model, tc transformer.TrainConfig) trainrun.Job {
	j := trainrun.Job{Dir: sc.Dir, Mode: trainrun.ModeContinue, Model: m, Train: tc,
		Data: trainData(cfg, sc), Meta: map[string]string{"stage": sc.Label},
		CheckpointEvery: cfg.CheckpointEvery, FinalCheckpoint: true, Events: quiet{sc.Events}, TorchOutput: events.LogWriter(sc.Events), Label: sc.Label,
		Status: func(step, total int, loss float64) string {
			return fmt.Sprintf("step %d/%d loss %.4f", step, total, loss)
		},
		OnOpen: func(r trainrun.Opened) {
			switch {
			case r.Resumed && r.Engine == trainrun.EngineTorch:
				sc.Events.Log(sc.Label + ": resuming from its checkpoint on the torch engine")
			case r.Resumed:
				sc.Events.Log(fmt.Sprintf("%s: resuming from checkpoint at step %d", sc.Label, r.Step))
			}
		},
	}
	if o.OnStep != nil {
		j.OnStep = func(step int) { o.OnStep(name, step) }
	}
	return j
}

// trainStage trains replicate r of model m (seed cfg.ReplicateSeed(r) for
// the initialisation and the shuffling; the same training data and split
// for every replicate) on the study's engine.
func trainStage(cfg study.Config, m study.Model, r int, opts Options) pipeline.Stage {
	tcfg := m.TransformerConfig(cfg)
	topt := m.TrainConfig(cfg)
	seed := cfg.ReplicateSeed(r)
	topt.Seed = seed
	name := results.TrainStageName(m, r)
	inputs := map[string]any{"model": tcfg, "train": topt, "val_frac": cfg.ValFrac, "init_seed": seed}
	if cfg.Engine == trainrun.EngineTorch {
		inputs["engine"] = cfg.Engine // a Go engine's stage keeps its hash
	}
	dyn := cfg.SnapshotsOf(r)
	if dyn != "" {
		inputs["snapshots"] = dyn // likewise without snapshots
	}
	return pipeline.Stage{
		Name:      name,
		Inputs:    inputs,
		Deps:      []string{results.StageTrainData},
		Resumable: true,
		Kind:      pipeline.KindTrain,
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			// the stage records its configuration (inputs, train.json):
			// no config files beside a Go-engine run's model, as ever
			j := trainJob(cfg, sc, opts, name, trainrun.Transformer{Config: tcfg, NoConfigFiles: true}, topt)
			j.Snapshots = dyn
			s, err := opts.Engine.Train(ctx, j)
			if err != nil {
				return nil, stageError(err)
			}
			info := results.TrainInfo{Spec: m.Spec, Label: results.RepLabel(m, r), Name: s.Name, Params: tcfg.NumParams(),
				Steps: s.Step, Epochs: s.Epoch, Seconds: s.Elapsed.Seconds(), EarlierSeconds: s.Earlier.Seconds(), BestVal: jsonfloat.Float(s.BestVal),
				Stopped: s.Stopped, FinalTrainLoss: jsonfloat.Float(s.FinalTrainLoss())}
			info.Tokens = float64(s.Step) * float64(min(topt.BatchSize, s.TrainWindows)) * float64(cfg.N)
			if math.IsInf(s.BestVal, 0) {
				info.BestVal = jsonfloat.Float(math.NaN()) // no validation
			}
			return []string{results.ModelFile}, results.WriteJSON(sc.Dir, results.InfoFile, info)
		},
	}
}

// stageError says how to go on after an interrupted training stage.
func stageError(err error) error {
	var ie *trainrun.InterruptedError
	if errors.As(err, &ie) {
		return fmt.Errorf("interrupted at step %d (checkpoint saved; run again to resume): %w", ie.Step, ie.Err)
	}
	return err
}
