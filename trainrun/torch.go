package trainrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/npy"
	"github.com/vomc/vomc/python"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// ErrResumable is returned (wrapped) when a run stopped early with its
// checkpoint saved: resuming the run continues it.
var ErrResumable = errors.New("resume the run to continue it")

// Torch is vomc's PyTorch engine, the Python package vomc_torch carried in
// the binary (package python), run by a Python interpreter with torch and
// numpy. It trains a run directory laid out as the Go engine's (config.json,
// train_config.json, checkpoint.safetensors in vomc's format, train.jsonl,
// model.safetensors), with the same TrainConfig semantics, windows, split
// and shuffles, so a run started on one engine resumes on the other. Choose
// it once at the top (NewEngine: vomc train --engine torch, reproduce's
// engine) and pass the Engine down.
type Torch struct {
	// Python is the interpreter; empty: $VOMC_PYTHON, else the first of
	// python3 on PATH and /usr/bin/python3 that imports torch and numpy.
	Python string
	// Device is auto (CUDA when available), cpu, cuda or cuda:N.
	Device string
	// AMP is auto (bf16 autocast on CUDA where supported), bf16 or off.
	AMP string
	// Compile wraps the model in torch.compile (torch ≥ 2).
	Compile bool
	// Threads is torch's number of CPU threads (0: torch's default).
	Threads int
	// Cache is where the package is extracted (empty: the user's cache
	// directory; see python.Extract).
	Cache string
	// Stderr receives the engine's progress and messages, the child
	// process's own output as it writes it, where a job names no
	// Job.TorchOutput (nil: discarded; the last lines are kept for errors
	// either way). It is a stream, not vomc's reporting (events.Sink): the
	// top sets it once, like exec.Cmd.Stderr.
	Stderr io.Writer

	once sync.Once
	env  *TorchEnv
	err  error
}

// TorchEnv is what Check found: the interpreter, its versions, and the
// device the engine will use.
type TorchEnv struct {
	Python        string `json:"-"`
	PYTHONPATH    string `json:"-"`
	PythonVersion string `json:"python"`
	Torch         string `json:"torch"`
	NumPy         string `json:"numpy"`
	CUDA          bool   `json:"cuda_available"`
	Device        string `json:"device"`
	GPU           string `json:"gpu,omitempty"`
	BF16          bool   `json:"bf16,omitempty"`
	SDPA          bool   `json:"sdpa"`
	Compile       bool   `json:"compile"`
}

// TorchModuleFormat is the format (metadata "format"; a checkpoint's
// "model") of the model and checkpoint files of a torch-engine module
// other than vomc's transformer (--arch lstm or MODULE:FACTORY): its
// parameters in named_parameters() order, its JSON config in "config"
// (python/vomc_torch/train.py's TORCH_MODEL_FORMAT).
const TorchModuleFormat = "vomc-torch-module"

// Engine exit statuses of `python -m vomc_torch` (see its __main__.py).
const (
	torchExitBad         = 2
	torchExitDiverged    = 3
	torchExitEnv         = 4
	torchExitInterrupted = 130
)

// Check finds the interpreter, extracts the package and asks it for the
// device (once; later calls return the same answer). Its error names what
// is missing: Python, torch or numpy (with how to install them), or CUDA
// when Device asks for it.
func (t *Torch) Check() (*TorchEnv, error) {
	t.once.Do(func() { t.env, t.err = t.check() })
	return t.env, t.err
}

