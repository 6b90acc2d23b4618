package study

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
)

// Config is the whole study's configuration. Every field can be set by
// name (its JSON key) with Config.Set, from a JSON file with Config.Load, or
// by starting from a preset (Preset). Model lists use the notation
// "H1,H2,…[-ff][-ln][-sin]": the number of attention heads of each layer
// (so the number of layers is the list's length), "-ff" removes the
// feed-forward sub-layers, "-ln" the LayerNorms, and "-sin" replaces the
// learned positional embeddings by fixed sinusoidal ones ("4,4-ff-ln" is a
// two-layer attention-only network with 4 heads per layer).
type Config struct {
	// Preset names the preset the configuration started from.
	Preset string `json:"preset"`
	// A is the alphabet size; Depths the maximum tree depths D of the
	// prior (one drawn uniformly per tree); Lambda the stop probability λ;
	// Alpha the symmetric Dirichlet α.
	A      int     `json:"A"`
	Depths []int   `json:"depths"`
	Lambda float64 `json:"lambda"`
	Alpha  float64 `json:"alpha"`
	// Leaves is the leaf generator of the training and test trees:
	// "dirichlet" (or empty: Dir(α), under which CTW is exactly
	// Bayes-optimal when there is one depth), "sparse", or "mixed" (each
	// tree's leaves from one of
	// the two, sparse with probability SparseFrac; the paper's training
	// distribution). See source.LeafKind.
	Leaves string `json:"leaves,omitempty"`
	// SparseFrac is, for mixed leaves, the probability that a tree gets
	// sparse leaves (0: source.DefaultSparseFrac).
	SparseFrac float64 `json:"sparse_frac,omitempty"`
	// N is the context window length.
	N int `json:"N"`
	// TrainTrees is the number K of training trees, TrainNK the symbols
	// N_K drawn per tree (cut into ⌊N_K/N⌋ windows), ValFrac the fraction
	// of the training trees held out for validation (early stopping).
	TrainTrees int     `json:"train_trees"`
	TrainNK    int     `json:"train_NK"`
	ValFrac    float64 `json:"val_frac"`
	// TestTrees is the number of test windows (one fresh window per tree,
	// so that CTW is exactly Bayes-optimal on each).
	TestTrees int `json:"test_trees"`
	// Embed is E; Fig3Models the full transformers of Fig. 3 (and Fig. 10);
	// Fig4Models the attention-only and single-head variants of Fig. 4,
	// drawn beside the largest full model of Fig3Models with 4 or fewer
	// layers (the paper's "full four-layer transformer").
	Embed      int      `json:"E"`
	Fig3Models []string `json:"fig3_models"`
	Fig4Models []string `json:"fig4_models"`
	// Training: windows per step, peak and final learning rate, warm-up
	// steps, the learning-rate schedule after it (transformer.Schedules;
	// "": cosine), the gradient-norm bound (nil: the declared default, 1;
	// 0: no clipping), maximum epochs, maximum steps (0: none),
	// early-stopping patience in epochs (0: none), the paper's
	// window-summed loss. LRSchedule and Clip are left out of the hashed
	// form at their defaults, so that the stages of configurations made
	// before them keep their hashes.
	Batch      int      `json:"batch"`
	LR         float64  `json:"lr"`
	MinLR      float64  `json:"min_lr"`
	Warmup     int      `json:"warmup"`
	LRSchedule string   `json:"lr_schedule,omitempty"`
	Clip       *float64 `json:"clip,omitempty"`
	Epochs     int      `json:"epochs"`
	MaxSteps   int      `json:"max_steps"`
	Patience   int      `json:"patience"`
	SumLoss    bool     `json:"sum_loss"`
	// CheckpointEvery is the checkpoint interval in steps.
	CheckpointEvery int `json:"checkpoint_every"`
	// ConstructWindows is the number of test windows on which the (D+2)-layer
	// construction is run beside CTW (it runs in float64 and is slower).
	ConstructWindows int `json:"construct_windows"`
	// HeatmapModel is the model (of Fig3Models) whose attention maps Fig. 5
	// shows; HeatmapSuffix the suffix length k of the suffix-match panel.
	HeatmapModel  string `json:"heatmap_model"`
	HeatmapSuffix int    `json:"heatmap_suffix"`
	// SynthVariants are the TF 2-0 variants of Fig. 8 and SynthSteps their
	// training steps (0: as the transformers).
	SynthVariants []string `json:"synth_variants"`
	SynthSteps    int      `json:"synth_steps"`
	// SynthEncodings are the encodings of TF 2-0's position and of the
	// counts (synth.Paper, synth.Log, synth.Linear) under which every
	// variant is trained; empty means the paper's only. Under log and
	// linear every variant sees the same representation of the position
	// and the counts; under the paper's, TF 2-0 decodes its position from
	// (cos, sin) while the count variants get ln(1+c). Fig. 8 is drawn once
	// per encoding, and the report gives the paired gap "TF 2-0 − TF 2-0 w/
	// all counts" under each.
	SynthEncodings []string `json:"synth_encodings,omitempty"`
	// SynthSeeds is the number of training replicates of every TF 2-0
	// model (0: Seeds). They are cheap beside the transformers, so a run
	// can replicate them more often.
	SynthSeeds int `json:"synth_seeds,omitempty"`
	// ExtraMethods are methods (methods.Build specs, comma-separated)
	// evaluated with the baselines and drawn in Fig. 3 beside CTW, e.g.
	// "markov:k=1,markov:k=2"; empty: none.
	ExtraMethods string `json:"extra_methods,omitempty"`
	// Smooth is the moving-average width of the figures (0: N/100).
	Smooth int `json:"smooth"`
	// Seed drives every random choice (data, initialisation, shuffling).
	Seed uint64 `json:"seed"`
	// Seeds is the number S of training replicates of every transformer
	// (0 or 1: one). Replicate r trains on the same data and split with the
	// initialisation and shuffling seed ReplicateSeed(r); replicate 0 is the
	// single run of S = 1, whose stages and cache keys it keeps.
	Seeds int `json:"seeds,omitempty"`
	// ModelSeeds overrides Seeds for the models it names (by their spec in
	// Fig3Models/Fig4Models, e.g. "4,4,4-x2"): model m trains
	// SeedsOf(m) replicates, 0..SeedsOf(m)−1. Replicate r of a model keeps
	// the stage, seed and label it has under Seeds, so changing a model's
	// count adds or drops replicates without retraining the others.
	ModelSeeds map[string]int `json:"model_seeds,omitempty"`
	// Ladder, when set, gives every trained model replicate an attention
	// profile stage (its heads by query position on 100 test windows) and
	// the report a section that applies the budget ladder's decision rule
	// (docs/figures/ladder/README.md) and draws excess against training
	// tokens (the ladder preset).
	Ladder bool `json:"ladder,omitempty"`
	// Workers is the number of goroutines for data and evaluation (0: all
	// cores); it does not change any result.
	Workers int `json:"workers"`
	// Engine trains the transformers: "go" (or empty) for vomc's CPU
	// engine, "torch" for vomc's PyTorch engine (trainrun.Torch; the
	// caller makes Options.Engine from it, on CUDA when available). Both see the same windows
	// from the same initial parameters; their numbers agree to float32
	// rounding. The TF 2-0 models of Fig. 8 always train on the Go engine.
	Engine string `json:"engine,omitempty"`
	// Dynamics, when set, is a snapshot specification (trainrun.SnapshotSteps,
	// e.g. "log:30"): every transformer keeps its parameters at those steps
	// and a stage per model measures its training dynamics (package
	// dynamics: KL per position from unigram, Markov(k), KN and CTW to the
	// model at each snapshot, head labels), drawn in the report's "Training
	// dynamics" section. Empty: off (the training stages keep their hashes).
	Dynamics string `json:"dynamics,omitempty"`
	// DynamicsWindows is the number of probe windows (0: min(200, test
	// windows)).
	DynamicsWindows int `json:"dynamics_windows,omitempty"`
	// DynamicsSeeds is the number of training replicates whose dynamics
	// are measured (0: replicate 0 only; the others train without
	// snapshots).
	DynamicsSeeds int `json:"dynamics_seeds,omitempty"`
	// SnapshotSeeds is the number of training replicates that keep their
	// snapshots (0: DynamicsSeeds; at least DynamicsSeeds): the replicates
	// beyond DynamicsSeeds get no dynamics stage, but their snapshots can
	// be measured later with 'vomc dynamics --run' (a replication of
	// chosen models at the cost of their measurement only).
	SnapshotSeeds int `json:"snapshot_seeds,omitempty"`
	// DynamicsHeadWindows is the number of probe windows the head labels
	// of every snapshot are computed on (0: 50; the null test's cost grows
	// as its square).
	DynamicsHeadWindows int `json:"dynamics_head_windows,omitempty"`
}

