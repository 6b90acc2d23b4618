package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/vomc/vomc/compress"
	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/progress"
	"github.com/vomc/vomc/internal/symbols"
	"github.com/vomc/vomc/memest"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/plot"
)

const methodsHelp = `comma-separated methods, each name[:param=value...]:
  ctw[:D=5][:lambda=0.15][:alpha=0.5][:init=pad|condition|shorter][:form=blend|theorem1|ratio]
  kn[:order=D][:delta=δ][:cont]   (δ tuned on --train, else on the evaluated windows)
  ppm[:order=D][:escape=A|C|D][:excl][:norm]
  markov[:k=D][:alpha=0.5][:init=pad|shorter]
  unigram[:alpha=0.5]
  tf:path=DIR[:name=LABEL]   (a transformer trained by 'vomc train')
  construct[:D=5][:lambda=0.15][:alpha=0.5][:c=inf|50]   (the paper's (D+2)-layer CTW transformer)
  npy:path=FILE.npy[:name=LABEL]   (any model: float32/float64 array (windows, N, A), row [w,t] =
                                    P(x_{t+1} | x_1..x_t) of window w; see README)
omitted values come from the data set's prior (or the flags for a file)`

func runEval(args []string) error {
	fs := newFlags("eval", "[flags] (--data DIR | --file FILE) --out DIR", `
Evaluates predictors in context: every window is predicted symbol by symbol
from a fresh state, and the log-loss at each position is averaged over the
windows with 95% confidence intervals (Student t). Also reported: the mean
over the window and over its second half, and each method's excess over the
reference (CTW by default) with paired intervals. Writes results.json,
results.csv, summary.txt and loss.png/loss.svg (the paper's Fig. 3) into
--out, and prints the summary table.

Methods:
`+methodsHelp)
	data := fs.String("data", "", "data set directory (from 'vomc data')")
	file := fs.String("file", "", "a symbol file instead of a data set")
	mode := fs.String("mode", "text", "with --file: text or raw")
	alphabet := fs.String("alphabet", "", "with --file (text): alphabet in symbol order (default: characters present, sorted)")
	N := fs.Int("N", 0, "with --file: cut the file into windows of N symbols (0: the whole file is one window)")
	D := fs.Int("D", 3, "with --file: default depth/order of the methods")
	lam := fs.Float64("lambda", 0.15, "with --file: default CTW stop probability λ")
	alpha := fs.Float64("alpha", 0.5, "with --file: default CTW Dirichlet α")
	train := fs.String("train", "", "data set on which KN's δ is tuned (default: the evaluated windows themselves)")
	ms := fs.String("methods", "ctw,kn,ppm,unigram", "methods to evaluate (see above)")
	half := fs.Bool("half", false, "with --file: the protocol of Begleiter, El-Yaniv and Yona (2004) instead: learn on the first half of the file, freeze, and report the average log-loss in bits/symbol on the second half")
	ref := fs.String("reference", "", "reference method name for the excess (default: the CTW method)")
	out := fs.String("out", "", "output directory")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "worker goroutines")
	force := fs.Bool("force", false, "overwrite existing output files")
	export := fs.String("export", "", "also write every method's distributions to DIR/<method>.npy (float64, shape (windows, N, A), the npy method's layout)")
	var pf plotFlags
	pf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if (*data == "") == (*file == "") {
		return usagef("give exactly one of --data and --file")
	}
	if *half && *file == "" {
		return usagef("--half needs --file")
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	if err := checkEvalOutputs(*out, *export, *half, *force); err != nil {
		return err
	}
	var windows [][]byte
	var d methods.Defaults
	labels := map[string]string{}
	if *data != "" {
		if err := checkEvalMemory(*data, *train, *ms, *workers); err != nil {
			return err
		}
		ds, err := dataset.ReadWindows(*data)
		if err != nil {
			return err
		}
		windows = experiment.Windows(ds)
		d = methods.DefaultsFor(ds.Config().Prior)
		fmt.Printf("data set %s: %d windows of N=%d, A=%d\n", *data, len(windows), ds.Config().N, d.A)
		if w := sharedTreesWarning(ds.Config()); w != "" {
			fmt.Println(w)
			labels["warning"] = w
		}
	} else {
		m, err := symbols.ParseMode(*mode)
		if err != nil {
			return usageError{err.Error()}
		}
		x, al, err := symbols.ReadFile(*file, m, *alphabet)
		if err != nil {
			return err
		}
		if *half {
			return runHalf(x, al.Size(), *ms, methods.Defaults{A: al.Size(), D: *D, Lambda: *lam, Alpha: *alpha, Tune: [][]byte{x[:len(x)/2]}, TuneNote: "the first half of the file"}, *out, *force)
		}
		if *N < 0 || *N > len(x) {
			return usagef("-N %d outside 0..%d (the file's length)", *N, len(x))
		}
		n := *N
		if n == 0 {
			n = len(x)
		}
		for i := 0; i+n <= len(x); i += n {
			windows = append(windows, x[i:i+n])
		}
		d = methods.Defaults{A: al.Size(), D: *D, Lambda: *lam, Alpha: *alpha}
		if err := checkMemory("evaluating "+*file, memest.Eval(*ms, int64(len(x)), len(windows), n, d.A, d.D, 0, 0, *workers)); err != nil {
			return err
		}
		if err := ctw.CheckMemory(ctw.Config{A: d.A, D: d.D, Lambda: 0.5, Alpha: 0.5}, int64(n)); err != nil {
			return err
		}
		fmt.Printf("file %s: %d symbols over %v, %d windows of N=%d\n", *file, len(x), al, len(windows), n)
	}
	d.Windows = windows
	if *train != "" {
		tds, err := dataset.ReadWindows(*train)
		if err != nil {
			return err
		}
		if tds.Config().Prior.A != d.A {
			return fmt.Errorf("training set %s has A=%d, the evaluated data A=%d", *train, tds.Config().Prior.A, d.A)
		}
		d.Tune = experiment.Windows(tds)
		d.TuneNote = fmt.Sprintf("%d windows of %s", len(d.Tune), *train)
	} else {
		d.Tune = windows
		d.TuneNote = fmt.Sprintf("the %d evaluated windows (oracle tuning)", len(windows))
	}
	if strings.Contains(*ms, "kn") && !strings.Contains(*ms, "delta") {
		fmt.Printf("tuning KN's δ on %s …\n", d.TuneNote)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bar := progress.New(os.Stderr, "windows", len(windows)).DelayStart(2 * time.Second)
	res, built, err := experiment.Evaluate(ctx, windows, *ms, d, eval.Config{Workers: *workers, Reference: *ref, Progress: bar.Update, Labels: labels})
	bar.Done()
	if err != nil {
		return err
	}
	for _, b := range built {
		if b.Note != "" {
			fmt.Printf("%s: %s\n", b.Predictor.Name(), b.Note)
		}
	}
	if err := res.WriteSummaryTable(os.Stdout); err != nil {
		return err
	}
	opts := plot.Options{Title: pf.title, Bits: pf.bits, Smooth: pf.smooth, LogX: pf.logx, NoBands: pf.noBands}
	if pf.methods != "" {
		opts.Methods = strings.Split(pf.methods, ",")
	}
	if err := experiment.WriteOutputs(res, *out, *force, opts); err != nil {
		return err
	}
	fmt.Printf("wrote %s/{%s,%s,%s,%s,%s}\n", *out, experiment.Outputs.JSON, experiment.Outputs.CSV, experiment.Outputs.Summary, experiment.Outputs.PNG, experiment.Outputs.SVG)
	if *export != "" {
		paths, err := methods.ExportNPY(*export, *force, windows, methods.Predictors(built))
		if err != nil {
			return err
		}
		fmt.Printf("exported %s\n", strings.Join(paths, ", "))
	}
	return nil
}

// sharedTreesWarning returns a warning when a data set's windows share
// context trees (⌊NK/N⌋ > 1 windows per tree): the confidence intervals
// treat the windows as independent, which windows of one tree are not.
func sharedTreesWarning(c dataset.Config) string {
	if w := c.WindowsPerTree(); w > 1 {
		return fmt.Sprintf("warning: the %d windows come from %d trees (%d per tree); the 95%% CIs assume independent windows, so they are too narrow here (use a data set with one window per tree, e.g. 'vomc data' with --NK = -N)", c.K*w, c.K, w)
	}
	return ""
}

// runHalf prints and writes (DIR/half.txt) the half-file log-loss of each
// method: learn on x's first half, freeze, average −log2 P on the second.
func runHalf(x []byte, A int, spec string, d methods.Defaults, out string, force bool) error {
	built, err := methods.Build(spec, d)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Begleiter, El-Yaniv and Yona (2004) protocol: learn x[1..%d], freeze, test x[%d..%d]\n", len(x)/2, len(x)/2+1, len(x))
	fmt.Fprintf(&b, "%-36s %14s  %s\n", "method", "bits/symbol", "frozen")
	for _, bm := range built {
		bits, frozen, err := compress.HalfLogLoss(bm.Predictor, x)
		if err != nil {
			return err
		}
		note := "yes"
		if !frozen {
			note = "no: this method cannot freeze and kept learning"
		}
		fmt.Fprintf(&b, "%-36s %14.4f  %s\n", bm.Predictor.Name(), bits, note)
	}
	fmt.Print(b.String())
	return fsutil.WriteBytes(filepath.Join(out, "half.txt"), force, []byte(b.String()))
}