func (t *Torch) check() (*TorchEnv, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	dir, err := python.Extract(t.Cache)
	if err != nil {
		return nil, err
	}
	// One interpreter start per candidate: the engine's check command
	// imports torch and numpy and answers for the device.
	cands, src := pythonCandidates(t.Python)
	var why []string
	for _, py := range cands {
		env := &TorchEnv{Python: py, PYTHONPATH: dir}
		var stderr bytes.Buffer
		cmd := t.command(context.Background(), env, "check", "--device", t.device())
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil {
			if err := json.Unmarshal(bytes.TrimSpace(out), env); err != nil {
				return nil, fmt.Errorf("torch engine: check printed %q: %v", out, err)
			}
			return env, nil
		}
		msg := lastLine(stderr.Bytes())
		if msg == "" {
			msg = err.Error()
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() != 1 && ee.ExitCode() != torchExitEnv || !strings.Contains(msg, "No module named") {
			// the interpreter has torch: the engine's answer (no CUDA, …)
			return nil, fmt.Errorf("torch engine: %s", msg)
		}
		if i := strings.Index(msg, "No module named"); i >= 0 { // the engine's "…, cannot import torch (No module named 'torch'): install …"
			msg, _, _ = strings.Cut(msg[i:], ")")
		}
		why = append(why, fmt.Sprintf("%s: %s", py, msg))
	}
	if len(cands) == 0 {
		why = append(why, "not found")
	}
	return nil, fmt.Errorf("torch engine: no Python with torch and numpy (%s tried: %s); install them (Debian: apt-get install python3-torch python3-numpy; elsewhere: pip install torch numpy) or name an interpreter that has them in VOMC_PYTHON",
		src, strings.Join(why, "; "))
}

var deviceRE = regexp.MustCompile(`^(auto|cpu|cuda(:[0-9]+)?)$`)

// Validate checks the engine's settings (not the machine: see Check).
func (t *Torch) Validate() error {
	switch {
	case !deviceRE.MatchString(t.device()):
		return fmt.Errorf("torch engine: device %q: want auto, cpu, cuda or cuda:N", t.Device)
	case t.AMP != "" && t.AMP != "auto" && t.AMP != "bf16" && t.AMP != "off":
		return fmt.Errorf("torch engine: amp %q: want auto, bf16 or off", t.AMP)
	case t.Threads < 0:
		return fmt.Errorf("torch engine: %d threads: want ≥ 0 (0: torch's default)", t.Threads)
	}
	return nil
}

func (t *Torch) device() string {
	if t.Device == "" {
		return "auto"
	}
	return t.Device
}

// pythonCandidates are the interpreters to try, in order: want, or
// $VOMC_PYTHON, or python3 on PATH and /usr/bin/python3 (each once); and a
// description of where they came from ("VOMC_PYTHON=…" for the variable's).
func pythonCandidates(want string) ([]string, string) {
	src := want
	if want == "" {
		want = os.Getenv("VOMC_PYTHON")
		src = "VOMC_PYTHON=" + want
	}
	names := []string{want}
	if want == "" {
		names, src = []string{"python3", "/usr/bin/python3"}, "python3 and /usr/bin/python3"
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range names {
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			if seen[r] {
				continue
			}
			seen[r] = true
		}
		out = append(out, p)
	}
	return out, src
}

// bootstrap runs the package as `python -m vomc_torch` would, but without
// the working directory on sys.path (a vomc_torch/ or numpy.py there must
// not shadow the real ones).
const bootstrap = "import runpy, sys; sys.path.pop(0); runpy.run_module('" + python.Package + "', run_name='__main__', alter_sys=True)"

// command is `python -m vomc_torch args…` (see bootstrap) with the package
// on PYTHONPATH.
func (t *Torch) command(ctx context.Context, env *TorchEnv, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, env.Python, append([]string{"-c", bootstrap}, args...)...)
	pp := env.PYTHONPATH
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pp += string(os.PathListSeparator) + old
	}
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pp, "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
	return cmd
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimPrefix(s, "vomc_torch: ")
}

// Flags are the device and speed flags that give an engine t's settings,
// on vomc's command line as on the engine's (e.g. for Slurm tasks).
func (t *Torch) Flags() []string {
	a := []string{"--device", t.device()}
	if t.AMP != "" {
		a = append(a, "--amp", t.AMP)
	}
	if t.Compile {
		a = append(a, "--compile")
	}
	if t.Threads > 0 {
		a = append(a, "--threads", strconv.Itoa(t.Threads))
	}
	return a
}

// run runs an engine command under ctx: when ctx ends the engine gets
// SIGINT (os.Interrupt), saves its checkpoint and exits (it is killed if
// it has not after a minute). Its standard error goes to log and its
// last 64 KiB are kept for the error.
func (t *Torch) run(ctx context.Context, env *TorchEnv, log io.Writer, args ...string) error {
	cmd := t.command(ctx, env, args...)
	tail := &tailBuffer{max: 64 << 10}
	var w io.Writer = tail
	if log != nil {
		w = io.MultiWriter(log, tail)
	}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Cancel = func() error { return interrupt(cmd.Process) }
	cmd.WaitDelay = 5 * time.Minute // an epoch-end validation may be under way
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("torch engine: %w", err)
	}
	err := cmd.Wait()
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		te := &TorchError{Code: ee.ExitCode(), Msg: lastLine(tail.Bytes()), Ctx: ctx.Err()}
		if te.Code == -1 { // killed by a signal
			te.Msg = ee.ProcessState.String()
			if te.Ctx != nil {
				te.Code = torchExitInterrupted // stopped on our interruption before it could save
			}
		}
		return te
	}
	return fmt.Errorf("torch engine: %w", err)
}

