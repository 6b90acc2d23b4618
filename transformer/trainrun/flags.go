package trainrun

import (
	"flag"
	"fmt"

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
