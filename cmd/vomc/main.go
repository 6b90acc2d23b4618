// Command vomc samples context-tree sources, builds data sets, runs CTW,
// Kneser–Ney, PPM and Markov predictors in context, and plots the results.
// All logic lives in the packages; this command only parses flags and
// prints. Run `vomc help` for the list of commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/transformer/kernels"
)

// version is the vomc release this binary was built from.
const version = "0.1.0"

type command struct {
	name, summary string
	run           func(args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"quickstart", "small end-to-end run: sample trees, build data, evaluate CTW/KN/PPM in context, plot", runQuickstart},
		{"tree", "sample a context tree from the prior, or show and draw a tree file", runTree},
		{"generate", "generate a symbol sequence from a tree file", runGenerate},
		{"data", "build a data set on disk (K trees, windows of N symbols); export .npy", runData},
		{"eval", "evaluate predictors in context on a data set or a file: per-position loss, CIs, CSV/JSON, plots", runEval},
		{"plot", "draw a saved evaluation (JSON) as PNG or SVG", runPlot},
		{"attention", "attention maps of a trained transformer: heatmaps, suffix-match analysis, head labels (Fig. 5)", runAttention},
		{"train", "train a transformer on a data set (checkpoints, --resume, safetensors weights, training curve)", runTrain},
		{"dynamics", "how a model learned: each training snapshot against unigram, Markov(k), KN and CTW (KL per position), head labels by step", runDynamics},
		{"predict", "a model's per-position distributions on a data set as .npy, computed by the PyTorch engine (any PyTorch model)", runPredict},
		{"ctw", "CTW on a file: log marginal likelihood, MAP tree, posterior weights ω over context lengths", runCTW},
		{"construct", "the paper's transformer construction of CTW: run it layer by layer, weights, error vs temperature", runConstruct},
		{"synth", "Fig. 8 synthetic TF 2-0 models: constructed layers 1-2 + a trained FF and read-out (variants)", runSynth},
		{"reproduce", "reproduce the paper: every figure and an HTML report from one command (--preset tiny|small|medium|paper)", runReproduce},
		{"bench", "throughput benchmarks: CTW, 'bench train' (transformers), 'bench compress' (files)", runBench},
		{"compress", "compress a file losslessly: context mixing (default), PPM or CTW with arithmetic coding", runCompress},
		{"decompress", "decompress a file written by 'vomc compress' (verifies its checksum)", runDecompress},
		{"version", "print the version", func([]string) error { fmt.Println("vomc", version); return nil }},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `vomc %s — variable-order Markov chains, context-tree weighting and in-context learning

Usage: vomc <command> [flags] [arguments]

Commands:
`, version)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run 'vomc <command> -h' for a command's flags. Flags may come before or
after the arguments; '--' ends them (for a file named like a flag). Losses are in nats unless a
column says bits. The prior's λ is the STOP probability (a node at depth < D
is a leaf with probability λ). Every random choice flows from --seed.
`)
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		usage(os.Stderr)
		return 2
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			return run([]string{args[1], "-h"})
		}
		usage(os.Stdout)
		return 0
	}
	for _, c := range commands {
		if c.name == name {
			if err := kernels.EnvError(); err != nil {
				fmt.Fprintf(os.Stderr, "vomc: %v\n", err)
				return 2
			}
			// Commands that handle a first Ctrl-C themselves (stop,
			// save, return) get it; everything else is interrupted at
			// once. Either way registered temporaries are removed.
			stop := fsutil.HandleSignals(gracefulCommands[name], os.Stderr)
			err := c.run(args[1:])
			stop()
			fsutil.CleanupTemps()
			if s := fsutil.Interrupted(); s != nil {
				if err != nil {
					fmt.Fprintf(os.Stderr, "vomc %s: %v\n", name, err)
				}
				return fsutil.ExitCode(s)
			}
			if err == nil {
				return 0
			}
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			var ue usageError
			if errors.As(err, &ue) {
				fmt.Fprintf(os.Stderr, "vomc %s: %v\nRun 'vomc %s -h' for help.\n", name, err, name)
				return 2
			}
			fmt.Fprintf(os.Stderr, "vomc %s: %v\n", name, err)
			return 1
		}
	}
	if right, ok := renamed[name]; ok {
		fmt.Fprintf(os.Stderr, "vomc: there is no command %q; use 'vomc %s'\n", name, right)
		return 2
	}
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "vomc: unknown command %q (commands: %s)\n", name, strings.Join(names, ", "))
	return 2
}

// renamed maps removed command names to the command that does their job.
var renamed = map[string]string{"bench-compress": "bench compress"}

// gracefulCommands handle SIGINT themselves (signal.NotifyContext): a
// first Ctrl-C cancels their work and they return; a second one, or
// SIGTERM, ends them at once.
var gracefulCommands = map[string]bool{"train": true, "synth": true, "reproduce": true, "quickstart": true, "eval": true}

// usageError marks an error in the command line itself.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// newFlags makes a FlagSet whose -h output starts with the command's usage
// line and description.
func newFlags(name, synopsis, description string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: vomc %s %s\n\n%s\n\nFlags:\n", name, synopsis, strings.TrimSpace(description))
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags, turning a parse failure into a usage error. Flags
// may come before, between or after the positional arguments (`vomc
// generate tree.json -n 50`); "--" ends the flags, so every argument after
// it is positional even when it starts with "-".
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	return nil
}

// interleaved reorders args so that the flag package, which stops at the
// first positional argument, sees every flag: the flags (with the values
// of non-boolean flags that are given as a separate argument) first, then
// "--" and the positional arguments in their order. An argument is a flag
// when it starts with "-" and is not "-" itself, up to the first "--".
// Unknown flags, and a last flag missing its value, are kept among the
// flags, so fs.Parse reports them.
func interleaved(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(a[1:], "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
			if i+1 == len(args) {
				return flags // fs.Parse: "flag needs an argument"
			}
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(append(flags, "--"), pos...)
}

// isBoolFlag reports whether f takes no value argument (-v rather than -v x).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
