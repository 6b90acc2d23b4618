package perf

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/kernels"
)

// 'vomc bench train' as a library call: the training throughput of
// configurations on the engine chosen once by the caller
// (trainrun.NewEngine).

// ConfigError is a configuration list that cannot be read: an option
// error (vomc's one type, opterr.Error) of option "configs".
type ConfigError = opterr.Error

// ParseTrainBenches reads a comma-separated list of configurations
// (ParseTrainBench; an unreadable one or a batch above
// transformer.MaxBatch is a *ConfigError) and, for the Go engine, refuses
// one whose training memory exceeds the memory available.
func ParseTrainBenches(list string, eng *trainrun.Engine) ([]TrainBench, error) {
	var bs []TrainBench
	for _, c := range strings.Split(list, ",") {
		b, err := ParseTrainBench(strings.TrimSpace(c))
		if err != nil {
			return nil, &ConfigError{Option: "configs", Msg: ": " + strings.ReplaceAll(err.Error(), "%", "%%"), Err: err}
		}
		if b.Batch > transformer.MaxBatch {
			return nil, &ConfigError{Option: "configs", Value: c, Msg: fmt.Sprintf(": batch %d above %d", b.Batch, transformer.MaxBatch)}
		}
		if eng.Torch() == nil {
			if err := trainrun.CheckBackendMemory(eng.Backend(), b.Model.TrainingBytes(b.Batch, b.Model.Context, transformer.KernelsOf(eng.Backend())), fmt.Sprintf("configuration %q", c)); err != nil {
				return nil, err
			}
		}
		bs = append(bs, b)
	}
	return bs, nil
}

// EngineBenchOptions are the settings of BenchEngine: Steps timed steps
// after Warmup untimed ones; the Go engine's Threads (GOMAXPROCS) and Seed
// (initialisation and windows); with Plain, the torch engine also times a
// plain eager float32 PyTorch loop. With Profile, the Go engine runs each
// configuration at 1 thread and at Threads with every backend op timed
// (BenchTrainProfiled), and Write prints the per-op tables.
type EngineBenchOptions struct {
	Steps, Warmup, Threads int
	Seed                   uint64
	Plain                  bool
	Profile                bool
}

// TorchTrainRow is the torch engine's reports of one configuration.
type TorchTrainRow struct {
	Config  string                `json:"config"`
	Model   transformer.Config    `json:"model"`
	Reports []trainrun.TorchBench `json:"reports"`
}

// EngineBench is the result of BenchEngine: the Go engine's reports, or
// the torch engine's environment (Env not nil) and rows.
type EngineBench struct {
	Go    []*TrainReport
	Env   *trainrun.TorchEnv
	Torch []TorchTrainRow
}

// BenchEngine times training steps of each configuration with eng.
func BenchEngine(ctx context.Context, eng *trainrun.Engine, bs []TrainBench, o EngineBenchOptions) (*EngineBench, error) {
	if t := eng.Torch(); t != nil {
		env, err := t.Check()
		if err != nil {
			return nil, err
		}
		r := &EngineBench{Env: env}
		for _, b := range bs {
			reps, err := t.Bench(ctx, b.Model, b.Batch, o.Steps, o.Warmup, o.Plain)
			if err != nil {
				return nil, err
			}
			r.Torch = append(r.Torch, TorchTrainRow{b.Name, b.Model, reps})
		}
		return r, nil
	}
	be := eng.Backend()
	prev := runtime.GOMAXPROCS(o.Threads)
	defer runtime.GOMAXPROCS(prev)
	r := &EngineBench{}
	threads := []int{o.Threads}
	if o.Profile && o.Threads != 1 {
		threads = []int{1, o.Threads}
	}
	for _, b := range bs {
		for _, n := range threads {
			runtime.GOMAXPROCS(n)
			bench := BenchTrain
			if o.Profile {
				bench = BenchTrainProfiled
			}
			rep, err := bench(be, b, o.Steps, o.Warmup, o.Seed)
			if err != nil {
				return nil, err
			}
			r.Go = append(r.Go, rep)
		}
	}
	return r, nil
}

// Write prints the reports as indented JSON (asJSON) or as a table headed
// by the machine (Go engine) or the torch engine's environment.
func (r *EngineBench) Write(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if r.Env != nil {
			return enc.Encode(r.Torch)
		}
		return enc.Encode(r.Go)
	}
	if r.Env == nil {
		attn := ""
		if kernels.Default().HasAttention16() {
			attn = " (fused attention for head size 16)"
		}
		fmt.Fprintf(w, "%s/%s, %s, %d CPUs, kernel set %s%s\n", runtime.GOOS, runtime.GOARCH, runtime.Version(), runtime.NumCPU(), kernels.Active(), attn)
		WriteTrainReports(w, r.Go)
		// the per-op tables: one per configuration, its runs side by side
		for i := 0; i < len(r.Go); {
			j := i + 1
			for j < len(r.Go) && r.Go[j].Name == r.Go[i].Name {
				j++
			}
			if r.Go[i].Profile != nil {
				fmt.Fprintln(w)
				WriteOpProfiles(w, r.Go[i:j])
			}
			i = j
		}
		return nil
	}
	dev := r.Env.Device
	if r.Env.GPU != "" {
		dev += " (" + r.Env.GPU + ")"
	}
	fmt.Fprintf(w, "torch engine: Python %s, torch %s, device %s\n", r.Env.PythonVersion, r.Env.Torch, dev)
	fmt.Fprintf(w, "training throughput (forward + backward + clipping + AdamW), random windows\n")
	fmt.Fprintf(w, "%-6s %-34s %5s %9s %-7s %11s %12s  %s\n", "config", "model", "batch", "params", "mode", "step (mean)", "tokens/s", "features")
	for _, row := range r.Torch {
		c := row.Model
		model := fmt.Sprintf("L=%d H=%v E=%d N=%d A=%d", c.Layers, c.Heads, c.Embed, c.Context, c.Alphabet)
		for _, rep := range row.Reports {
			fmt.Fprintf(w, "%-6s %-34s %5d %9d %-7s %11s %12.0f  %s\n", row.Config, model, rep.Batch, rep.Params, rep.Mode,
				time.Duration(rep.MeanStep*float64(time.Second)).Round(time.Millisecond), rep.TokensPerSec, features(rep.Features))
		}
		if len(row.Reports) == 2 && row.Reports[1].TokensPerSec > 0 {
			fmt.Fprintf(w, "%-6s engine / plain eager float32: %.2f×\n", row.Config, row.Reports[0].TokensPerSec/row.Reports[1].TokensPerSec)
		}
	}
	return nil
}

// features lists the speed features a torch report used.
func features(f map[string]any) string {
	var on []string
	for _, k := range []string{"amp", "sdpa", "tf32", "fused_adamw", "compile", "pinned_batches"} {
		switch v := f[k].(type) {
		case bool:
			if v {
				on = append(on, k)
			}
		case string:
			if v != "" && v != "off" {
				on = append(on, k+"="+v)
			}
		}
	}
	if len(on) == 0 {
		return "none (float32, explicit attention)"
	}
	return strings.Join(on, ",")
}