// TorchError is a failed engine command: its exit status (−1: killed by
// a signal) and the last line it printed (or the signal).
type TorchError struct {
	Code int
	Msg  string
	Ctx  error // the context's error when the command was interrupted
}

func (e *TorchError) Error() string {
	return fmt.Sprintf("torch engine (exit status %d): %s", e.Code, e.Msg)
}

// Interrupted reports an engine stopped by SIGINT/SIGTERM (checkpoint
// saved).
func (e *TorchError) Interrupted() bool { return e.Code == torchExitInterrupted }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.b...)
}

// startTorch prepares a new transformer run in dir for the PyTorch engine,
// exactly as the Go engine's Start would begin it: config.json,
// train_config.json (with "engine": "torch"), an empty train.jsonl and the
// step-0 checkpoint holding InitParams(cfg, seed), so that both engines
// start from the same parameters and see the same windows in the same
// order. train and val are the run's windows (from Data(meta)).
func startTorch(dir string, cfg transformer.Config, tc transformer.TrainConfig, seed uint64, meta map[string]string, train, val transformer.Windows) error {
	nv := 0
	if val != nil {
		nv = val.Windows()
	}
	c, err := transformer.FreshCheckpoint(cfg, tc, transformer.InitParams(cfg, seed), train.Windows(), nv, len(train.Window(0)), meta)
	if err != nil {
		return err
	}
	files, err := ConfigFiles(cfg, tc, meta, EngineTorch)
	if err != nil {
		return err
	}
	if err := writeFiles(dir, append(files, File{LogFile, nil})); err != nil {
		return err
	}
	return c.Save(filepath.Join(dir, CheckpointFile))
}

// startTorchModule prepares a run of another PyTorch model (config: its
// JSON object with "arch", see python/vomc_torch/model.py) in dir:
// config.json and train_config.json; the engine draws the initial
// parameters (torch's generator seeded with the train config's seed) and
// writes the first checkpoint.
func startTorchModule(dir string, config map[string]any, tc transformer.TrainConfig, meta map[string]string) error {
	cj, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return err
	}
	tj, err := trainConfigJSON(tc, meta, EngineTorch)
	if err != nil {
		return err
	}
	return writeFiles(dir, []File{{ConfigFile, append(cj, '\n')}, {TrainConfigFile, tj}, {LogFile, nil}})
}

func writeFiles(dir string, files []File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := fsutil.WriteBytes(filepath.Join(dir, f.Name), true, f.Data); err != nil {
			return err
		}
	}
	return nil
}

// torchRun is one training run for Torch.train.
type torchRun struct {
	// Dir is the run directory (prepared by startTorch or
	// startTorchModule, or holding a checkpoint to resume).
	Dir string
	// CheckpointEvery is the checkpoint interval in steps (0: epoch ends
	// only).
	CheckpointEvery int
	// Data and Val, when not empty, are new paths of the run's data sets
	// (their checksums must match).
	Data, Val string
	// Snapshots are the steps after which the model is kept as a snapshot
	// (SnapshotPath).
	Snapshots []int
	// Output receives the engine's own output, its progress lines and
	// messages (nil: Torch.Stderr; Job.TorchOutput).
	Output io.Writer
	// Host is the backend vomc reads the model file the engine wrote
	// onto, to verify it (Engine.Backend).
	Host backend.Backend
}

