package trainrun

import (
	"flag"
	"fmt"
	"strings"

	"github.com/vomc/vomc/transformer"
)

// AddFlags defines on fs the flag of every declared training option
// (transformer.Options) that has one: the TrainConfig options into tc, the
// checkpoint interval into *checkpointEvery and the snapshot specification
// into *snapshots, each with the value it holds as its default and the
// option's Doc as its usage. For 'vomc synth' (synth) the options it has
// no flag for are left out, and snapshots may be nil.
func AddFlags(fs *flag.FlagSet, tc *transformer.TrainConfig, checkpointEvery *int, snapshots *string, synth bool) {
	for _, o := range transformer.Options {
		if o.Flag == "" || synth && o.NoSynth {
			continue
		}
		var p any
		switch {
		case !o.Run:
			p = o.Ptr(tc)
		case o.Key == "checkpoint_every":
			p = checkpointEvery
		case o.Key == "snapshots":
			p = snapshots
		default:
			panic("trainrun: no flag target for the run option " + o.Key)
		}
		switch p := p.(type) {
		case *int:
			fs.IntVar(p, o.Flag, *p, o.Doc)
		case *uint64:
			fs.Uint64Var(p, o.Flag, *p, o.Doc)
		case *float64:
			fs.Float64Var(p, o.Flag, *p, o.Doc)
		case *bool:
			fs.BoolVar(p, o.Flag, *p, o.Doc)
		case *string:
			fs.StringVar(p, o.Flag, *p, o.Doc)
		default:
			panic(fmt.Sprintf("trainrun: option %s of type %T", o.Key, p))
		}
	}
}

// OptionFlag is the command-line flag of a declared training option
// ("warmup_steps": "--warmup"; "" for none).
func OptionFlag(key string) string {
	if o, ok := transformer.OptionByKey(key); ok && o.Flag != "" {
		return "--" + o.Flag
	}
	return ""
}

// StudyOption is the declared training option of a study's
// configuration key ("warmup": warmup_steps), if any.
func StudyOption(key string) (transformer.Option, bool) {
	for _, o := range transformer.Options {
		if o.StudyKey() == key && key != "" {
			return o, true
		}
	}
	return transformer.Option{}, false
}

// DefaultCheckpointEvery is the declared default of the checkpoint
// interval.
func DefaultCheckpointEvery() int {
	return transformer.OptionByKeyMust("checkpoint_every").Default.(int)
}

// AddRunFlags defines the flags of a run's directory and data ('vomc
// train', 'vomc synth'): --data, --val, --val-frac, --out, --resume,
// --force; out is the usage of --out, noVal what --val-frac 0 means.
func AddRunFlags(fs *flag.FlagSet, dir *string, resume, force *bool, d *DataSpec, out, noVal string) {
	fs.StringVar(&d.Data, "data", "", "training data set directory (from 'vomc data')")
	fs.StringVar(&d.Val, "val", "", "validation data set directory (default: --val-frac of the training trees)")
	fs.Float64Var(&d.ValFrac, "val-frac", 0.05, "without --val: fraction of the training trees held out for validation (0: "+noVal+")")
	fs.StringVar(dir, "out", "", out)
	fs.BoolVar(resume, "resume", false, "continue the run in --out from its checkpoint")
	fs.BoolVar(force, "force", false, "start afresh even if --out holds a run")
}

// OnlyFlags refuses, with --resume, the flags given on fs that are not
// allowed (the run's settings are in its checkpoint); extend names the
// flags that extend a run, if any.
func OnlyFlags(fs *flag.FlagSet, allowed map[string]bool, extend string) error {
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if !allowed[f.Name] {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	if extend != "" {
		extend = "; " + extend + " extend it"
	}
	return &OptionError{Msg: fmt.Sprintf("%s cannot be changed when resuming (the run's settings are in its checkpoint%s)", strings.Join(bad, ", "), extend)}
}

// AddFlags defines the flags of the model of 'vomc train' on fs into m;
// --no-ff sets *noFF.
func (m *ModelOptions) AddFlags(fs *flag.FlagSet, noFF *bool) {
	fs.IntVar(&m.Layers, "layers", 2, "number of layers L")
	fs.StringVar(&m.Heads, "heads", "8", "with --arch transformer: attention heads: one number for every layer, or one per layer (e.g. 2,1)")
	fs.IntVar(&m.Embed, "E", 128, "embedding dimension E")
	fs.BoolVar(&m.FeedForward, "ff", true, "with --arch transformer: feed-forward sub-layers (hidden width 4E)")
	fs.BoolVar(noFF, "no-ff", false, "with --arch transformer: attention-only network (same as --ff=false)")
	fs.BoolVar(&m.LayerNorm, "layernorm", true, "with --arch transformer: pre-LayerNorms (before attention, feed-forward and the output head)")
	fs.StringVar(&m.Activation, "act", transformer.GELU, "with --arch transformer, --ff, without --no-ff: feed-forward activation: relu or gelu (exact erf GELU)")
	fs.StringVar(&m.Positional, "pos", transformer.Learned, "with --arch transformer: positional embedding: learned or sinusoidal")
	fs.StringVar(&m.Arch, "arch", ArchTransformer, "model: transformer, or (torch engine) lstm or "+ArchModule+", any PyTorch module: MODULE a .py file or a module name, FACTORY its function of the run's config (which holds -E as embed, --hidden, --layers, alphabet and context); the run records the module's file and hash and finds it there again")
	fs.IntVar(&m.Hidden, "hidden", 0, "the width of --arch lstm or "+ArchModule+" (default: E; not for a transformer)")
}

// AddFlags defines the torch engine's flags on fs, into t.
func (t *Torch) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&t.Device, "device", "auto", "torch engine: auto (CUDA when available), cpu, cuda or cuda:N")
	fs.StringVar(&t.AMP, "amp", "auto", "torch engine: auto (bf16 autocast on CUDA), bf16 or off")
	fs.BoolVar(&t.Compile, "compile", false, "torch engine: torch.compile the model (torch ≥ 2)")
	fs.IntVar(&t.Threads, "torch-threads", 0, "torch engine: CPU threads (0: torch's default)")
}
