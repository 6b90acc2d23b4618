package main

import (
	"fmt"
	"os"
	"time"

	"github.com/vomc/vomc/compress"
	"github.com/vomc/vomc/compress/toolbench"
	"github.com/vomc/vomc/memest"
)

// addModelFlags registers the model flags shared by compress and bench
// compress.
func addModelFlags(fs interface {
	StringVar(p *string, name, value, usage string)
	IntVar(p *int, name string, value int, usage string)
}) *compress.ModelSpec {
	s := new(compress.ModelSpec)
	fs.StringVar(&s.Model, "model", "mix", "model: mix (context mixing: orders 1, 2, 4, 6, word, sparse, record and match models; best), ppm (byte PPM with exclusion) or ctw (binary-decomposition CTW)")
	fs.IntVar(&s.Order, "order", -1, "PPM order / CTW depth in bytes (default: 5 for ppm, 6 for ctw)")
	fs.IntVar(&s.MemMB, "mem", 256, "model memory budget in MiB (ppm restarts when full; ctw's and mix's tables never exceed it)")
	fs.StringVar(&s.Method, "method", "D", "ppm escape method: C or D")
	fs.IntVar(&s.AlphaInv, "alpha-inv", 8, "ctw: 1/α of the KT estimator (2 = classic KT)")
	return s
}

func runCompress(args []string) error {
	fs := newFlags("compress", "[flags] IN OUT", `
Compresses the file IN losslessly into OUT: a range coder driven by a
context-mixing model (default, --model mix: order 1, 2, 4 and 6, word,
sparse and record contexts and a match model, mixed bit by bit by an online
logistic mixer and refined by adaptive probability maps), a byte PPM
(--model ppm; order 5, escape method D, exclusion, update exclusion) or a
binary-decomposition CTW (--model ctw; depth 6, α = 1/8). OUT records the model
and its parameters, the original length and its CRC-32; 'vomc decompress'
restores IN exactly. OUT is written atomically and an existing OUT is never
replaced without --force.`)
	mf := addModelFlags(fs)
	force := fs.Bool("force", false, "overwrite OUT if it exists")
	quiet := fs.Bool("q", false, "do not print the summary line")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("want IN and OUT, got %d arguments", fs.NArg())
	}
	m, err := mf.Build()
	if err != nil {
		return usageError{err.Error()}
	}
	if err := checkMemory(fmt.Sprintf("the %s model's tables (--mem %d)", mf.Model, mf.MemMB), int64(mf.MemMB)<<20+memest.Base); err != nil {
		return err
	}
	t0 := time.Now()
	st, err := compress.CompressFile(fs.Arg(0), fs.Arg(1), m, *force, os.Stderr)
	if err != nil || *quiet {
		return err
	}
	fmt.Printf("%s: %d → %d bytes, %.4f bits/byte, %s, %.2f MB/s\n",
		fs.Arg(0), st.In, st.Out, st.BitsPerByte(), m.Name(), float64(st.In)/1e6/max(time.Since(t0).Seconds(), 1e-9))
	return nil
}

func runDecompress(args []string) error {
	fs := newFlags("decompress", "[flags] IN OUT", `
Restores a file written by 'vomc compress'. The header, the coder stream and
the CRC-32 of the output are checked; on any error OUT is not created (it is
written atomically), and an existing OUT is never replaced without --force.`)
	force := fs.Bool("force", false, "overwrite OUT if it exists")
	quiet := fs.Bool("q", false, "do not print the summary line")
	maxMem := fs.Int("max-mem", defaultMaxMemMB, "refuse a file whose model needs more than this many MiB of memory (the header is untrusted; compress's --mem is at most 4096)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("want IN and OUT, got %d arguments", fs.NArg())
	}
	if *maxMem < 1 {
		return usagef("--max-mem %d must be ≥ 1 MiB", *maxMem)
	}
	if avail := availableMiB(); avail > 0 && int64(*maxMem) > avail {
		*maxMem = int(avail)
	}
	t0 := time.Now()
	h, err := compress.DecompressFile(fs.Arg(0), fs.Arg(1), *maxMem, *force, os.Stderr)
	if err != nil || *quiet {
		return err
	}
	fmt.Printf("%s: %d bytes restored, %s, %.2f MB/s\n", fs.Arg(0), h.Size, h.ModelName(), float64(h.Size)/1e6/max(time.Since(t0).Seconds(), 1e-9))
	return nil
}

func runBenchCompress(args []string) error {
	fs := newFlags("bench compress", "[flags] FILE...", `
Compresses and decompresses every FILE in memory on one core with each
chosen model (--models, default: the --model flag), checks the round trip,
and prints a per-file table of bits per original byte (header and trailer
included) next to xz -9e, zstd -19, bzip2 -9 and 7-Zip PPMd order 6 (its
packed stream, without the archive header) run on the same files, for those
of these tools that are installed (--tools=false skips them); then the
totals (total compressed bits / total original bytes) and each model's
speeds in MB/s (10^6 original bytes per second, best of --runs).`)
	mf := addModelFlags(fs)
	models := fs.String("models", "", "comma-separated models to compare, e.g. mix,ppm,ctw (default: --model)")
	tools := fs.Bool("tools", true, "also run the external compressors that are installed")
	runs := fs.Int("runs", 1, "timing runs per file and model (speeds are the best run)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("want at least one FILE")
	}
	ms, err := mf.BuildModels(*models)
	if err != nil {
		return usageError{err.Error()}
	}
	var ext []toolbench.Tool
	if *tools {
		ext = toolbench.Available()
	}
	return toolbench.Report(os.Stdout, fs.Args(), ms, ext, *runs)
}
