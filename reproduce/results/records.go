package results

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/jsonfloat"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
)

// ConstructInfo is the comparison of the construction with CTW.
type ConstructInfo struct {
	Windows int
	// MaxProbDiff is the largest |P_construct − P_CTW| over every position,
	// symbol and window compared.
	MaxProbDiff float64
	Layers      int
	Seconds     float64
}

// ReadTrainLog reads the training log (trainrun.LogFile) in dir
// (trainrun.ReadLog).
func ReadTrainLog(dir string) ([]transformer.LogEntry, error) {
	f, err := os.Open(filepath.Join(dir, trainrun.LogFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return trainrun.ReadLog(f)
}

// dynamicsRun is a model replicate whose training dynamics are measured.
type dynamicsRun struct {
	m study.Model
	r int
}

// dynamicsRuns are the measured (model, replicate) pairs in the study's
// order: replicate by replicate, model by model.
func dynamicsRuns(cfg study.Config) []dynamicsRun {
	var out []dynamicsRun
	for r := range cfg.NumSeeds() {
		if cfg.DynamicsOf(r) == "" {
			continue
		}
		for _, m := range cfg.Models() {
			if r >= cfg.SeedsOf(m) {
				continue
			}
			out = append(out, dynamicsRun{m, r})
		}
	}
	return out
}

// DynamicsStageNames are the names of the study's dynamics stages.
func DynamicsStageNames(cfg study.Config) []string {
	var out []string
	for _, d := range dynamicsRuns(cfg) {
		out = append(out, DynamicsStageName(d.m, d.r))
	}
	return out
}

// ReadDynamics reads the results of the dynamics stages among deps, in
// the study's order, with the label of each.
func ReadDynamics(cfg study.Config, deps map[string]*pipeline.Done) ([]string, []*dynamics.Result, error) {
	var labels []string
	var out []*dynamics.Result
	for _, d := range dynamicsRuns(cfg) {
		done, ok := deps[DynamicsStageName(d.m, d.r)]
		if !ok {
			continue
		}
		res, err := dynamics.ReadResult(filepath.Join(done.Dir, dynamics.Files.JSON))
		if err != nil {
			return nil, nil, err
		}
		labels, out = append(labels, RepLabel(d.m, d.r)), append(out, res)
	}
	return labels, out, nil
}

// SaveResult writes an evaluation stage's result.
func SaveResult(dir string, res *eval.Result) error {
	return fsutil.WriteFile(filepath.Join(dir, ResultFile), true, res.WriteJSON)
}

// LoadResult reads the result of the evaluation stage d.
func LoadResult(d *pipeline.Done) (*eval.Result, error) {
	return eval.LoadJSONFile(filepath.Join(d.Dir, ResultFile))
}

// Fig5Info is what the Fig. 5 stage records: every head's scores and the
// head and queries of the suffix-match panel.
type Fig5Info struct {
	Model  string
	Scores []attnmap.HeadScore
	// Windows is the number of test windows of the null test
	// (attnmap.ScoreWindows); the figures show window 0.
	Windows int
	Layer   int // 1-based, of the suffix-match panel
	Head    int
	K       int
	Offset  int
	Mass    float64
	Chance  float64
	Queries []int
	// ProfileWindows is the number of test windows of the per-position
	// profile (attnmap.PositionProfile); Drops are the labelled heads
	// whose label mass falls below half its best in one eighth of the
	// window (attnmap.Profile.Drops).
	ProfileWindows int
	Drops          []attnmap.Drop
}

// SynthRecord is what a synthetic-model stage records.
type SynthRecord struct {
	Variant string
	Label   string
	Params  int
	Steps   int
	Seconds float64
	BestVal jsonfloat.Float // NaN without validation (-1 in records of before)
	Note    string
	// EarlierSeconds is as TrainInfo's: the training time of the
	// invocations before the one that completed the stage (0, not
	// written, without a resumption).
	EarlierSeconds float64 `json:",omitempty"`
}

// SynthLabel is the method name of the model that serves variant v under
// encoding enc (EffectiveEncoding): the paper's label when that is
// synth.Paper, "LABEL [enc]" otherwise.
func SynthLabel(v synth.Variant, enc string) string {
	enc = EffectiveEncoding(v, enc)
	if enc == synth.Paper || enc == "" {
		return synth.Label(v)
	}
	return synth.Label(v) + " [" + enc + "]"
}

// EffectiveEncoding is the encoding whose model serves variant v under
// enc. Models whose features do not change are not trained twice: "w/o
// counts" sees neither a position nor a count, so every encoding gives the
// paper's features; under synth.Log the count variants see exactly the
// paper's features (the counts as ln(1+c) either way; only TF 2-0's
// position changes).
func EffectiveEncoding(v synth.Variant, enc string) string {
	if v == synth.WithoutCounts || (enc == synth.Log && v != synth.TF20) {
		return synth.Paper
	}
	return enc
}

// SynthRepLabel is the method name of replicate r of the TF 2-0 model
// named base: base for r = 0, "base [seed r]" otherwise.
func SynthRepLabel(base string, r int) string {
	if r == 0 {
		return base
	}
	return fmt.Sprintf("%s [seed %d]", base, r)
}

// SynthGap is the paired difference of TF 2-0 and TF 2-0 w/ all counts
// under one encoding: mean loss differences over the window and over the
// second half, nats per symbol, with 95% intervals across test windows.
type SynthGap struct {
	Encoding   string
	Replicate  int
	TF20       string
	AllCounts  string
	Window     JSONInterval
	SecondHalf JSONInterval
}

// LadderProfileWindows is the number of test windows of a ladder profile
// (the rule's criterion B: "the mean over the first 100 test windows").
const LadderProfileWindows = 100

// LadderProfile is what a profile stage keeps: per layer-1 head, the mean
// attention weight (over the profile windows) on the previous key at every
// query position, and the heads' labels.
type LadderProfile struct {
	Model   string `json:"model"`
	Windows int    `json:"windows"`
	// Prev[h][q] is layer-1 head h's mean weight on key q−1 at query q
	// (NaN-free: q = 0 has no previous key and is 0).
	Prev   [][]float64         `json:"prev"`
	Scores []attnmap.HeadScore `json:"scores"`
}

// Best is the layer-1 head that puts the most weight on key q−1 at query
// q, whichever head it is, and that weight: head is 1-based, 0 (with w =
// −Inf) when no head has a value at q.
func (p LadderProfile) Best(q int) (w float64, head int) {
	w = math.Inf(-1)
	for h, prev := range p.Prev {
		if q >= 0 && q < len(prev) && prev[q] > w {
			w, head = prev[q], h+1
		}
	}
	return w, head
}

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
	// BestVal is NaN without validation (-1 in records of before);
	// both losses are in JSON by jsonfloat's convention.
	BestVal        jsonfloat.Float
	FinalTrainLoss jsonfloat.Float
	Stopped        bool
}
