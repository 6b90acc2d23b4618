package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/vomc/vomc/compress"
	"github.com/vomc/vomc/internal/fsutil"
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
	if err := checkMemory(fmt.Sprintf("the %s model's tables (--mem %d)", *mf.model, *mf.mem), int64(*mf.mem)<<20+baseBytes); err != nil {
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
	var ext []extTool
	if *tools {
		ext = availableTools()
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	fmt.Printf("%s/%s, %s, one core\n", runtime.GOOS, runtime.GOARCH, runtime.Version())
	for i, m := range ms {
		fmt.Printf("  [%d] %s\n", i+1, m.Name())
	}
	for _, t := range ext {
		fmt.Printf("  %s: %s\n", t.name, t.version)
	}
	fmt.Printf("%-22s %9s", "file", "bytes")
	for i := range ms {
		fmt.Printf(" %8s", fmt.Sprintf("[%d]", i+1))
	}
	for _, t := range ext {
		fmt.Printf(" %8s", t.name)
	}
	fmt.Println("   (bits/byte)")
	var in int64
	out := make([]int64, len(ms)+len(ext))
	tEnc := make([]time.Duration, len(ms))
	tDec := make([]time.Duration, len(ms))
	for _, path := range fs.Args() {
		x, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		in += int64(len(x))
		fmt.Printf("%-22s %9d", shortName(path), len(x))
		for i, m := range ms {
			var z []byte
			var be, bd time.Duration
			for r := range max(*runs, 1) {
				t0 := time.Now()
				z, err = compress.EncodeBytes(x, m)
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				t1 := time.Now()
				y, err := compress.DecodeBytes(z)
				if err != nil {
					return fmt.Errorf("%s: decode: %w", path, err)
				}
				t2 := time.Now()
				if !bytes.Equal(x, y) {
					return fmt.Errorf("%s: %s: round trip differs", path, m.Name())
				}
				if r == 0 || t1.Sub(t0) < be {
					be = t1.Sub(t0)
				}
				if r == 0 || t2.Sub(t1) < bd {
					bd = t2.Sub(t1)
				}
			}
			tEnc[i] += be
			tDec[i] += bd
			out[i] += int64(len(z))
			fmt.Printf(" %8.4f", bpb(len(z), len(x)))
		}
		for k, t := range ext {
			n, err := t.size(path)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", path, t.name, err)
			}
			out[len(ms)+k] += n
			fmt.Printf(" %8.4f", bpb(int(n), len(x)))
		}
		fmt.Println()
	}
	fmt.Printf("%-22s %9d", "TOTAL", in)
	for _, o := range out {
		fmt.Printf(" %8.4f", bpb(int(o), int(in)))
	}
	fmt.Println()
	mb := float64(in) / 1e6
	for i, m := range ms {
		fmt.Printf("[%d] %-34s %9d → %9d  %.4f bits/byte  compress %.2f MB/s  decompress %.2f MB/s\n",
			i+1, m.Name(), in, out[i], bpb(int(out[i]), int(in)), mb/max(tEnc[i].Seconds(), 1e-9), mb/max(tDec[i].Seconds(), 1e-9))
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

// extTool is an external compressor found on the PATH.
type extTool struct {
	name, version string
	size          func(path string) (int64, error)
}

// availableTools returns the external compressors that are installed:
// xz -9e, zstd -19, bzip2 -9 (compressed size of their output) and 7-Zip
// with PPMd order 6 (packed stream size, without the archive header).
func availableTools() []extTool {
	var ts []extTool
	stdout := func(name string, args ...string) func(string) (int64, error) {
		return func(path string) (int64, error) {
			cmd := exec.Command(name, append(args, path)...)
			var n countWriter
			cmd.Stdout = &n
			if err := cmd.Run(); err != nil {
				return 0, err
			}
			return int64(n), nil
		}
	}
	for _, t := range []struct{ name, bin, flag string }{
		{"xz-9e", "xz", "-9e"}, {"zstd-19", "zstd", "-19"}, {"bzip2-9", "bzip2", "-9"},
	} {
		if _, err := exec.LookPath(t.bin); err == nil {
			ts = append(ts, extTool{t.name, toolVersion(t.bin), stdout(t.bin, t.flag, "-c", "-q")})
		}
	}
	for _, bin := range []string{"7z", "7za", "7zz"} {
		if _, err := exec.LookPath(bin); err == nil {
			ts = append(ts, extTool{"7z-ppmd6", bin, func(path string) (int64, error) { return sevenZip(bin, path) }})
			break
		}
	}
	return ts
}

func toolVersion(bin string) string {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil && len(out) == 0 {
		return bin
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line)
}

// sevenZip archives path with PPMd order 6 in a temporary directory and
// returns the packed size 7-Zip reports for it.
func sevenZip(bin, path string) (int64, error) {
	dir, err := os.MkdirTemp("", "vomc-7z")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	arc := filepath.Join(dir, "a.7z")
	if out, err := exec.Command(bin, "a", "-t7z", "-m0=PPMd:o=6", "-mx=9", "-bd", arc, path).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	out, err := exec.Command(bin, "l", "-slt", arc).Output()
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Packed Size = "); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("no packed size in the listing of %s", arc)
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

func bpb(out, in int) float64 {
	if in == 0 {
		return 0
	}
	return 8 * float64(out) / float64(in)
}
