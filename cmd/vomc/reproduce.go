package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/vomc/vomc/reproduce"
)

// setFlags collects repeated --set key=value flags.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// reproduceConfig builds the effective configuration: the preset, then the
// JSON file, then the --set overrides in order.
func reproduceConfig(preset, file string, sets []string) (reproduce.Config, error) {
	cfg, err := reproduce.Preset(preset)
	if err != nil {
		return cfg, usageError{err.Error()}
	}
	if file != "" {
		if err := cfg.LoadFile(file); err != nil {
			return cfg, err
		}
	}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return cfg, usagef("--set %q: want key=value", s)
		}
		if err := cfg.Set(k, v); err != nil {
			return cfg, usageError{err.Error()}
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err.Error()}
	}
	return cfg, nil
}

func runReproduce(args []string) error {
	fs := newFlags("reproduce", "--preset tiny|small|medium|paper [--out DIR] [--config FILE.json] [--set key=value ...]", `
Runs the paper's whole study from data generated in this run and writes every
figure and one self-contained HTML report (DIR/report.html): Fig. 3
(transformers of 1..4 (6) layers vs CTW and KN with δ tuned on the training
data), Fig. 4 (attention-only and single-head networks), Fig. 5 (attention
heatmaps and suffix matching), Fig. 8 (synthetic TF 2-0 models, when built),
Fig. 10 (PPM method A), the (D+2)-layer construction beside CTW, and a summary
table (mean loss over the window and its second half, excess over CTW with 95%
CIs, training time, parameters).

Presets: tiny (seconds to a minute; for tests), small (A=3, D=3, N=256; under
an hour on 2 cores), medium (D=4, N=512; many hours), paper (the paper's
settings; a big machine). Every parameter can be changed with --set key=value
(repeatable; lists as 1,2,3, model lists as 4;4,4;4,4,4 or JSON) or a JSON
--config file (applied before --set). Models are written as heads per layer
with optional -ff (no feed-forward) and -ln (no LayerNorm) suffixes.

Stages are cached in DIR/stages/<name>-<hash>/ under a hash of their
configuration, their inputs' hashes and the vomc version: running the same
command again skips every stage, and changing one parameter reruns only the
stages it affects. An interrupted run (Ctrl-C) resumes where it stopped;
transformer training continues from its checkpoint.`)
	preset := fs.String("preset", "tiny", "preset: "+strings.Join(reproduce.Presets, ", "))
	out := fs.String("out", "", "output directory (default reproduce-PRESET)")
	file := fs.String("config", "", "JSON file of overrides (keys as printed)")
	var sets setFlags
	fs.Var(&sets, "set", "override one parameter, key=value (repeatable)")
	dry := fs.Bool("dry-run", false, "print the effective configuration and the estimated cost, then stop")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %v", fs.Args())
	}
	cfg, err := reproduceConfig(*preset, *file, sets)
	if err != nil {
		return err
	}
	if *out == "" {
		*out = "reproduce-" + cfg.Preset
	}
	fmt.Printf("effective configuration:\n%s\n", cfg.JSON())
	fmt.Printf("%d transformers, ≤ %.3gM training tokens each; estimated training time on a 2-core AVX-512 machine: %.2f h\n",
		len(cfg.Models()), cfg.TrainTokens()/1e6, cfg.EstimateHours())
	if *dry {
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := reproduce.Run(ctx, cfg, reproduce.Options{Out: *out, Version: version, Log: os.Stderr})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w\ninterrupted: run the same command again to resume", err)
		}
		return err
	}
	fmt.Printf("ran %d stages, %d cached, in %s\nreport: %s\nfigures: %s\n", len(res.Ran), len(res.Skipped),
		res.Elapsed.Round(1e9), res.Report, strings.Join(res.Figures, " "))
	return nil
}
