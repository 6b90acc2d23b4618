package transformer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/jsonfloat"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/transformer/backend"
)

// A checkpoint is one safetensors file (see checkpoint_st.go for the
// container) holding everything a Trainer needs to continue a run exactly:
//
//	tensors   "params", "adam.m", "adam.v" (F32, [P]) and, once a validation
//	          loss has been measured, "best_params" ([P])
//	metadata  "format": "vomc-checkpoint", "version": "1",
//	          "config": the model's configuration: a transformer Config
//	          (JSON), or for another Trainable the string of its
//	          CheckpointConfig,
//	          "model": only for a model other than a transformer, the
//	          format of CheckpointConfig (e.g. "vomc-synth"),
//	          "train_config": the TrainConfig (JSON),
//	          "state": the TrainerState, the AdamW step count and the shape
//	          of the data (JSON; non-finite floats as strings "+Inf"/"NaN"),
//	          "history": the training log so far (JSON array of LogEntry),
//	          "meta": the caller's strings (JSON object; e.g. the data set's
//	          path and checksum).
//
// Floats are stored exactly (float32 tensors bit for bit, float64 counters
// in shortest round-trip decimal), so a resumed run is bit-identical to an
// uninterrupted one. SaveCheckpoint writes atomically.

const (
	checkpointFormat  = "vomc-checkpoint"
	checkpointVersion = "1"
)

// Checkpoint is the complete state of a training run, as read by
// ReadCheckpoint.
type Checkpoint struct {
	// ModelFormat is "" for a transformer, else the format of the model's
	// CheckpointConfig (e.g. "vomc-synth"), and ModelConfig its
	// configuration string; for a transformer Config is the architecture
	// (parsed from ModelConfig).
	ModelFormat, ModelConfig string
	Config                   Config
	// Train is the optimisation settings.
	Train TrainConfig
	// Params are the current parameters; M and V AdamW's moments after
	// AdamT steps; BestParams (nil before the first validation) the
	// parameters of the best validation loss.
	Params, M, V, BestParams []float32
	AdamT                    int
	// State is the step, shuffle position and counters.
	State TrainerState
	// History is the training log up to the checkpoint.
	History []LogEntry
	// TrainWindows, ValWindows and WindowLen describe the data the run was
	// trained on (Resume checks them).
	TrainWindows, ValWindows, WindowLen int
	// Meta holds the strings the caller passed to SaveCheckpoint.
	Meta map[string]string
}

// stateJSON is the "state" metadata entry.
type stateJSON struct {
	Step            int       `json:"step"`
	Epoch           int       `json:"epoch"`
	Index           int       `json:"index"`
	BestVal         jsonFloat `json:"best_val"`
	SinceBest       int       `json:"since_best"`
	Stopped         bool      `json:"stopped"`
	EpochLoss       jsonFloat `json:"epoch_loss"`
	EpochTargets    int       `json:"epoch_targets"`
	IntervalLoss    jsonFloat `json:"interval_loss"`
	IntervalTargets int       `json:"interval_targets"`
	LR              jsonFloat `json:"lr"`
	GradNorm        jsonFloat `json:"grad_norm"`
	ElapsedNS       int64     `json:"elapsed_ns"`
	AdamT           int       `json:"adam_t"`
	TrainWindows    int       `json:"train_windows"`
	ValWindows      int       `json:"val_windows"`
	WindowLen       int       `json:"window_len"`
}

// jsonFloat is a float64 that survives JSON exactly, ±Inf and NaN too
// (jsonfloat: the strings "+Inf", "-Inf", "NaN").
type jsonFloat = jsonfloat.Float

// logEntryJSON is the JSON form of a LogEntry (one line of train.jsonl).
type logEntryJSON struct {
	Step            int      `json:"step"`
	Epoch           float64  `json:"epoch"`
	TrainLoss       float64  `json:"train_loss"`
	EpochEnd        bool     `json:"epoch_end,omitempty"`
	EpochTrainLoss  *float64 `json:"epoch_train_loss,omitempty"`
	ValLoss         *float64 `json:"val_loss,omitempty"`
	BestValLoss     *float64 `json:"best_val_loss,omitempty"`
	LR              float64  `json:"lr"`
	GradNorm        float64  `json:"grad_norm"`
	TokensPerSecond float64  `json:"tokens_per_s"`
	ElapsedSeconds  float64  `json:"elapsed_s"`
}

