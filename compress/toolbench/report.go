package toolbench

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"

	"github.com/vomc/vomc/compress"
)

// Report runs Run on one core (GOMAXPROCS 1, restored after) and writes
// to w the models and tools compared, a per-file table of bits per
// original byte (a column per model, then per tool), the totals, and each
// model's total sizes and best speeds in MB/s (10^6 original bytes per
// second).
func Report(w io.Writer, files []string, models []compress.Model, tools []Tool, runs int) error {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	fmt.Fprintf(w, "%s/%s, %s, one core\n", runtime.GOOS, runtime.GOARCH, runtime.Version())
	for i, m := range models {
		fmt.Fprintf(w, "  [%d] %s\n", i+1, m.Name())
	}
	for _, t := range tools {
		fmt.Fprintf(w, "  %s: %s\n", t.Name, t.Version)
	}
	fmt.Fprintf(w, "%-22s %9s", "file", "bytes")
	for i := range models {
		fmt.Fprintf(w, " %8s", fmt.Sprintf("[%d]", i+1))
	}
	for _, t := range tools {
		fmt.Fprintf(w, " %8s", t.Name)
	}
	fmt.Fprintln(w, "   (bits/byte)")
	tot, err := Run(files, models, tools, runs, func(f File) {
		writeRow(w, shortName(f.Path), int64(f.Bytes), f.Sizes)
	})
	if err != nil {
		return err
	}
	writeRow(w, "TOTAL", tot.In, tot.Out)
	mb := float64(tot.In) / 1e6
	for i, m := range models {
		fmt.Fprintf(w, "[%d] %-34s %9d → %9d  %.4f bits/byte  compress %.2f MB/s  decompress %.2f MB/s\n",
			i+1, m.Name(), tot.In, tot.Out[i], BitsPerByte(tot.Out[i], tot.In), mb/max(tot.Enc[i].Seconds(), 1e-9), mb/max(tot.Dec[i].Seconds(), 1e-9))
	}
	return nil
}

// writeRow writes one table row: name, original bytes and bits per byte
// of every compressed size.
func writeRow(w io.Writer, name string, in int64, sizes []int64) {
	fmt.Fprintf(w, "%-22s %9d", name, in)
	for _, n := range sizes {
		fmt.Fprintf(w, " %8.4f", BitsPerByte(n, in))
	}
	fmt.Fprintln(w)
}

// shortName is path's file name with its parent directory (the file name
// alone when that is longer than 22 characters).
func shortName(path string) string {
	s := filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
	if len(s) > 22 {
		s = filepath.Base(path)
	}
	return s
}