// SnapshotsOf is the snapshot specification of training replicate r's
// training: Dynamics for the first max(1, DynamicsSeeds, SnapshotSeeds)
// replicates, "" for the others.
func (c Config) SnapshotsOf(r int) string {
	if r >= max(1, c.DynamicsSeeds, c.SnapshotSeeds) {
		return ""
	}
	return c.Dynamics
}

// DynamicsOf is the snapshot specification of training replicate r:
// Dynamics for the first max(1, DynamicsSeeds) replicates, "" for the
// others.
func (c Config) DynamicsOf(r int) string {
	if r >= max(1, c.DynamicsSeeds) {
		return ""
	}
	return c.Dynamics
}

// Presets lists the preset names in order of size.
var Presets = []string{"tiny", "small", "depth5", "ladder", "medium", "paper"}

// Preset returns the named preset:
//
//   - tiny: A=3, D=2, N=64, 800 training windows, E=32, 600 steps of 32
//     windows per model — a real end-to-end run in under a minute;
//   - small: A=3, D=3, λ=0.15, α=0.5, N=256, E=64, 4 heads, 10000 training
//     trees, 4000 steps of 32 windows (32.8M tokens) per model at a peak
//     learning rate of 2e-3 — about 50–60 minutes on 2 cores (1800 steps at
//     1e-3 stop before the 2-layer model's induction-head transition, seen
//     here near 20M tokens; 4000 steps at 2e-3 bring it within 0.022 nats
//     of CTW over the second half of the window); Fig. 8's TF 2-0 variants
//     are trained under all three encodings with three seeds each, and
//     TF(4,4) also with sinusoidal positions (learned ones fail at some
//     positions, see attnmap.Profile.Drops); the 2-layer attention-only
//     model is also trained for twice the steps (Fig. 4's budget evidence);
//   - medium: D=4, N=512, E=128, 8 heads, layers 1–4 and 6, 6000 steps of 64
//     windows — many hours on 2 cores;
//   - paper: the paper's Appendix "Training Details": depths 1..5 mixed,
//     N=1536, E=128, 8 heads, K=20000, N_K=5120, batch 512, ≤ 100 epochs,
//     patience 15, AdamW with PyTorch's defaults at a constant lr 1e-3
//     without warm-up or clipping, 8192 test trees — a GPU-class machine's
//     job.
func Preset(name string) (Config, error) {
	c := Config{Preset: name, A: 3, Lambda: 0.15, Alpha: 0.5, ValFrac: 0.05, Epochs: 100,
		LR: 1e-3, MinLR: 1e-5, Warmup: 100, Seed: 1, HeatmapSuffix: 3, CheckpointEvery: 100,
		SynthVariants: []string{"tf20", "nocounts", "totalcounts", "allcounts"}}
	switch name {
	case "tiny":
		c.Depths, c.N = []int{2}, 64
		c.TrainTrees, c.TrainNK, c.TestTrees = 100, 512, 200
		c.Embed = 32
		c.Fig3Models = []string{"2", "2,2", "2,2,2", "2,2,2,2"}
		c.Fig4Models = []string{"2,2-ff-ln", "2,2,2,2-ff-ln", "1,1", "1,1,1-ff"}
		c.Batch, c.LR, c.Warmup, c.MaxSteps = 32, 3e-3, 30, 600
		c.CheckpointEvery = 100
		c.ConstructWindows, c.HeatmapModel, c.HeatmapSuffix = 20, "2,2", 2
		c.SynthSteps = 600
	case "small":
		c.Depths, c.N = []int{3}, 256
		c.SynthEncodings = []string{synth.Paper, synth.Log, synth.Linear}
		c.SynthSeeds = 3
		c.TrainTrees, c.TrainNK, c.TestTrees = 10000, 2560, 1000
		c.Embed = 64
		c.Fig3Models = []string{"4", "4,4", "4,4,4", "4,4,4,4", "4,4-sin"}
		// the 2-layer attention-only model also at twice the steps: the
		// evidence of Fig. 4's budget check
		c.Fig4Models = []string{"4,4-ff-ln", "4,4,4,4-ff-ln", "1,1", "1,1,1-ff", "4,4-ff-ln-x2"}
		c.Batch, c.MaxSteps, c.LR, c.Warmup = 32, 4000, 2e-3, 200
		c.ConstructWindows, c.HeatmapModel = 50, "4,4"
		c.ExtraMethods = markovUpTo(3)
	case "depth5":
		// The paper's data distribution at N = 512: mixed depths 1..5 and
		// both leaf generators (each tree Dirichlet or sparse with
		// probability 1/2), transformers of 1, 2, 3 and 4 layers (and
		// TF(4,4) with sinusoidal positions), Fig. 4's models, Fig. 8
		// under three encodings, three training seeds, Markov(k) for
		// k = 1..5 beside CTW; EstimateHours: 5.4 h of training on 2
		// cores (the first version, with 1, 2 and 4 layers only, took
		// 1 h 37 min in all). 6000
		// steps because the 2-layer model's induction transition comes
		// only near step 3000 (50M tokens; at 1500 steps it is still at
		// the Markov(1) level).
		c.Depths, c.N = []int{1, 2, 3, 4, 5}, 512
		c.Leaves, c.SparseFrac = "mixed", 0.5
		c.TrainTrees, c.TrainNK, c.TestTrees = 10000, 2560, 1000
		c.Embed = 64
		c.Fig3Models = []string{"4", "4,4", "4,4,4", "4,4,4,4", "4,4-sin"}
		// Fig. 4 at depth 5, with the 2-layer attention-only model also
		// trained for twice the steps: is its loss a budget artefact?
		c.Fig4Models = []string{"4,4-ff-ln", "4,4,4,4-ff-ln", "1,1", "1,1,1-ff", "4,4-ff-ln-x2"}
		c.SynthEncodings = []string{synth.Paper, synth.Log, synth.Linear}
		c.Batch, c.MaxSteps, c.LR, c.Warmup = 32, 6000, 2e-3, 150
		c.ConstructWindows, c.HeatmapModel = 20, "4,4"
		c.Seeds = 3
		c.ExtraMethods = markovUpTo(5)
	case "ladder":
		// The training-budget ladder (docs/figures/ladder/README.md): the
		// depth-5 distribution with Dirichlet leaves (so that the exact
		// Bayes predictor of the prior is a mixture of CTW_D over D),
		// TF(4,4), TF(4,4) sin and TF(4,4,4) at 1×, 2× and 4× of 6000 steps
		// (each budget its own cosine schedule), TF(4,4,4,4) at 1×; two
		// training seeds for TF(4,4) and TF(4,4) sin, one for the others;
		// Markov(k ≤ 5) beside CTW. No Fig. 4 or Fig. 8 models.
		c.Depths, c.N = []int{1, 2, 3, 4, 5}, 512
		c.TrainTrees, c.TrainNK, c.TestTrees = 10000, 2560, 1000
		c.Embed = 64
		c.Fig3Models = []string{"4,4", "4,4-x2", "4,4-x4", "4,4-sin", "4,4-sin-x2", "4,4-sin-x4",
			"4,4,4", "4,4,4-x2", "4,4,4-x4", "4,4,4,4"}
		c.Fig4Models, c.SynthVariants = nil, nil
		c.Batch, c.MaxSteps, c.LR, c.Warmup = 32, 6000, 2e-3, 150
		c.ConstructWindows, c.HeatmapModel = 20, "4,4-x4"
		c.Seeds = 2
		c.ModelSeeds = map[string]int{"4,4,4": 1, "4,4,4-x2": 1, "4,4,4-x4": 1, "4,4,4,4": 1}
		c.Ladder = true
		c.ExtraMethods = markovUpTo(5)
	case "medium":
		c.Depths, c.N = []int{4}, 512
		c.TrainTrees, c.TrainNK, c.TestTrees = 10000, 5120, 2048
		c.Embed = 128
		c.Fig3Models = []string{"8", "8,8", "8,8,8", "8,8,8,8", "8,8,8,8,8,8"}
		c.Fig4Models = []string{"8,8-ff-ln", "8,8,8,8-ff-ln", "1,1", "1,1,1-ff"}
		c.Batch, c.MaxSteps, c.Patience = 64, 6000, 15
		c.ConstructWindows, c.HeatmapModel = 50, "8,8"
		c.ExtraMethods = markovUpTo(4)
	case "paper":
		c.Depths, c.N = []int{1, 2, 3, 4, 5}, 1536
		c.TrainTrees, c.TrainNK, c.TestTrees = 20000, 5120, 8192
		c.Embed = 128
		c.Fig3Models = []string{"8", "8,8", "8,8,8", "8,8,8,8", "8,8,8,8,8,8"}
		c.Fig4Models = []string{"8,8-ff-ln", "8,8,8,8-ff-ln", "1,1", "1,1,1-ff"}
		c.Batch, c.Patience = 512, 15
		// the paper's optimiser, PyTorch's AdamW defaults at a constant lr 1e-3 without warm-up
		// or clipping, on the window-summed loss (docs/reproduce.md: what still differs)
		c.LR, c.Warmup, c.LRSchedule, c.Clip, c.SumLoss = 1e-3, 0, transformer.ScheduleConstant, new(float64), true
		c.ConstructWindows, c.HeatmapModel = 20, "8,8"
		c.ExtraMethods = markovUpTo(5)
	default:
		return Config{}, fmt.Errorf("reproduce: unknown preset %q (%s)", name, strings.Join(Presets, ", "))
	}
	return c, nil
}

