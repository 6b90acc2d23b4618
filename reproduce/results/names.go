package results

import (
	"fmt"

	"github.com/vomc/vomc/reproduce/study"
)

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

// RepSuffix is the stage-name suffix of training replicate r: none for
// replicate 0, "-s1", "-s2", … otherwise.
func RepSuffix(r int) string {
	if r == 0 {
		return ""
	}
	return fmt.Sprintf("-s%d", r)
}

// RepLabel is the method name of replicate r of model m in the results:
// the model's label for replicate 0, "LABEL [seed r]" otherwise.
func RepLabel(m study.Model, r int) string {
	if r == 0 {
		return m.Label()
	}
	return fmt.Sprintf("%s [seed %d]", m.Label(), r)
}

// TrainStageName names the training stage of replicate r of model m.
func TrainStageName(m study.Model, r int) string { return "train-tf-" + m.Slug() + RepSuffix(r) }

// EvalStageName names the evaluation stage of replicate r of model m.
func EvalStageName(m study.Model, r int) string { return "eval-tf-" + m.Slug() + RepSuffix(r) }

// ProfileStageName names replicate r's attention-profile stage of model
// m (the budget ladder).
func ProfileStageName(m study.Model, r int) string { return "profile-tf-" + m.Slug() + RepSuffix(r) }

// DynamicsStageName names replicate r's dynamics stage of model m.
func DynamicsStageName(m study.Model, r int) string { return "dynamics-tf-" + m.Slug() + RepSuffix(r) }

// DataDir is the data set's directory inside its stage.
const DataDir = "data"

// Files of a training stage: the trained model and its TrainInfo.
const (
	ModelFile = "model.safetensors"
	InfoFile  = "train.json"
)

// ResultFile is the result file of an evaluation stage.
const ResultFile = "results.json"

// ValFile is an evaluation stage's result on the validation windows.
const ValFile = "val.json"

// Files of the Fig. 5 stage.
const (
	Fig5HeatmapFile = "fig5_heatmaps.png"
	Fig5SuffixFile  = "fig5_suffix_match.png"
	Fig5ProfileFile = "fig5_profile.png"
	Fig5JSON        = "fig5.json"
)

// GapsFile holds, per encoding, the paired gap "TF 2-0 − TF 2-0 w/ all
// counts" (written by the fig8-synth stage).
const GapsFile = "gaps.json"

// LadderProfileJSON is a profile stage's record.
const LadderProfileJSON = "profile.json"

// LadderProfileFile and LadderHeatmapFile are a profile stage's figures.
const (
	LadderProfileFile = "profile.png"
	LadderHeatmapFile = "heatmaps.png"
)

// KNTuneWindows is the most training windows KN's discount is tuned on.
const KNTuneWindows = 1000
