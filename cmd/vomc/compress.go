package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/vomc/vomc/compress"
	"github.com/vomc/vomc/compress/toolbench"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/memest"
	"github.com/vomc/vomc/ppm"
)

// modelFlags are the model flags shared by compress and bench compress.
type modelFlags struct {
	model, method  *string
	order, mem, ai *int
}

func addModelFlags(fs interface {
	String(name, value, usage string) *string
	Int(name string, value int, usage string) *int
}) modelFlags {
	return modelFlags{
		model:  fs.String("model", "mix", "model: mix (context mixing: orders 1, 2, 4, 6, word, sparse, record and match models; best), ppm (byte PPM with exclusion) or ctw (binary-decomposition CTW)"),
		order:  fs.Int("order", -1, "PPM order / CTW depth in bytes (default: 5 for ppm, 6 for ctw)"),
		mem:    fs.Int("mem", 256, "model memory budget in MiB (ppm restarts when full; ctw's and mix's tables never exceed it)"),
		method: fs.String("method", "D", "ppm escape method: C or D"),
		ai:     fs.Int("alpha-inv", 8, "ctw: 1/α of the KT estimator (2 = classic KT)"),
	}
}

func (f modelFlags) build() (compress.Model, error) { return f.buildName(*f.model) }

func (f modelFlags) buildName(name string) (compress.Model, error) {
	if *f.order < -1 {
		return nil, usagef("--order %d is negative", *f.order)
	}
	switch name {
	case "mix":
		if *f.order != -1 {
			return nil, usagef("--order does not apply to --model mix (its context orders are fixed); use --model ppm or ctw")
		}
		m, err := compress.Mix(compress.MixConfig{MemMB: *f.mem})
		if err != nil {
			return nil, usageError{err.Error()}
		}
		return m, nil
	case "ppm":
		c := compress.DefaultPPM()
		if *f.order >= 0 {
			c.Order = *f.order
		}
		c.MemMB = *f.mem
		switch strings.ToUpper(*f.method) {
		case "C":
			c.Method = ppm.MethodC
		case "D":
			c.Method = ppm.MethodD
		default:
			return nil, usagef("--method must be C or D, not %q", *f.method)
		}
		m, err := compress.PPM(c)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		return m, nil
	case "ctw":
		c := compress.DefaultCTW()
		if *f.order >= 0 {
			c.Depth = *f.order
		}
		c.MemMB = *f.mem
		c.AlphaInv = *f.ai
		m, err := compress.CTW(c)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		return m, nil
	}
	return nil, usagef("--model must be mix, ppm or ctw, not %q", name)
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
	m, err := mf.build()
	if err != nil {
		return err
	}
	in, out := fs.Arg(0), fs.Arg(1)
	if err := checkMemory(fmt.Sprintf("the %s model's tables (--mem %d)", *mf.model, *mf.mem), int64(*mf.mem)<<20+memest.Base); err != nil {
		return err
	}
	f, err := openInput(in)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if err := checkOutputs(*force, out); err != nil {
		return err
	}
	t0 := time.Now()
	var st compress.Stats
	err = fsutil.WriteFile(out, *force, func(w io.Writer) error {
		var err error
		st, err = compress.Encode(w, f, info.Size(), m)
		return err
	})
	if err != nil {
		return err
	}
	if !*quiet {
		dt := time.Since(t0).Seconds()
		fmt.Printf("%s: %d → %d bytes, %.4f bits/byte, %s, %.2f MB/s\n",
			in, st.In, st.Out, st.BitsPerByte(), m.Name(), float64(st.In)/1e6/max(dt, 1e-9))
	}
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
	in, out := fs.Arg(0), fs.Arg(1)
	f, err := openInput(in)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := checkOutputs(*force, out); err != nil {
		return err
	}
	if avail := availableMiB(); avail > 0 && int64(*maxMem) > avail {
		*maxMem = int(avail)
	}
	t0 := time.Now()
	var h compress.Header
	err = fsutil.WriteFile(out, *force, func(w io.Writer) error {
		var err error
		h, err = compress.DecodeLimit(w, f, *maxMem)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if !*quiet {
		dt := time.Since(t0).Seconds()
		fmt.Printf("%s: %d bytes restored, %s, %.2f MB/s\n", in, h.Size, h.ModelName(), float64(h.Size)/1e6/max(dt, 1e-9))
	}
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
	names := []string{*mf.model}
	if *models != "" {
		names = strings.Split(*models, ",")
	}
	var ms []compress.Model
	for _, n := range names {
		m, err := mf.buildName(strings.TrimSpace(n))
		if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	var ext []toolbench.Tool
	if *tools {
		ext = toolbench.Available()
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	fmt.Printf("%s/%s, %s, one core\n", runtime.GOOS, runtime.GOARCH, runtime.Version())
	for i, m := range ms {
		fmt.Printf("  [%d] %s\n", i+1, m.Name())
	}
	for _, t := range ext {
		fmt.Printf("  %s: %s\n", t.Name, t.Version)
	}
	fmt.Printf("%-22s %9s", "file", "bytes")
	for i := range ms {
		fmt.Printf(" %8s", fmt.Sprintf("[%d]", i+1))
	}
	for _, t := range ext {
		fmt.Printf(" %8s", t.Name)
	}
	fmt.Println("   (bits/byte)")
	tot, err := toolbench.Run(fs.Args(), ms, ext, *runs, func(f toolbench.File) {
		fmt.Printf("%-22s %9d", shortName(f.Path), f.Bytes)
		for _, n := range f.Sizes {
			fmt.Printf(" %8.4f", toolbench.BitsPerByte(n, int64(f.Bytes)))
		}
		fmt.Println()
	})
	if err != nil {
		return err
	}
	fmt.Printf("%-22s %9d", "TOTAL", tot.In)
	for _, o := range tot.Out {
		fmt.Printf(" %8.4f", toolbench.BitsPerByte(o, tot.In))
	}
	fmt.Println()
	mb := float64(tot.In) / 1e6
	for i, m := range ms {
		fmt.Printf("[%d] %-34s %9d → %9d  %.4f bits/byte  compress %.2f MB/s  decompress %.2f MB/s\n",
			i+1, m.Name(), tot.In, tot.Out[i], toolbench.BitsPerByte(tot.Out[i], tot.In), mb/max(tot.Enc[i].Seconds(), 1e-9), mb/max(tot.Dec[i].Seconds(), 1e-9))
	}
	return nil
}

// shortName is path's file name with its parent directory.
func shortName(path string) string {
	s := filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
	if len(s) > 22 {
		s = filepath.Base(path)
	}
	return s
}