// markovUpTo is the method specification of the fixed-order estimators
// Markov(k), k = 1..D: the presets evaluate them beside CTW, so that Fig. 3
// says whether a transformer does better than the best fixed order.
func markovUpTo(D int) string {
	parts := make([]string, D)
	for k := range D {
		parts[k] = fmt.Sprintf("markov:k=%d", k+1)
	}
	return strings.Join(parts, ",")
}

// Load overrides the fields named in a JSON object (keys as in Config's
// JSON form); unknown keys are an error. An object that names every key
// (as FileJSON writes) is a complete configuration: it replaces c as a
// whole, whatever c held before (the preset).
func (c *Config) Load(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("reproduce: config: %w", err)
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(b, &keys) == nil && len(keys) == len(Keys()) {
		complete := true
		for _, k := range Keys() {
			_, ok := keys[k]
			complete = complete && ok
		}
		if complete {
			*c = Config{}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return fmt.Errorf("reproduce: config: %w", err)
	}
	c.canonicalKeywords()
	return nil
}

// FileJSON is the configuration (Normalized) as a file that stands alone:
// every key, the empty ones too, so that Load, and Layered over any
// preset, read back exactly this configuration. vomc reproduce writes it
// as OUT/config.json, which the stage processes of --jobs and the tasks of
// a Slurm submission read.
func (c Config) FileJSON() string {
	n := c.Normalized()
	v, t := reflect.ValueOf(n), reflect.TypeFor[Config]()
	m := map[string]any{}
	for i := range t.NumField() {
		m[jsonName(t.Field(i))] = v.Field(i).Interface()
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return string(b)
}

// LoadFile is Load on the named file.
func (c *Config) LoadFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := c.Load(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Layered builds an effective configuration: the preset, then the JSON
// file (if not empty), then the key=value overrides in order; the result
// is validated.
func Layered(preset, file string, sets []string) (Config, error) {
	cfg, err := Preset(preset)
	if err != nil {
		return cfg, err
	}
	if file != "" {
		if err := cfg.LoadFile(file); err != nil {
			return cfg, err
		}
	}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return cfg, opterr.Bad("reproduce", "override", s, "key=value")
		}
		if err := cfg.Set(k, v); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.Validate()
}

// Keys returns the settable keys (the JSON names of Config's fields).
func Keys() []string {
	t := reflect.TypeFor[Config]()
	var ks []string
	for i := range t.NumField() {
		ks = append(ks, jsonName(t.Field(i)))
	}
	return ks
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// ErrPreset is (wrapped in) the error of setting the key "preset" with
// Set: the preset is chosen before any key is set.
var ErrPreset = errors.New("the preset is chosen, not set")

// Set sets the field whose JSON key is key from its textual value (the
// forms of SetForm): numbers and booleans as Go parses them; integer lists
// as "1,2,3"; string lists (model lists) separated by ';' ("4;4,4;4,4,4");
// maps of model to count as "SPEC=N;SPEC=N" ("2,2=3;2=1", the last '='
// of each part separating the count); any value starting with '[' or '{'
// as JSON. An empty value empties a list or a map. Keys are
// case-sensitive except that a '-' may stand for '_'. The preset is not a
// key to set: it is where the configuration starts (Layered's preset).
// Errors are *opterr.Error naming the key, the value and the accepted
// form.
func (c *Config) Set(key, value string) error {
	key = strings.ReplaceAll(strings.TrimSpace(key), "-", "_")
	value = strings.TrimSpace(value)
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if jsonName(t.Field(i)) != key {
			continue
		}
		if key == "preset" {
			return &opterr.Error{Pkg: "reproduce", Option: key, Value: value, Err: ErrPreset,
				Msg: " cannot be set: the preset is where the configuration starts"}
		}
		f := v.Field(i)
		if err := setField(f, value); err != nil {
			return &opterr.Error{Pkg: "reproduce", Option: key, Value: value, Want: SetForm(f.Type()), Err: err}
		}
		c.canonicalKeywords()
		return nil
	}
	ks := slices.DeleteFunc(Keys(), func(k string) bool { return k == "preset" })
	sort.Strings(ks)
	return opterr.Unknown("reproduce", "key", key, ks)
}

// SetForm is the textual form Set accepts for a field of type t.
func SetForm(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return SetForm(t.Elem())
	case reflect.Int, reflect.Uint64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Int {
			return `integers separated by ',' ("1,2,3") or a JSON array`
		}
		return `names separated by ';' ("4;4,4") or a JSON array`
	case reflect.Map:
		return `SPEC=N separated by ';' ("2,2=3;2=1") or a JSON object ({"2,2":3})`
	}
	return "JSON"
}

// setField sets f from value (Set's forms).
func setField(f reflect.Value, value string) error {
	if strings.HasPrefix(value, "[") || strings.HasPrefix(value, "{") {
		p := reflect.New(f.Type())
		dec := json.NewDecoder(strings.NewReader(value))
		dec.DisallowUnknownFields()
		if err := dec.Decode(p.Interface()); err != nil {
			return err
		}
		f.Set(p.Elem())
		return nil
	}
	if f.Kind() == reflect.Pointer { // a key whose nil is its default
		p := reflect.New(f.Type().Elem())
		if err := setField(p.Elem(), value); err != nil {
			return err
		}
		f.Set(p)
		return nil
	}
	var x any
	var err error
	switch f.Kind() {
	case reflect.Int:
		x, err = strconv.Atoi(value)
	case reflect.Uint64:
		x, err = strconv.ParseUint(value, 10, 64)
	case reflect.Float64:
		x, err = strconv.ParseFloat(value, 64)
	case reflect.Bool:
		x, err = strconv.ParseBool(value)
	case reflect.String:
		x = value
	case reflect.Slice:
		x, err = parseList(f.Type(), value)
	case reflect.Map:
		x, err = parseCounts(f.Type(), value)
	default:
		err = fmt.Errorf("no textual form for %s", f.Type())
	}
	if err != nil {
		return err
	}
	f.Set(reflect.ValueOf(x).Convert(f.Type()))
	return nil
}

// parseList reads a list of type t from "1,2,3" (integers) or "a;b;c"
// (strings).
func parseList(t reflect.Type, value string) (any, error) {
	switch t.Elem().Kind() {
	case reflect.Int:
		var xs []int
		for _, s := range strings.Split(value, ",") {
			if s = strings.TrimSpace(s); s == "" && value == "" {
				break
			}
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, err
			}
			xs = append(xs, n)
		}
		return xs, nil
	case reflect.String:
		var xs []string
		for _, s := range strings.Split(value, ";") {
			if s = strings.TrimSpace(s); s != "" {
				xs = append(xs, s)
			}
		}
		return xs, nil
	}
	return nil, fmt.Errorf("no textual form for %s", t)
}

