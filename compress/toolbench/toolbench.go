// Package toolbench benchmarks compress's models against the external
// compressors that are installed (xz -9e, zstd -19, bzip2 -9, 7-Zip PPMd
// order 6): compressed sizes of every file, round-trip checks, and the
// models' compression and decompression times. 'vomc bench compress'
// prints its results.
package toolbench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vomc/vomc/compress"
)

// Tool is an external compressor found on the PATH.
type Tool struct {
	Name, Version string
	// Size returns the compressed size of the file at path.
	Size func(path string) (int64, error)
}

// Available returns the external compressors that are installed: xz -9e,
// zstd -19, bzip2 -9 (size of their output) and 7-Zip with PPMd order 6
// (packed stream size, without the archive header; the first of 7z, 7za,
// 7zz found).
func Available() []Tool {
	var ts []Tool
	for _, t := range []struct{ name, bin, flag string }{
		{"xz-9e", "xz", "-9e"}, {"zstd-19", "zstd", "-19"}, {"bzip2-9", "bzip2", "-9"},
	} {
		if _, err := exec.LookPath(t.bin); err == nil {
			ts = append(ts, Tool{t.name, version(t.bin), stdoutSize(t.bin, t.flag, "-c", "-q")})
		}
	}
	for _, bin := range []string{"7z", "7za", "7zz"} {
		if _, err := exec.LookPath(bin); err == nil {
			ts = append(ts, Tool{"7z-ppmd6", bin, func(path string) (int64, error) { return sevenZip(bin, path) }})
			break
		}
	}
	return ts
}

// stdoutSize is the size of what 'name args... path' writes to stdout.
func stdoutSize(name string, args ...string) func(string) (int64, error) {
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

// version is the first line of 'bin --version' (bin if it says nothing).
func version(bin string) string {
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

// File is the result of one file: its size and the compressed sizes, the
// models' first, then the tools'.
type File struct {
	Path  string
	Bytes int
	Sizes []int64
}

// Totals are the results over all files: original bytes, compressed bytes
// (models, then tools) and each model's compression and decompression
// times (sums over the files of the best of the runs).
type Totals struct {
	In       int64
	Out      []int64
	Enc, Dec []time.Duration
}

// Run compresses and decompresses every file in memory with each model
// (best time of runs ≥ 1 runs), checks the round trip, and runs the tools
// on it; onFile (if set) receives every file's result as it is done.
func Run(files []string, models []compress.Model, tools []Tool, runs int, onFile func(File)) (*Totals, error) {
	tot := &Totals{Out: make([]int64, len(models)+len(tools)), Enc: make([]time.Duration, len(models)), Dec: make([]time.Duration, len(models))}
	for _, path := range files {
		x, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		tot.In += int64(len(x))
		f := File{Path: path, Bytes: len(x), Sizes: make([]int64, len(models)+len(tools))}
		for i, m := range models {
			var z []byte
			var be, bd time.Duration
			for r := range max(runs, 1) {
				t0 := time.Now()
				z, err = compress.EncodeBytes(x, m)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", path, err)
				}
				t1 := time.Now()
				y, err := compress.DecodeBytes(z)
				if err != nil {
					return nil, fmt.Errorf("%s: decode: %w", path, err)
				}
				t2 := time.Now()
				if !bytes.Equal(x, y) {
					return nil, fmt.Errorf("%s: %s: round trip differs", path, m.Name())
				}
				if r == 0 || t1.Sub(t0) < be {
					be = t1.Sub(t0)
				}
				if r == 0 || t2.Sub(t1) < bd {
					bd = t2.Sub(t1)
				}
			}
			tot.Enc[i] += be
			tot.Dec[i] += bd
			f.Sizes[i] = int64(len(z))
		}
		for k, t := range tools {
			n, err := t.Size(path)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", path, t.Name, err)
			}
			f.Sizes[len(models)+k] = n
		}
		for i, n := range f.Sizes {
			tot.Out[i] += n
		}
		if onFile != nil {
			onFile(f)
		}
	}
	return tot, nil
}

// BitsPerByte is 8·out/in (0 when in is 0).
func BitsPerByte(out, in int64) float64 {
	if in == 0 {
		return 0
	}
	return 8 * float64(out) / float64(in)
}
