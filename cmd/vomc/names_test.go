package main

import (
	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/source/treefile"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/trainrun"
)

// The names the tests use for the libraries' files, types and functions.

// The files of a training run's directory (see trainrun).
const (
	trainCheckpoint  = trainrun.CheckpointFile
	trainModel       = trainrun.ModelFile
	trainConfigJSON  = trainrun.ConfigFile
	trainTrainConfig = trainrun.TrainConfigFile
	trainLog         = trainrun.LogFile
	trainCurvePNG    = trainrun.CurvePNG
	trainCurveSVG    = trainrun.CurveSVG
)

// The files of a synth run's directory besides those of a training run
// (model.safetensors, train.jsonl, checkpoint.safetensors, curve.*).
const (
	synthModel = trainrun.ModelFile
	synthLog   = trainrun.LogFile
	synthInfo  = synth.SummaryFile
)

// attnReport is the content of the scores.json of 'vomc attention'.
type attnReport = attnmap.Report

// readTree is treefile.Read.
var readTree = treefile.Read

// sharedTreesWarning is experiment.SharedTreesWarning.
var sharedTreesWarning = experiment.SharedTreesWarning

// checkEvalMemory refuses evaluating spec on the data set data (tuned on
// train) when its estimate exceeds the available memory.
func checkEvalMemory(data, train, spec string, workers int) error {
	list, err := methods.Parse(spec)
	if err != nil {
		return err
	}
	return experiment.CheckEvalMemory(data, train, list, workers, memoryLimit())
}

// reproduceConfig is study.Layered with its errors as usage errors.
func reproduceConfig(preset, file string, sets []string) (study.Config, error) {
	cfg, err := study.Layered(preset, file, sets)
	return cfg, asUsage(err)
}