// parseCounts reads a map of name to count (type t) from "SPEC=N;SPEC=N".
func parseCounts(t reflect.Type, value string) (any, error) {
	if t != reflect.TypeFor[map[string]int]() {
		return nil, fmt.Errorf("no textual form for %s", t)
	}
	var m map[string]int
	for _, part := range strings.Split(value, ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		i := strings.LastIndex(part, "=")
		if i < 0 {
			return nil, fmt.Errorf("%q has no '='", part)
		}
		n, err := strconv.Atoi(strings.TrimSpace(part[i+1:]))
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]int{}
		}
		m[strings.TrimSpace(part[:i])] = n
	}
	return m, nil
}

// Prior is the prior of the training and test trees. An unknown Leaves
// name gives a prior with an invalid leaf kind, which Validate reports.
func (c Config) Prior() source.Prior {
	p := source.Prior{A: c.A, Depths: c.Depths, Lambda: c.Lambda, Alpha: []float64{c.Alpha}, SparseFrac: c.SparseFrac}
	if c.Leaves != "" {
		k, err := source.ParseLeafKind(c.Leaves)
		if err != nil {
			k = -1
		}
		p.Leaves = k
	}
	return p
}

// CTWOptimal reports whether CTW with the study's (D, λ, α) is exactly
// Bayes-optimal on the test windows (one fresh window per tree): only with
// Dirichlet leaves and a single depth D. With several depths the tree prior
// is the mixture (1/|Depths|)·Σ_D π_D, not π_{max D} (a full depth-1 tree
// has prior mass 1−λ under π_1 but (1−λ)·λ^A under π_5), and sparse leaves
// are not Dir(α).
func (c Config) CTWOptimal() bool { return len(c.NotOptimal()) == 0 }

