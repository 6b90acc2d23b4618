package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/vomc/vomc/compress"
	"github.com/vomc/vomc/fsutil"
	"github.com/vomc/vomc/ppm"
)

// modelFlags are the model flags shared by compress and bench-compress.
type modelFlags struct {
	model, method  *string
	order, mem, ai *int
}

func addModelFlags(fs interface {
	String(name, value, usage string) *string
	Int(name string, value int, usage string) *int
}) modelFlags {
	return modelFlags{
		model:  fs.String("model", "ppm", "model: ppm (byte PPM, integer arithmetic) or ctw (binary-decomposition CTW)"),
		order:  fs.Int("order", -1, "PPM order / CTW depth in bytes (default: 5 for ppm, 6 for ctw)"),
		mem:    fs.Int("mem", 256, "model memory budget in MiB (ppm restarts when full; ctw's hash table never exceeds it)"),
		method: fs.String("method", "D", "ppm escape method: C or D"),
		ai:     fs.Int("alpha-inv", 8, "ctw: 1/α of the KT estimator (2 = classic KT)"),
	}
}

func (f modelFlags) build() (compress.Model, error) {
	switch *f.model {
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
	return nil, usagef("--model must be ppm or ctw, not %q", *f.model)
}

func runCompress(args []string) error {
	fs := newFlags("compress", "[flags] IN OUT", `
Compresses the file IN losslessly into OUT: a range coder driven by a byte
PPM (default: order 5, escape method D, exclusion, update exclusion) or a
binary-decomposition CTW (default: depth 6, α = 1/8). OUT records the model
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
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", in)
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
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("want IN and OUT, got %d arguments", fs.NArg())
	}
	in, out := fs.Arg(0), fs.Arg(1)
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	t0 := time.Now()
	var h compress.Header
	err = fsutil.WriteFile(out, *force, func(w io.Writer) error {
		var err error
		h, err = compress.Decode(w, f)
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
	fs := newFlags("bench-compress", "[flags] FILE...", `
Compresses and decompresses every FILE in memory on one core with the chosen
model, checks the round trip, and prints per-file and total compressed size
(bits per original byte, header and trailer included) and speeds in MB/s
(10^6 original bytes per second).`)
	mf := addModelFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("want at least one FILE")
	}
	m, err := mf.build()
	if err != nil {
		return err
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	fmt.Printf("%s/%s, %s, %s\n", runtime.GOOS, runtime.GOARCH, runtime.Version(), m.Name())
	var in, out int64
	var tEnc, tDec time.Duration
	for _, path := range fs.Args() {
		x, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		t0 := time.Now()
		z, err := compress.EncodeBytes(x, m)
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
			return fmt.Errorf("%s: round trip differs", path)
		}
		tEnc += t1.Sub(t0)
		tDec += t2.Sub(t1)
		in += int64(len(x))
		out += int64(len(z))
		fmt.Printf("%-40s %9d → %9d  %.4f bits/byte\n", path, len(x), len(z), bpb(len(z), len(x)))
	}
	mb := float64(in) / 1e6
	fmt.Printf("%-40s %9d → %9d  %.4f bits/byte  compress %.2f MB/s  decompress %.2f MB/s\n",
		"TOTAL", in, out, bpb(int(out), int(in)), mb/max(tEnc.Seconds(), 1e-9), mb/max(tDec.Seconds(), 1e-9))
	return nil
}

func bpb(out, in int) float64 {
	if in == 0 {
		return 0
	}
	return 8 * float64(out) / float64(in)
}
