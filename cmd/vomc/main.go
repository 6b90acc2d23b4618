// Command vomc samples context-tree sources, builds data sets, runs CTW,
// Kneser–Ney, PPM and Markov predictors in context, and plots the results.
// All logic lives in the packages; this command only parses flags and
// prints. Run `vomc help` for the list of commands.
package main

import (
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
	"github.com/vomc/vomc/transformer/trainrun"
)

// version is the vomc release this binary was built from.
const version = "0.1.0"

// commands are the commands of vomc by name (help/vomc.txt lists them).
var commands = map[string]func(args []string) error{
	"quickstart": runQuickstart, "tree": runTree, "generate": runGenerate, "data": runData, "eval": runEval, "plot": runPlot,
	"attention": runAttention, "train": runTrain, "dynamics": runDynamics, "explore": runExplore, "predict": runPredict, "ctw": runCTW,
	"construct": func(args []string) error { return constructCmd(args, os.Stdout) }, "synth": runSynth, "reproduce": runReproduce,
	"bench": runBench, "compress": runCompress, "decompress": runDecompress,
	"version": func([]string) error { fmt.Println("vomc", version); return nil },
}

func usage(w io.Writer) { fmt.Fprintf(w, help("vomc"), version) }

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
	if cmd, ok := commands[name]; ok {
		return runCommand(name, cmd, args[1:])
	}
	if right, ok := renamed[name]; ok {
		fmt.Fprintf(os.Stderr, "vomc: there is no command %q; use 'vomc %s'\n", name, right)
		return 2
	}
	fmt.Fprintf(os.Stderr, "vomc: unknown command %q%s\nRun 'vomc help' for the list of commands.\n", name, didYouMean(name, slices.Sorted(maps.Keys(commands)), ""))
	return 2
}

// runCommand runs the command name on args and returns the exit status:
// 0, 1 for an error, 2 for an error in the command line, or the status of
// the signal that interrupted it.
func runCommand(name string, cmd func(args []string) error, args []string) int {
	if err := kernels.EnvError(); err != nil {
		fmt.Fprintf(os.Stderr, "vomc: %v\n", err)
		return 2
	}
	// Commands that handle a first Ctrl-C themselves (stop, save, return)
	// get it; everything else is interrupted at once. Either way
	// registered temporaries are removed.
	stop := fsutil.HandleSignals(gracefulCommands[name], os.Stderr)
	err := cmd(args)
	stop()
	fsutil.CleanupTemps()
	if s := fsutil.Interrupted(); s != nil {
		if err != nil {
			fmt.Fprintf(os.Stderr, "vomc %s: %v\n", name, err)
		}
		return fsutil.ExitCode(s)
	}
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(os.Stderr, "vomc %s: %v%s\nRun 'vomc %s -h' for help.\n", name, err, hint(err), name)
		return 2
	}
	fmt.Fprintf(os.Stderr, "vomc %s: %v%s\n", name, err, hint(err))
	return 1
}

// hint is what to do about a library error, in the command line's terms
// (libraries name no flags): " (…)" or "".
func hint(err error) string {
	for _, h := range []struct {
		err  error
		text string
	}{{fsutil.ErrExists, "use --force to overwrite"}, {pipeline.ErrSubmitted, "use --force to replace it"},
		{dynamics.ErrNoSnapshots, "train it with 'vomc train --snapshots log:20' or --snapshot-every S"},
		{methods.ErrUnfinished, "continue it with 'vomc train --out DIR --resume'"}, {trainrun.ErrResumable, "continue the run with --resume"}} {
		if errors.Is(err, h.err) {
			return " (" + h.text + ")"
		}
	}
	return ""
}

// compute is the compute backend of every model a command builds: the CPU
// backend with the kernel set of VOMC_KERNELS (kernels.Default), chosen
// here once and passed down.
var compute = sync.OnceValue(func() backend.Backend { return cpu.New(kernels.Default()) })

// backendUsage is the help of --backend.
const backendUsage = "compute backend of vomc's engine: cpu (the kernel set of VOMC_KERNELS) or cuda, cuda:N (NVIDIA GPU N through the driver; no CUDA toolkit needed)"