// NotOptimal lists the reasons CTW is not exactly Bayes-optimal.
func (c Config) NotOptimal() []string {
	var why []string
	if k := c.Prior().Leaves; k != source.Dirichlet {
		why = append(why, fmt.Sprintf("the leaves are %q (the sparse leaves' prior is not Dir(α))", k))
	}
	for _, d := range c.Depths {
		if d != c.Depths[0] {
			why = append(why, fmt.Sprintf("each tree's depth is drawn from %v (the tree prior is a mixture of π_D, not π_%d)", c.Depths, c.MaxDepth()))
			break
		}
	}
	return why
}

// MaxDepth is the largest depth of the prior: the depth of CTW, the
// construction and the order of KN and PPM.
func (c Config) MaxDepth() int {
	d := 0
	for _, x := range c.Depths {
		d = max(d, x)
	}
	return d
}

// Validate reports the first problem with the configuration.
func (c Config) Validate() error {
	if _, err := trainrun.SnapshotSteps(c.Dynamics, 1); err != nil {
		return &opterr.Error{Pkg: "reproduce", Option: "dynamics", Value: c.Dynamics, Msg: ": " + strings.ReplaceAll(err.Error(), "%", "%%"), Err: err}
	}
	if c.DynamicsSeeds < 0 || c.SnapshotSeeds < 0 || c.DynamicsHeadWindows < 0 || c.DynamicsHeadWindows == 1 {
		return fmt.Errorf("reproduce: dynamics_seeds %d, snapshot_seeds %d, dynamics_head_windows %d: want 0 (default) or positive (head windows ≥ 2)", c.DynamicsSeeds, c.SnapshotSeeds, c.DynamicsHeadWindows)
	}
	if c.DynamicsWindows < 0 || c.DynamicsWindows == 1 {
		return opterr.Bad("reproduce", "dynamics_windows", c.DynamicsWindows, "0 (default) or ≥ 2")
	}
	if c.Engine != "" {
		if err := trainrun.CheckEngine(c.Engine); err != nil {
			return fmt.Errorf("reproduce: %w", err)
		}
	}
	if c.Leaves != "" {
		if _, err := source.ParseLeafKind(c.Leaves); err != nil {
			return opterr.Unknown("reproduce", "leaves", c.Leaves, []string{"dirichlet", "sparse", "mixed"})
		}
	}
	if err := c.Prior().Validate(); err != nil {
		return err
	}
	switch {
	case c.N < 8:
		return opterr.Bad("reproduce", "N", c.N, "≥ 8")
	case c.TrainNK < c.N:
		return opterr.Bad("reproduce", "train_NK", c.TrainNK, fmt.Sprintf("≥ N = %d", c.N))
	case c.TrainTrees < 2 || c.TestTrees < 2:
		return fmt.Errorf("reproduce: need ≥ 2 training and test trees")
	case c.ValFrac < 0 || c.ValFrac >= 1:
		return opterr.Bad("reproduce", "val_frac", c.ValFrac, "a number in [0, 1)")
	case c.Batch < 1 || c.Epochs < 1 || c.LR <= 0:
		return fmt.Errorf("reproduce: batch, epochs and lr must be positive")
	case len(c.Fig3Models) == 0:
		return &opterr.Error{Pkg: "reproduce", Option: "fig3_models", Msg: " is empty", Want: "at least one model"}
	case c.ConstructWindows < 1 || c.ConstructWindows > c.TestTrees:
		return opterr.Bad("reproduce", "construct_windows", c.ConstructWindows, fmt.Sprintf("1..test_trees = %d", c.TestTrees))
	case c.HeatmapSuffix < 1:
		return opterr.Bad("reproduce", "heatmap_suffix", c.HeatmapSuffix, "≥ 1")
	case c.Seeds < 0:
		return opterr.Bad("reproduce", "seeds", c.Seeds, "≥ 0")
	case c.SynthSeeds < 0:
		return opterr.Bad("reproduce", "synth_seeds", c.SynthSeeds, "≥ 0")
	}
	if err := c.validateTraining(); err != nil {
		return err
	}
	for spec, k := range c.ModelSeeds {
		if k < 1 {
			return &opterr.Error{Pkg: "reproduce", Option: "model_seeds", Value: spec, Msg: fmt.Sprintf(" has %d seeds", k), Want: "≥ 1"}
		}
		if !slices.Contains(c.Fig3Models, spec) && !slices.Contains(c.Fig4Models, spec) {
			return c.notAModel("model_seeds", spec)
		}
	}
	for _, s := range append(append([]string{}, c.Fig3Models...), c.Fig4Models...) {
		m, err := ParseModel(s)
		if err != nil {
			return err
		}
		if err := m.TransformerConfig(c).Validate(); err != nil {
			return fmt.Errorf("reproduce: model %q: %w", s, err)
		}
	}
	if c.HeatmapModel != "" && !slices.Contains(c.Fig3Models, c.HeatmapModel) && !slices.Contains(c.Fig4Models, c.HeatmapModel) {
		return c.notAModel("heatmap_model", c.HeatmapModel)
	}
	for _, v := range c.SynthVariants {
		if _, err := synth.ParseVariant(v); err != nil {
			return fmt.Errorf("reproduce: synth_variants: %w", err)
		}
	}
	seenEnc := map[string]bool{}
	for _, e := range c.SynthEncodings {
		if e == "" {
			return fmt.Errorf("reproduce: synth_encodings has an empty name (paper, log, linear)")
		}
		enc, err := synth.ParseEncoding(e)
		if err != nil {
			return fmt.Errorf("reproduce: synth_encodings: %w", err)
		}
		if seenEnc[enc] {
			return fmt.Errorf("reproduce: synth_encodings lists %s twice", enc)
		}
		seenEnc[enc] = true
	}
	return nil
}