func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// MarshalJSON writes the entry as one JSON object with the keys step,
// epoch, train_loss, lr, grad_norm, tokens_per_s and elapsed_s (seconds);
// epoch-end entries add epoch_end: true, epoch_train_loss and, when
// finite, val_loss and best_val_loss. Losses are in nats per symbol.
func (e LogEntry) MarshalJSON() ([]byte, error) {
	j := logEntryJSON{Step: e.Step, Epoch: e.Epoch, TrainLoss: e.TrainLoss, EpochEnd: e.EpochEnd,
		LR: e.LR, GradNorm: e.GradNorm, TokensPerSecond: e.TokensPerSecond, ElapsedSeconds: e.Elapsed.Seconds()}
	if e.EpochEnd {
		j.EpochTrainLoss, j.ValLoss, j.BestValLoss = finitePtr(e.EpochTrainLoss), finitePtr(e.ValLoss), finitePtr(e.BestValLoss)
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; in an epoch-end entry an
// absent val_loss is NaN and an absent best_val_loss +Inf.
func (e *LogEntry) UnmarshalJSON(b []byte) error {
	var j logEntryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = LogEntry{Step: j.Step, Epoch: j.Epoch, TrainLoss: j.TrainLoss, EpochEnd: j.EpochEnd,
		LR: j.LR, GradNorm: j.GradNorm, TokensPerSecond: j.TokensPerSecond,
		Elapsed: time.Duration(math.Round(j.ElapsedSeconds * 1e9))}
	if !j.EpochEnd {
		return nil
	}
	e.ValLoss, e.BestValLoss = math.NaN(), math.Inf(1)
	if j.EpochTrainLoss != nil {
		e.EpochTrainLoss = *j.EpochTrainLoss
	}
	if j.ValLoss != nil {
		e.ValLoss = *j.ValLoss
	}
	if j.BestValLoss != nil {
		e.BestValLoss = *j.BestValLoss
	}
	return nil
}

// WriteCheckpoint writes the trainer's complete state to w (the format is
// described at the top of checkpoint.go), with the caller's strings meta.
// Call it only when the state is consistent: before or after Run, after Run
// returned a context error, or from OnCheckpoint.
func (t *TrainerOf[A, M]) WriteCheckpoint(w io.Writer, meta map[string]string) error {
	c := &Checkpoint{Train: t.Cfg, State: t.TrainerState, AdamT: t.Opt.T, History: t.History,
		TrainWindows: t.Train.Windows(), WindowLen: t.T, Meta: meta, BestParams: t.BestParams}
	c.State.Elapsed = t.ElapsedTotal()
	if t.Val != nil {
		c.ValWindows = t.Val.Windows()
	}
	c.ModelFormat, c.ModelConfig = t.Model.CheckpointConfig()
	P := t.Model.NumParams()
	mom1, mom2 := t.Opt.Moments()
	c.Params, c.M, c.V = t.Model.HostParams(), mom1[:P], mom2[:P]
	return c.Write(w)
}

// FreshCheckpoint is the checkpoint of a transformer run that has not
// taken a step: parameters params (e.g. InitParams(cfg, seed)), zero AdamW
// moments, no validation yet, on trainWindows training and valWindows
// validation windows of windowLen symbols. Another engine (vomc's PyTorch
// engine) resumes it, so that both engines start a run from the same
// parameters.
func FreshCheckpoint(cfg Config, tc TrainConfig, params []float32, trainWindows, valWindows, windowLen int, meta map[string]string) (*Checkpoint, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := tc.Validate(); err != nil {
		return nil, err
	}
	P := cfg.NumParams()
	if len(params) != P {
		return nil, fmt.Errorf("transformer: %d parameters, config needs %d", len(params), P)
	}
	c := &Checkpoint{ModelConfig: cfg.String(), Config: cfg, Train: tc, Params: params,
		M: make([]float32, P), V: make([]float32, P), State: TrainerState{BestVal: math.Inf(1)},
		TrainWindows: trainWindows, ValWindows: valWindows, WindowLen: windowLen, Meta: meta}
	if err := c.checkState(0, cfg.Context); err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	return c, nil
}

// Write writes the checkpoint to w (the format is described at the top of
// checkpoint.go).
func (c *Checkpoint) Write(w io.Writer) error {
	s := c.State
	st := stateJSON{Step: s.Step, Epoch: s.Epoch, Index: s.Index, BestVal: jsonFloat(s.BestVal),
		SinceBest: s.SinceBest, Stopped: s.Stopped, EpochLoss: jsonFloat(s.EpochLoss),
		EpochTargets: s.EpochTargets, IntervalLoss: jsonFloat(s.IntervalLoss),
		IntervalTargets: s.IntervalTargets, LR: jsonFloat(s.LR),
		GradNorm: jsonFloat(s.GradNorm), ElapsedNS: int64(s.Elapsed), AdamT: c.AdamT,
		TrainWindows: c.TrainWindows, ValWindows: c.ValWindows, WindowLen: c.WindowLen}
	meta := c.Meta
	if meta == nil {
		meta = map[string]string{}
	}
	md := map[string]string{"format": checkpointFormat, "version": checkpointVersion, "config": c.ModelConfig}
	if c.ModelFormat != "" {
		md["model"] = c.ModelFormat
	}
	hist := c.History
	if hist == nil {
		hist = []LogEntry{}
	}
	for k, v := range map[string]any{"train_config": c.Train, "state": st, "history": hist, "meta": meta} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		md[k] = string(b)
	}
	P := len(c.Params)
	if len(c.M) != P || len(c.V) != P || c.BestParams != nil && len(c.BestParams) != P {
		return fmt.Errorf("transformer: checkpoint of %d parameters with moments of %d and %d values", P, len(c.M), len(c.V))
	}
	tensors := []stNamed{
		{"params", []int{P}, c.Params},
		{"adam.m", []int{P}, c.M},
		{"adam.v", []int{P}, c.V},
	}
	if c.BestParams != nil {
		tensors = append(tensors, stNamed{"best_params", []int{P}, c.BestParams})
	}
	return writeST(w, md, tensors)
}

// Save writes the checkpoint to path atomically (see SaveCheckpoint).
func (c *Checkpoint) Save(path string) error {
	return fsutil.WriteAtomic(path, true, c.Write)
}

// SaveCheckpoint writes the checkpoint (see WriteCheckpoint) to path
// atomically (fsutil.WriteAtomic): into a temporary file in the same
// directory, synced, then renamed over path, and the directory synced. A
// process killed at any moment leaves either the previous checkpoint or
// the new one, never a partial file (at worst a stray ".checkpoint…tmp*"
// file, which RemoveStaleTemp deletes).
func (t *TrainerOf[A, M]) SaveCheckpoint(path string, meta map[string]string) error {
	return fsutil.WriteAtomic(path, true, func(w io.Writer) error { return t.WriteCheckpoint(w, meta) })
}

// RemoveStaleTemp deletes the temporary files that an interrupted
// SaveCheckpoint (or SaveSafetensors) of path may have left behind.
func RemoveStaleTemp(path string) error {
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp*"))
	if err != nil {
		return err
	}
	for _, m := range matches {
		if err := os.Remove(m); err != nil {
			return err
		}
	}
	return nil
}

// ErrNoChecksum is returned (wrapped) for a checkpoint without a
// checksum: one written by vomc before checksums existed, whose integrity
// cannot be verified. LoadCheckpointWith(path, true) reads it anyway.
var ErrNoChecksum = errors.New("the checkpoint has no checksum (written by an earlier vomc), so its integrity cannot be verified")

// maxCheckpointHeader bounds a checkpoint's header (its metadata holds
// the training history).
const maxCheckpointHeader = 256 << 20

// checkpointTensors are the tensors a checkpoint may hold, and whether
// each is required.
var checkpointTensors = map[string]bool{"params": true, "adam.m": true, "adam.v": true, "best_params": false}

// ReadCheckpoint reads a checkpoint written by WriteCheckpoint, checking
// the format, the checksum (a checkpoint without one is refused with
// ErrNoChecksum), the config, the train config, the state and the tensor
// sizes (see readCheckpoint).
func ReadCheckpoint(r io.Reader) (*Checkpoint, error) { return readCheckpoint(r, -1, false) }

// LoadCheckpoint reads the checkpoint in path (see ReadCheckpoint); errors
// name the file.
func LoadCheckpoint(path string) (*Checkpoint, error) { return LoadCheckpointWith(path, false) }

// LoadCheckpointWith is LoadCheckpoint that, with allowUnverified, also
// reads a checkpoint without a checksum (written by an earlier vomc).
func LoadCheckpointWith(path string, allowUnverified bool) (*Checkpoint, error) {
	return fsutil.ReadSized(path, func(r io.Reader, size int64) (*Checkpoint, error) { return readCheckpoint(r, size, allowUnverified) })
}

// readCheckpoint reads a checkpoint of size bytes (< 0: unknown). Before
// reading (or allocating for) any tensor data it checks the header: the
// format and version, the checksum's presence (unless allowUnverified),
// the model config (bounded sizes), the train config (Validate), the
// state (counters in range and consistent with the data shape, finite
// losses) and the tensors (names, F32, shape [P]), and that they fit in
// memory. The data is then verified against the checksum, and the
// parameters and moments must be finite (the second moments ≥ 0).
func readCheckpoint(r io.Reader, size int64, allowUnverified bool) (*Checkpoint, error) {
	h, err := safetensors.ReadHeader(r, maxCheckpointHeader, size)
	if err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	c, st, err := checkpointMeta(h, allowUnverified)
	if err != nil {
		return nil, err
	}
	if err := c.setState(st); err != nil {
		return nil, err
	}
	P, err := c.checkTensorHeaders(h.Tensors)
	if err != nil {
		return nil, err
	}
	if err := sysmem.Check(8*float64(h.DataSize), fmt.Sprintf("reading a checkpoint of %d parameters", P)); err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	ts, err := h.ReadData(r)
	if err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	if err := c.setTensors(ts); err != nil {
		return nil, err
	}
	return c, nil
}

// checkpointMeta checks a checkpoint's header h (format, version, and the
// checksum's presence unless allowUnverified: ErrNoChecksum) and decodes
// its metadata: the model format and config strings, the train config, the
// history and the caller's meta into a new Checkpoint, and the state into
// st.
func checkpointMeta(h *safetensors.Header, allowUnverified bool) (c *Checkpoint, st stateJSON, err error) {
	md := h.Meta
	if md["format"] != checkpointFormat {
		return nil, st, fmt.Errorf("transformer: not a %s file (metadata format %q)", checkpointFormat, md["format"])
	}
	if md["version"] != checkpointVersion {
		return nil, st, fmt.Errorf("transformer: checkpoint version %q, this build reads %q", md["version"], checkpointVersion)
	}
	if h.Checksum == "" && !allowUnverified {
		return nil, st, fmt.Errorf("transformer: %w", ErrNoChecksum)
	}
	c = &Checkpoint{ModelFormat: md["model"], ModelConfig: md["config"]}
	for _, f := range []struct {
		key string
		v   any
	}{{"train_config", &c.Train}, {"state", &st}, {"history", &c.History}, {"meta", &c.Meta}} {
		raw, ok := md[f.key]
		if !ok {
			return nil, st, fmt.Errorf("transformer: checkpoint without %q", f.key)
		}
		if err := json.Unmarshal([]byte(raw), f.v); err != nil {
			return nil, st, fmt.Errorf("transformer: checkpoint %s: %w", f.key, err)
		}
	}
	if c.Meta == nil {
		c.Meta = map[string]string{}
	}
	if _, ok := md["config"]; !ok {
		return nil, st, fmt.Errorf("transformer: checkpoint without %q", "config")
	}
	return c, st, nil
}

// setState parses c's transformer config (for a transformer), validates
// its train config, and sets its counters and trainer state from st after
// checking them (checkState).
func (c *Checkpoint) setState(st stateJSON) error {
	maxT := math.MaxInt32 // a non-transformer model's own loader checks its context
	if c.ModelFormat == "" {
		var err error
		if c.Config, err = ParseConfig([]byte(c.ModelConfig)); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		maxT = c.Config.Context
	}
	if err := c.Train.Validate(); err != nil {
		return fmt.Errorf("transformer: checkpoint train_config: %w", err)
	}
	c.AdamT, c.TrainWindows, c.ValWindows, c.WindowLen = st.AdamT, st.TrainWindows, st.ValWindows, st.WindowLen
	c.State = TrainerState{Step: st.Step, Epoch: st.Epoch, Index: st.Index, BestVal: float64(st.BestVal),
		SinceBest: st.SinceBest, Stopped: st.Stopped, EpochLoss: float64(st.EpochLoss), EpochTargets: st.EpochTargets,
		IntervalLoss: float64(st.IntervalLoss), IntervalTargets: st.IntervalTargets,
		LR: float64(st.LR), GradNorm: float64(st.GradNorm),
		Elapsed: time.Duration(st.ElapsedNS)}
	if err := c.checkState(st.ElapsedNS, maxT); err != nil {
		return fmt.Errorf("transformer: checkpoint state: %w", err)
	}
	return nil
}

// checkTensorHeaders checks the tensors listed in a checkpoint's header
// before any data is read: only those of checkpointTensors, the required
// ones present, each F32 of shape [P], and returns P: the transformer
// config's parameter count, or for another model kind the length of the
// tensor "params" (1 to MaxParams).
func (c *Checkpoint) checkTensorHeaders(tensors []safetensors.Tensor) (P int, err error) {
	P = c.Config.NumParams()
	if c.ModelFormat != "" {
		// another model kind: every tensor has the length of "params"
		P = -1
		for _, t := range tensors {
			if t.Name == "params" && len(t.Shape) == 1 && t.Shape[0] >= 1 && t.Shape[0] <= MaxParams {
				P = t.Shape[0]
			}
		}
		if P < 0 {
			return 0, fmt.Errorf("transformer: checkpoint without a valid tensor %q", "params")
		}
	}
	for _, t := range tensors {
		if _, ok := checkpointTensors[t.Name]; !ok {
			return 0, fmt.Errorf("transformer: checkpoint has an unknown tensor %q", t.Name)
		}
		if t.DType != "F32" || len(t.Shape) != 1 || t.Shape[0] != P {
			return 0, fmt.Errorf("transformer: checkpoint tensor %s is %s %v, the config needs F32 [%d]", t.Name, t.DType, t.Shape, P)
		}
	}
	for name, required := range checkpointTensors {
		if required && !slices.ContainsFunc(tensors, func(t safetensors.Tensor) bool { return t.Name == name }) {
			return 0, fmt.Errorf("transformer: checkpoint without tensor %q", name)
		}
	}
	return P, nil
}

// setTensors checks that the tensors read from a checkpoint hold finite
// values (the second moments ≥ 0) and sets c's parameters, moments and
// best parameters to them.
func (c *Checkpoint) setTensors(ts []safetensors.Tensor) error {
	for _, t := range ts {
		v := safetensors.Float32s(t.Data)
		for i, x := range v {
			if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) || t.Name == "adam.v" && f < 0 {
				return fmt.Errorf("transformer: checkpoint tensor %s has the value %g at %d", t.Name, f, i)
			}
		}
		switch t.Name {
		case "params":
			c.Params = v
		case "adam.m":
			c.M = v
		case "adam.v":
			c.V = v
		case "best_params":
			c.BestParams = v
		}
	}
	return nil
}

