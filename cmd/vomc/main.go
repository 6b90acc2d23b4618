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
	"github.com/vomc/vomc/internal/cli"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// version is the vomc release this binary was built from.
const version = "0.1.0"

// commands are the commands of vomc by name (help/vomc.txt lists them).
var commands = map[string]func(args []string) error{
	"quickstart": runQuickstart, "tree": runTree, "generate": runGenerate, "data": runData, "eval": runEval, "plot": runPlot,
	"attention": runAttention, "ablate": runAblate, "train": runTrain, "dynamics": runDynamics, "explore": runExplore, "predict": runPredict, "ctw": runCTW,
	"construct": func(args []string) error { return constructCmd(args, os.Stdout) }, "synth": runSynth, "reproduce": runReproduce,
	"bench": runBench, "compress": runCompress, "decompress": runDecompress, "probe": runProbe,
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
	fmt.Fprintf(os.Stderr, "vomc: unknown command %q%s\nRun 'vomc help' for the list of commands.\n", name, opterr.DidYouMean(name, slices.Sorted(maps.Keys(commands)), "", false))
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
	fmt.Fprintf(os.Stderr, "vomc %s: %s%s\n", name, strings.TrimPrefix(err.Error(), name+": "), hint(err)) // not "vomc explore: explore: …"
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
		{methods.ErrUnfinished, "continue it with 'vomc train --out DIR --resume'"}, {trainrun.ErrResumable, "continue the run with --resume"}, {study.ErrPreset, "choose it with --preset"}} {
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

// renamed maps removed command names to the command that does their job.
var renamed = map[string]string{"bench-compress": "bench compress"}

// gracefulCommands handle SIGINT themselves (signal.NotifyContext): a
// first Ctrl-C cancels their work and they return; a second one, or
// SIGTERM, ends them at once.
var gracefulCommands = map[string]bool{"train": true, "synth": true, "reproduce": true, "quickstart": true, "eval": true, "dynamics": true}

// The command-line plumbing (package cli) under the names the commands use.
type usageError = cli.UsageError

var usagef, asUsage, parse, parseArgs, givenFlags, inMode = cli.Usagef, cli.AsUsage, cli.Parse, cli.ParseArgs, cli.Given, cli.InMode

func usageOf[E error](err error, prefix string) error { return cli.UsageOf[E](err, prefix) }

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

// newFlags makes a FlagSet whose -h output is help/NAME.txt with the flags
// before its examples.
func newFlags(name string) *flag.FlagSet { return cli.NewFlags(name, help(name)) }

// flagError makes an option error of a library (opterr.Error: attnmap,
// construct) a usage error naming the options' flags; other errors are
// returned as they are.
func flagError(err error) error {
	var oe *opterr.Error
	if errors.As(err, &oe) {
		return usageError{Msg: oe.Flag("--")}
	}
	return err
}