// notAModel is the error of key naming spec, which is not a model of
// Fig3Models or Fig4Models.
func (c Config) notAModel(key, spec string) error {
	models := append(slices.Clone(c.Fig3Models), c.Fig4Models...)
	return &opterr.Error{Pkg: "reproduce", Option: key, Value: spec, Msg: " is not in fig3_models or fig4_models",
		Hint: opterr.DidYouMean(spec, models, "", true)}
}

// Encodings returns SynthEncodings, or the paper's encoding alone when it
// is empty.
func (c Config) Encodings() []string {
	if len(c.SynthEncodings) == 0 {
		return []string{synth.Paper}
	}
	return c.SynthEncodings
}

// NumSynthSeeds is the number of training replicates of every TF 2-0
// model: SynthSeeds, or NumSeeds when it is 0.
func (c Config) NumSynthSeeds() int {
	if c.SynthSeeds > 0 {
		return c.SynthSeeds
	}
	return c.NumSeeds()
}

// NumSeeds is the largest number of training replicates of any model (at
// least 1): Seeds, or more where ModelSeeds asks for more.
func (c Config) NumSeeds() int {
	n := max(1, c.Seeds)
	for _, k := range c.ModelSeeds {
		n = max(n, k)
	}
	return n
}

// SeedsOf is the number of training replicates of model m: its entry in
// ModelSeeds, else Seeds (at least 1).
func (c Config) SeedsOf(m Model) int {
	if k, ok := c.ModelSeeds[m.Spec]; ok {
		return k
	}
	return max(1, c.Seeds)
}

