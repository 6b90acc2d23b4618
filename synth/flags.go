package synth

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/vomc/vomc/trainrun"
)

// Flags are the flags of 'vomc synth': most go straight into the options
// of TrainDir, the others are checked and converted by DirOptions.
type Flags struct {
	o                 DirOptions
	fs                *flag.FlagSet
	variant, encoding string
	evalEvery         int
}

// ResumeFlags may be given together with --resume.
var ResumeFlags = map[string]bool{"out": true, "resume": true, "data": true, "val": true, "checkpoint-every": true}

// AddFlags defines the flags of 'vomc synth' on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{o: DirOptions{Train: DefaultTrainConfig(), CheckpointEvery: trainrun.DefaultCheckpointEvery()}, fs: fs}
	o, m := &f.o, &f.o.Model
	trainrun.AddRunFlags(fs, &o.Dir, &o.Resume, &o.Force, &o.Data, "output directory", "none")
	trainrun.AddFlags(fs, &o.Train, &o.CheckpointEvery, nil, true)
	fs.StringVar(&f.variant, "variant", "tf20", "feature variant: tf20, nocounts, totalcounts or allcounts")
	fs.IntVar(&o.Data.MaxWindows, "max-windows", 0, "use only the first this many training windows (0: all)")
	fs.IntVar(&m.D, "D", 0, "depth D of the constructed layers (0: the data set's largest tree depth)")
	fs.IntVar(&m.Embed, "embed", 0, "width of an optional linear input embedding (0: none, the FF acts on the features)")
	fs.IntVar(&m.Hidden, "hidden", 0, "FF hidden width (0: 4 × the stream width)")
	fs.StringVar(&m.Activation, "act", GELU, "FF activation: gelu or relu")
	fs.StringVar(&m.CountNorm, "count-norm", Log1p, "count normalisation: log1p (ln(1+c)) or scale (c/N); --encoding log and linear imply log1p and scale")
	fs.StringVar(&f.encoding, "encoding", Paper, "representation of TF 2-0's position and of the counts: paper, log or linear")
	fs.IntVar(&f.evalEvery, "eval-every", 0, "removed: validation runs at every epoch end and --patience counts epochs (see --log-every)")
	return f
}

// DirOptions checks the parsed flags and returns the options of TrainDir;
// its errors are errors of the command line.
func (f *Flags) DirOptions() (DirOptions, error) {
	o, fs := f.o, f.fs
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	switch {
	case fs.NArg() != 0:
		return o, fmt.Errorf("unexpected arguments %v", fs.Args())
	case given["eval-every"]:
		return o, fmt.Errorf("--eval-every was removed: validation now runs at every epoch end, --patience counts epochs, and --log-every sets the interval of the training log")
	case o.Dir == "":
		return o, fmt.Errorf("--out DIR is required")
	case o.Resume:
		return o, trainrun.OnlyFlags(fs, ResumeFlags, "")
	case o.Data.Data == "":
		return o, fmt.Errorf("--data DIR and --out DIR are required")
	case o.Data.ValFrac < 0 || o.Data.ValFrac >= 1:
		return o, fmt.Errorf("--val-frac %g outside [0, 1)", o.Data.ValFrac)
	case o.Data.MaxWindows < 0:
		return o, fmt.Errorf("--max-windows %d is negative", o.Data.MaxWindows)
	}
	v, err := ParseVariant(f.variant)
	if err != nil {
		return o, err
	}
	enc, err := ParseEncoding(f.encoding)
	if err != nil {
		return o, err
	}
	o.Model.Variant, o.Model.Encoding = v, enc
	if enc != Paper && !given["count-norm"] {
		o.Model.CountNorm = "" // the encoding's
	}
	o.Data.SplitSeed, o.EpochsGiven = o.Train.Seed, given["epochs"]
	return o, nil
}

// Report summarises the finished run and its files.
func (res *DirResult) Report(w io.Writer) {
	m, tr := res.Model, res.Run.Trainer
	fmt.Fprintf(w, "%s: %d parameters, %d steps, %d epochs (%s) in %s", m.Name(), m.Config.NumParams(), tr.Step, tr.Epoch,
		trainrun.EndReason(tr.Stopped, tr.Cfg, tr.Step), tr.ElapsedTotal().Round(time.Second))
	if !math.IsNaN(m.Info.BestVal) {
		fmt.Fprintf(w, "; best validation loss %.4f nats/symbol at step %d", m.Info.BestVal, m.Info.BestStep)
	}
	fmt.Fprintf(w, "\nwrote %s/{%s}\n", res.Run.Dir, strings.Join(res.Files, ","))
}