// checkState checks the counters read from a checkpoint against each
// other, the data shape and the configs.
func (c *Checkpoint) checkState(elapsedNS int64, maxT int) error {
	s := c.State
	finite := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%s %g is not a finite non-negative number", name, v)
		}
		return nil
	}
	switch {
	case c.TrainWindows < 1:
		return fmt.Errorf("%d training windows", c.TrainWindows)
	case c.ValWindows < 0:
		return fmt.Errorf("%d validation windows", c.ValWindows)
	case c.WindowLen < 2 || c.WindowLen > maxT:
		return fmt.Errorf("windows of %d symbols, the model needs 2..N = %d", c.WindowLen, maxT)
	case s.Step < 0 || c.AdamT < 0 || c.AdamT > s.Step:
		return fmt.Errorf("step %d, AdamW step %d", s.Step, c.AdamT)
	case s.Epoch < 0 || s.Epoch > c.Train.Epochs:
		return fmt.Errorf("epoch %d outside 0..%d (the train config's epochs)", s.Epoch, c.Train.Epochs)
	case s.Index < 0 || s.Index >= c.TrainWindows:
		return fmt.Errorf("window index %d outside 0..%d", s.Index, c.TrainWindows-1)
	case s.EpochTargets != s.Index*(c.WindowLen-1) || s.IntervalTargets < 0 || s.IntervalTargets > s.EpochTargets:
		// every used window of the epoch adds T−1 targets; a log
		// interval never spans an epoch end
		return fmt.Errorf("%d targets this epoch and %d this log interval after %d windows of %d symbols",
			s.EpochTargets, s.IntervalTargets, s.Index, c.WindowLen)
	case s.SinceBest < 0 || s.EpochTargets < 0 || s.IntervalTargets < 0 || elapsedNS < 0:
		return fmt.Errorf("negative counter (since_best %d, epoch_targets %d, interval_targets %d, elapsed_ns %d)",
			s.SinceBest, s.EpochTargets, s.IntervalTargets, elapsedNS)
	case !math.IsInf(s.BestVal, 1) && (math.IsNaN(s.BestVal) || math.IsInf(s.BestVal, 0) || s.BestVal < 0):
		return fmt.Errorf("best validation loss %g", s.BestVal)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"epoch_loss", s.EpochLoss}, {"interval_loss", s.IntervalLoss}, {"lr", s.LR}, {"grad_norm", s.GradNorm}} {
		if err := finite(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// ResumeOn rebuilds the Trainer of the checkpoint, with the model,
// gradients and optimiser state on the backend be (nil: ErrNoBackend; a
// run checkpointed on one backend resumes on any other), on the same
// training and validation windows (their number and length are checked;
// the windows themselves are the caller's responsibility, e.g. by a
// checksum in Meta). Its Run continues the run exactly where the
// checkpoint was taken. The callbacks (Log, OnLog, OnStep, OnCheckpoint)
// are for the caller to set.
func (c *Checkpoint) ResumeOn(be backend.Backend, train, val Windows) (*Trainer, error) {
	if c.ModelFormat != "" {
		return nil, fmt.Errorf("transformer: the checkpoint is of a %s model, not a transformer", c.ModelFormat)
	}
	if err := c.checkData(train, val); err != nil {
		return nil, err
	}
	m, err := FromParamsOn(be, c.Config, c.Params)
	if err != nil {
		return nil, err
	}
	return ResumeOf[*Activations](c, m, train, val)
}

// checkData checks the number and length of the windows against the
// checkpoint's.
func (c *Checkpoint) checkData(train, val Windows) error {
	nv := 0
	if val != nil {
		nv = val.Windows()
	}
	if train == nil || train.Windows() != c.TrainWindows || nv != c.ValWindows {
		nt := 0
		if train != nil {
			nt = train.Windows()
		}
		return fmt.Errorf("transformer: the checkpoint was trained on %d training and %d validation windows, got %d and %d",
			c.TrainWindows, c.ValWindows, nt, nv)
	}
	if T := len(train.Window(0)); T != c.WindowLen {
		return fmt.Errorf("transformer: the checkpoint was trained on windows of %d symbols, got %d", c.WindowLen, T)
	}
	return nil
}

// ResumeOf rebuilds the trainer of the checkpoint around m, a model
// rebuilt by the caller from ModelFormat/ModelConfig (on any backend):
// it checks the data as Resume does, sets m's parameters to the
// checkpoint's, and restores the optimiser's moments and step count, the
// trainer's state, the best parameters and the history, so that Run
// continues exactly where the checkpoint was taken.
func ResumeOf[A any, M Trainable[A]](c *Checkpoint, m M, train, val Windows) (*TrainerOf[A, M], error) {
	if err := c.checkData(train, val); err != nil {
		return nil, err
	}
	if err := m.SetParams(c.Params); err != nil {
		return nil, err
	}
	t, err := NewTrainerOf[A](m, c.Train, train, val)
	if err != nil {
		return nil, err
	}
	if err := t.Opt.SetMoments(c.M, c.V); err != nil {
		return nil, err
	}
	t.Opt.T = c.AdamT
	t.TrainerState = c.State
	if c.BestParams != nil {
		t.BestParams = append([]float32(nil), c.BestParams...)
	}
	t.History = append([]LogEntry(nil), c.History...)
	return t, nil
}