// train trains the run with the engine until it ends: it resumes the run's
// checkpoint (startTorch's step-0 one for a new run), writing checkpoints,
// the log, snapshots and model.safetensors, then draws the training curve
// and returns the final checkpoint. When ctx ends the engine saves its
// checkpoint and Train returns an *InterruptedError; a divergence leaves
// the last good checkpoint and returns an error saying so.
func (t *Torch) train(ctx context.Context, r torchRun) (*transformer.Checkpoint, error) {
	env, err := t.Check()
	if err != nil {
		return nil, err
	}
	dir, log := r.Dir, r.Output
	args := append([]string{"train", "--out", dir, "--resume", "--no-summary", "--checkpoint-every", strconv.Itoa(r.CheckpointEvery)}, t.Flags()...)
	for flag, p := range map[string]string{"--data": r.Data, "--val": r.Val} {
		if p != "" {
			args = append(args, flag, p)
		}
	}
	if len(r.Snapshots) > 0 {
		args = append(args, "--snapshot-steps", joinSteps(r.Snapshots))
	}
	if log == nil {
		log = t.Stderr
	}
	err = t.run(ctx, env, log, args...)
	var te *TorchError
	if errors.As(err, &te) {
		switch {
		case te.Interrupted():
			c, lerr := transformer.LoadCheckpoint(filepath.Join(dir, CheckpointFile))
			step := -1
			if lerr == nil {
				step = c.State.Step
			}
			cause := te.Ctx
			if cause == nil {
				cause = errors.New(te.Msg)
			}
			return nil, &InterruptedError{Step: step, Err: cause}
		case te.Code == torchExitDiverged:
			return nil, fmt.Errorf("%s", te.Msg)
		case te.Code == -1:
			step := "?"
			if c, lerr := transformer.LoadCheckpoint(filepath.Join(dir, CheckpointFile)); lerr == nil {
				step = strconv.Itoa(c.State.Step)
			}
			return nil, fmt.Errorf("the torch engine was killed (%s); its last checkpoint is at step %s: %w", te.Msg, step, ErrResumable)
		}
	}
	if err != nil {
		return nil, err
	}
	c, err := transformer.LoadCheckpoint(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return nil, err
	}
	if c.ModelFormat == "" {
		// the model the engine wrote must load in vomc, verified
		m, err := transformer.LoadSafetensorsOn(r.Host, filepath.Join(dir, ModelFile))
		if err != nil {
			return nil, err
		}
		m.Free()
	}
	var ref Reference
	if _, val, _, err := Data(c.Meta); err == nil {
		ref, _ = CTWReference(val)
	}
	return c, DrawCurveRef(dir, c.History, ref)
}

// Predict writes the per-position predictive distributions of the model in
// model (a model.safetensors file or its run directory) on every window of
// the data set in data to out (.npy, shape (windows, N, A), the layout of
// the npy:path= method), replacing it if it exists (atomically).
func (t *Torch) Predict(ctx context.Context, model, data, out string) error {
	env, err := t.Check()
	if err != nil {
		return err
	}
	return t.run(ctx, env, t.Stderr, "predict", "--model", model, "--data", data, "--out", out, "--device", t.device(), "--force")
}

// PredictWindows returns the per-position predictive distributions of the
// model in model (a model.safetensors file or its run directory, of any
// architecture the engine trains) on windows (all of one length N ≥ 1,
// symbols 0..A−1): row [w, t], P(x_t = · | x_0..x_{t−1}) of window w, at
// rows[(w·N+t)·A:], probabilities (not logs). They are the float32 values
// Predict writes for a data set holding the same windows in the same
// order, widened to float64 exactly: the engine's own predict (batches of
// 64 windows, the same device) on the windows, which travel as raw bytes
// through a temporary directory, removed after. A module run whose
// recorded source has changed or vanished is refused as Predict refuses
// it. It uses the interpreter that Check found (t.Python, else
// $VOMC_PYTHON, else the first with torch and numpy, decided once).
func (t *Torch) PredictWindows(ctx context.Context, model string, windows [][]byte, A int) ([]float64, error) {
	if len(windows) == 0 || len(windows[0]) == 0 {
		return nil, fmt.Errorf("torch engine: no windows to predict")
	}
	N := len(windows[0])
	env, err := t.Check()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "vomc-predict-")
	if err != nil {
		return nil, fmt.Errorf("torch engine: %w", err)
	}
	defer os.RemoveAll(dir)
	sym := make([]byte, 0, len(windows)*N)
	for w, x := range windows {
		if len(x) != N {
			return nil, fmt.Errorf("torch engine: windows of different lengths (%d and %d at window %d)", N, len(x), w)
		}
		sym = append(sym, x...)
	}
	in, out := filepath.Join(dir, "symbols.bin"), filepath.Join(dir, "predictions.npy")
	if err := os.WriteFile(in, sym, 0o600); err != nil {
		return nil, fmt.Errorf("torch engine: %w", err)
	}
	// the engine's progress is its "wrote FILE" line, a temporary file's
	// name: kept for errors only
	if err := t.run(ctx, env, nil, "predict", "--model", model, "--symbols", in, "--n", strconv.Itoa(N), "--alphabet", strconv.Itoa(A),
		"--out", out, "--device", t.device(), "--force"); err != nil {
		return nil, err
	}
	a, err := npy.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("torch engine: its predictions: %w", err)
	}
	if want := []int{len(windows), N, A}; !slices.Equal(a.Shape, want) {
		return nil, fmt.Errorf("torch engine: predictions of shape %v, want %v", a.Shape, want)
	}
	return a.Data, nil
}