// renamed maps removed command names to the command that does their job.
var renamed = map[string]string{"bench-compress": "bench compress"}

// gracefulCommands handle SIGINT themselves (signal.NotifyContext): a
// first Ctrl-C cancels their work and they return; a second one, or
// SIGTERM, ends them at once.
var gracefulCommands = map[string]bool{"train": true, "synth": true, "reproduce": true, "quickstart": true, "eval": true, "dynamics": true}

// usageError marks an error in the command line itself.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// helpFiles are the usage texts: help/NAME.txt is the usage line and
// description of 'vomc NAME -h' (a sub-command's NAME with "-" for " ").
//
//go:embed help/*.txt
var helpFiles embed.FS

// help is the text of help/NAME.txt.
func help(name string) string {
	b, err := helpFiles.ReadFile("help/" + strings.ReplaceAll(name, " ", "-") + ".txt")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// newFlags makes a FlagSet whose -h output starts with the command's usage
// line and description (help(name)).
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		text, examples, _ := strings.Cut(help(name), "\nExamples:\n")
		fmt.Fprintf(fs.Output(), "%s\n\nFlags:\n", strings.TrimSpace(text))
		fs.PrintDefaults()
		if examples != "" {
			fmt.Fprintf(fs.Output(), "\nExamples:\n%s", examples)
		}
	}
	return fs
}

// asUsage makes a non-nil err a usage error.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err.Error()}
}

// usageOf makes err a usage error, its message after prefix, when it is
// (wraps) an E; other errors are returned as they are.
func usageOf[E error](err error, prefix string) error {
	var e E
	if errors.As(err, &e) {
		return usageError{prefix + err.Error()}
	}
	return err
}

// flagError makes an option error of a library (opterr.Error: attnmap,
// construct) a usage error naming the options' flags; other errors are
// returned as they are.
func flagError(err error) error {
	var oe *opterr.Error
	if errors.As(err, &oe) {
		return usageError{oe.Flag("--")}
	}
	return err
}

// givenFlags is the set of the flags given on the command line.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

// parse parses flags, turning a parse failure into a usage error. Flags
// may come before, between or after the positional arguments (`vomc
// generate tree.json -n 50`); "--" ends the flags, so every argument after
// it is positional even when it starts with "-".
func parse(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard) // the flag package's message and full usage
	err := fs.Parse(interleaved(fs, args))
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	case err != nil:
		return usageError{flagMessage(fs, err)}
	}
	return nil
}

// flagMessage rewords a parse error of the flag package in one line, with
// the closest flag for an unknown one.
func flagMessage(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		return fmt.Sprintf("unknown flag --%s%s", name, didYouMean(name, names, "--"))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("--%s needs a value (--%s X or --%s=X)", name, name, name)
	}
	return strings.Replace(msg, "for flag -", "for flag --", 1)
}

// didYouMean is `; did you mean "x"?` for the candidate closest to s by
// edit distance (methods.Distance) when it is close — at most 2 edits and
// at most half of s, or s (3 letters or more) a prefix of it — else "".
func didYouMean(s string, candidates []string, prefix string) string {
	best, bd := "", 1<<30
	for _, c := range candidates {
		d := 2 * methods.Distance(strings.ToLower(s), strings.ToLower(c))
		if d > 4 || d > len(s) {
			d = 1 << 20
		}
		if strings.HasPrefix(c, s) && len(s) >= 3 {
			d = min(d, 5)
		}
		if d < bd {
			best, bd = c, d
		}
	}
	if bd > 5 {
		return ""
	}
	return fmt.Sprintf("; did you mean %s%s?", prefix, best)
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

// memAvailable is sysmem.Available, replaceable by tests.
var memAvailable = sysmem.Available

// checkMemory refuses work whose estimated peak memory est (bytes) exceeds
// the available memory, naming what needs it and both numbers.
func checkMemory(what string, est int64) error {
	avail := memAvailable()
	if avail > 0 && est > avail {
		return fmt.Errorf("%s needs about %s of memory (estimate), but only %s is available", what, fmtBytes(est), fmtBytes(avail))
	}
	return nil
}

func fmtBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (b+1023)>>10)
}
