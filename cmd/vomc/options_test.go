package main

import (
	"flag"
	"fmt"
	"testing"

	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
)

// TestTrainingFlagsDeclared: the training flags of 'vomc train' and 'vomc
// synth' are the declared training options (transformer.Options) — each
// with the option's documentation and default (synth's defaults are
// synth.DefaultTrainConfig's) — and every error of an option names its
// flag; no other flag of theirs is a training option under another name.
func TestTrainingFlagsDeclared(t *testing.T) {
	synthBase := synth.DefaultTrainConfig()
	synthFS := newFlags("synth")
	synth.AddFlags(synthFS)
	for _, cmd := range []struct {
		name string
		fs   *flag.FlagSet
		base transformer.TrainConfig
	}{{"train", newTrainCmd().fs, transformer.OptionDefaults()}, {"synth", synthFS, synthBase}} {
		for _, o := range transformer.Options {
			f := cmd.fs.Lookup(o.Flag)
			want := o.Flag != "" && !(cmd.name == "synth" && o.NoSynth)
			if (f != nil) != want {
				t.Errorf("vomc %s: flag --%s of %s: defined %v, want %v", cmd.name, o.Flag, o.Key, f != nil, want)
				continue
			}
			if f == nil {
				continue
			}
			def := o.Default
			if !o.Run {
				def = o.Get(cmd.base)
			}
			if f.Usage != o.Doc || f.DefValue != fmt.Sprint(def) {
				t.Errorf("vomc %s --%s: usage %q, default %s; declared %q, %v", cmd.name, o.Flag, f.Usage, f.DefValue, o.Doc, def)
			}
			if flagOf(o.Key) != "--"+o.Flag {
				t.Errorf("option %s is named %q in errors", o.Key, flagOf(o.Key))
			}
		}
		// the flags that are not training options: the data's, the
		// model's, the engine's and the command's own
		known := map[string]bool{"data": true, "val": true, "val-frac": true, "out": true, "resume": true, "force": true,
			"N": true, "layers": true, "heads": true, "E": true, "ff": true, "no-ff": true, "layernorm": true, "act": true,
			"pos": true, "allow-unverified": true, "engine": true, "backend": true, "device": true, "amp": true, "compile": true,
			"torch-threads": true, "snapshot-every": true, "arch": true, "hidden": true, "variant": true, "max-windows": true,
			"D": true, "embed": true, "count-norm": true, "encoding": true, "eval-every": true}
		cmd.fs.VisitAll(func(f *flag.Flag) {
			if _, declared := optionOfFlag(f.Name); !declared && !known[f.Name] {
				t.Errorf("vomc %s --%s is neither a declared training option nor a known flag", cmd.name, f.Name)
			}
		})
	}
	for option, f := range optionFlags {
		if _, ok := transformer.OptionByKey(option); ok {
			t.Errorf("optionFlags names the declared option %s (%s): its flag is the declaration's", option, f)
		}
	}
	if trainrun.DefaultCheckpointEvery() != transformer.OptionByKeyMust("checkpoint_every").Default {
		t.Error("DefaultCheckpointEvery is not the declared default")
	}
}

// optionOfFlag is the declared option whose flag is name.
func optionOfFlag(name string) (transformer.Option, bool) {
	for _, o := range transformer.Options {
		if o.Flag == name {
			return o, true
		}
	}
	return transformer.Option{}, false
}
