// Package results is what the study's stages leave behind and how the
// figures and the report read it: the stage names (StageTrainData, …,
// TrainStageName, RepLabel) and the files inside a stage (ModelFile,
// InfoFile, ResultFile, ValFile, …), the stages' records (TrainInfo,
// ConstructInfo, Fig5Info, SynthRecord, SynthGap, LadderProfile), the
// merged results of a run (Merged, Merge), statistics across training
// replicates (SeedStatsOf) and the methods selected on validation windows
// (SelectedFixedOrder). It computes no verdict and draws nothing.
package results