// Normalized is the configuration with Seeds = 1 written as 0, so that
// S = 1 has the JSON form (and stage hashes) of a configuration without
// replicates.
func (c Config) Normalized() Config {
	if c.SynthSeeds == c.NumSeeds() {
		c.SynthSeeds = 0
	}
	// Equivalent spellings of the defaults hash alike.
	if len(c.SynthEncodings) == 1 && c.SynthEncodings[0] == synth.Paper {
		c.SynthEncodings = nil
	}
	if c.Leaves == "dirichlet" {
		c.Leaves = ""
	}
	if c.Seeds <= 1 {
		c.Seeds = 0
	}
	if c.LRSchedule == transformer.ScheduleCosine {
		c.LRSchedule = ""
	}
	if c.Clip != nil && *c.Clip == transformer.OptionByKeyMust("clip_norm").Default.(float64) {
		c.Clip = nil
	}
	return c
}

// ReplicateSeed is the initialisation and shuffling seed of training
// replicate r: Seed itself for r = 0, otherwise a SplitMix64 mix of Seed
// and r (deterministic, distinct for distinct r).
func (c Config) ReplicateSeed(r int) uint64 {
	if r == 0 {
		return c.Seed
	}
	z := c.Seed + uint64(r)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// JSON is the indented JSON form of the configuration.
func (c Config) JSON() string {
	b, _ := json.MarshalIndent(c.Normalized(), "", "  ")
	return string(b)
}

// TrainConfig is the optimisation setting of the transformers: the
// defaults (transformer.DefaultTrainConfig) with the study's training
// options (batch, lr, min_lr, warmup, epochs, max_steps, patience,
// sum_loss: see studyOptions) and Seed, a log line every 50 steps.
func (c Config) TrainConfig() transformer.TrainConfig {
	tc := c.trainConfig(transformer.DefaultTrainConfig())
	tc.Seed, tc.LogEvery = c.Seed, 50
	return tc
}

// Models returns the distinct models of Fig3Models and Fig4Models in order.
func (c Config) Models() []Model {
	var out []Model
	seen := map[string]bool{}
	for _, s := range append(append([]string{}, c.Fig3Models...), c.Fig4Models...) {
		m, err := ParseModel(s)
		if err != nil || seen[m.Slug()] {
			continue
		}
		seen[m.Slug()] = true
		out = append(out, m)
	}
	return out
}

// HeadWindows is DynamicsHeadWindows or its default, 50.
func (c Config) HeadWindows() int {
	if c.DynamicsHeadWindows > 0 {
		return c.DynamicsHeadWindows
	}
	return 50
}
