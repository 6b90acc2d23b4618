// Package study is the configuration of the study that package reproduce
// runs: the presets (tiny … paper), the keys that --set and --config take
// (Config.Set, Keys), validation, the model notation (Model, ParseModel:
// heads per layer with -ff, -ln, -sin and -xK suffixes), the training
// options derived from transformer.Options (Config.TrainConfig), and the
// training cost estimates. It imports nothing of reproduce's.
package study