// ArchSource is where the module of a custom architecture
// ("MODULE:FACTORY", vomc train --arch) is, as the engine resolved it when
// the run started (python/vomc_torch/arch.py): the import name, the
// factory, the module's file (absolute), the sys.path folder it is
// imported from, and the SHA-256 of the file's bytes (hex). A run keeps it
// in its config (config.json, the checkpoint's and model file's metadata)
// as "arch_source"; the engine loads the module from there, without
// PYTHONPATH, and refuses a file that has changed or vanished.
type ArchSource struct {
	Module  string `json:"module"`
	Factory string `json:"factory"`
	File    string `json:"file"`
	Root    string `json:"root"`
	SHA256  string `json:"sha256"`
}

// ResolveArch finds the module of the custom architecture arch
// ("MODULE:FACTORY": MODULE a .py file, or a module name on the
// interpreter's path or in the current directory) and checks that it
// imports and has FACTORY. Its error names the interpreter where that
// matters (an import that fails, a module it cannot find).
func (t *Torch) ResolveArch(ctx context.Context, arch string) (*ArchSource, error) {
	env, err := t.Check()
	if err != nil {
		return nil, err
	}
	cmd := t.command(ctx, env, "arch", arch)
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		msg := lastLine(stderr.Bytes())
		if msg == "" {
			msg = err.Error()
		}
		msg = strings.TrimPrefix(msg, "arch ")
		if strings.Contains(msg, "(Python ") {
			msg += "; vomc runs the torch engine with $VOMC_PYTHON, else the first of python3 and /usr/bin/python3 with torch and numpy: set VOMC_PYTHON to choose another"
		}
		return nil, &OptionError{Option: "arch", Msg: " " + msg}
	}
	var src ArchSource
	if err := json.Unmarshal(bytes.TrimSpace(out), &src); err != nil || src.File == "" || src.SHA256 == "" {
		return nil, fmt.Errorf("torch engine: arch printed %q: %v", out, err)
	}
	return &src, nil
}

// TorchBench is one report of the engine's training benchmark: Mode
// "engine" (with its speed features, listed in Features) or "plain" (an
// eager float32 loop on the same device).
type TorchBench struct {
	Mode          string         `json:"mode"`
	Features      map[string]any `json:"features"`
	Batch         int            `json:"batch"`
	Params        int            `json:"params"`
	Steps         int            `json:"steps"`
	Warmup        int            `json:"warmup"`
	MeanStep      float64        `json:"mean_step_s"`
	MinStep       float64        `json:"min_step_s"`
	TokensPerSec  float64        `json:"tokens_per_s"`
	Loss          float64        `json:"loss"`
	Threads       int            `json:"threads"`
	PeakGPUMemory int64          `json:"peak_gpu_bytes"`
}

// Bench times training steps of cfg on batch random windows with the
// engine (after warmup untimed steps) and, with plain, also as a plain
// eager float32 PyTorch loop in the same process.
func (t *Torch) Bench(ctx context.Context, cfg transformer.Config, batch, steps, warmup int, plain bool) ([]TorchBench, error) {
	env, err := t.Check()
	if err != nil {
		return nil, err
	}
	args := append([]string{"bench", "--config", cfg.String(), "--batch", strconv.Itoa(batch),
		"--steps", strconv.Itoa(steps), "--warmup", strconv.Itoa(warmup)}, t.Flags()...)
	if plain {
		args = append(args, "--plain")
	}
	cmd := t.command(ctx, env, args...)
	var stderr tailBuffer
	stderr.max = 64 << 10
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("torch engine bench: %s", lastLine(stderr.Bytes()))
	}
	var reps []TorchBench
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var r TorchBench
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("torch engine bench printed %q: %v", line, err)
		}
		reps = append(reps, r)
	}
	return reps, nil
}
