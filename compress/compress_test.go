package compress

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/vomc/vomc/ppm"
)

const corpusDir = "../../shared/data/corpus"

func testModels(t testing.TB) []Model {
	var ms []Model
	for _, c := range []PPMConfig{
		{Order: 0, Method: ppm.MethodC, MemMB: 1},
		{Order: 1, Method: ppm.MethodD, MemMB: 16},
		{Order: 5, Method: ppm.MethodD, MemMB: 64},
		{Order: 3, Method: ppm.MethodC, MemMB: 1}, // restarts on 100 KB
	} {
		m, err := PPM(c)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for _, c := range []CTWConfig{
		{Depth: 0, AlphaInv: 2, MemMB: 1},
		{Depth: 1, AlphaInv: 16, MemMB: 1},
		{Depth: 6, AlphaInv: 16, MemMB: 1},
	} {
		m, err := CTW(c)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for _, c := range []MixConfig{{MemMB: 1}, {MemMB: 64}} {
		m, err := Mix(c)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

func roundTrip(t *testing.T, m Model, x []byte) []byte {
	t.Helper()
	z, err := EncodeBytes(x, m)
	if err != nil {
		t.Fatalf("%s: encode: %v", m.Name(), err)
	}
	y, err := DecodeBytes(z)
	if err != nil {
		t.Fatalf("%s: decode of %d bytes: %v", m.Name(), len(x), err)
	}
	if !bytes.Equal(x, y) {
		t.Fatalf("%s: round trip of %d bytes differs", m.Name(), len(x))
	}
	return z
}

func synthetic() map[string][]byte {
	r := rand.New(rand.NewPCG(7, 8))
	rnd := make([]byte, 20000)
	for i := range rnd {
		rnd[i] = byte(r.Uint32())
	}
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog; "), 400)
	all := make([]byte, 256*8)
	for i := range all {
		all[i] = byte(i)
	}
	skew := make([]byte, 30000)
	for i := range skew {
		if r.IntN(100) == 0 {
			skew[i] = byte(r.Uint32())
		} else {
			skew[i] = 'a' + byte(r.IntN(3))
		}
	}
	return map[string][]byte{
		"empty":  {},
		"one":    {42},
		"zeros":  make([]byte, 50000),
		"ff":     bytes.Repeat([]byte{0xFF}, 5000),
		"random": rnd,
		"text":   text,
		"all":    all,
		"skew":   skew,
	}
}

func TestRoundTripSynthetic(t *testing.T) {
	data := synthetic()
	names := make([]string, 0, len(data))
	for k := range data {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, m := range testModels(t) {
		for _, name := range names {
			z := roundTrip(t, m, data[name])
			if name == "zeros" && len(z) > 1000 {
				t.Errorf("%s: 50000 zeros compress to %d bytes", m.Name(), len(z))
			}
		}
	}
}

// corpusFiles returns the corpus files smaller than maxSize (all if 0).
func corpusFiles(t testing.TB, maxSize int64) []string {
	var files []string
	for _, sub := range []string{"calgary", "cantrbry"} {
		ents, err := os.ReadDir(filepath.Join(corpusDir, sub))
		if err != nil {
			continue
		}
		for _, e := range ents {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			if maxSize == 0 || info.Size() < maxSize {
				files = append(files, filepath.Join(corpusDir, sub, e.Name()))
			}
		}
	}
	if len(files) == 0 {
		t.Skipf("no corpus in %s", corpusDir)
	}
	return files
}

func TestRoundTripCorpus(t *testing.T) {
	files := corpusFiles(t, 100_000)
	pm, _ := PPM(DefaultPPM())
	cm, _ := CTW(DefaultCTW())
	mm, _ := Mix(DefaultMix())
	for _, f := range files {
		x, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []Model{pm, cm, mm} {
			z := roundTrip(t, m, x)
			t.Logf("%-28s %-30s %7d → %7d  %.3f bits/byte", f, m.Name(), len(x), len(z), 8*float64(len(z))/float64(len(x)))
		}
	}
}

// TestMeasure prints the compression of the whole corpora and the speeds;
// it runs only when VOMC_MEASURE is set (its value lists model specs like
// "ppm:5:D ctw:6:16").
func TestMeasure(t *testing.T) {
	spec := os.Getenv("VOMC_MEASURE")
	if spec == "" {
		t.Skip("set VOMC_MEASURE to measure")
	}
	var models []Model
	for _, s := range splitFields(spec) {
		m, err := parseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	for _, m := range models {
		for _, sub := range []string{"calgary", "cantrbry"} {
			var in, out int64
			var tEnc, tDec, cEnc, cDec time.Duration
			ents, _ := os.ReadDir(filepath.Join(corpusDir, sub))
			for _, e := range ents {
				x, err := os.ReadFile(filepath.Join(corpusDir, sub, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				c0, t0 := cpuTime(), time.Now()
				z, err := EncodeBytes(x, m)
				if err != nil {
					t.Fatal(err)
				}
				c1, t1 := cpuTime(), time.Now()
				y, err := DecodeBytes(z)
				if err != nil || !bytes.Equal(x, y) {
					t.Fatalf("%s %s: round trip failed: %v", m.Name(), e.Name(), err)
				}
				tEnc += t1.Sub(t0)
				tDec += time.Since(t1)
				cEnc += c1 - c0
				cDec += cpuTime() - c1
				in += int64(len(x))
				out += int64(len(z))
				if os.Getenv("VOMC_MEASURE_FILES") != "" {
					fmt.Printf("  %-14s %8d %8d %.3f\n", e.Name(), len(x), len(z), 8*float64(len(z))/float64(len(x)))
				}
			}
			mb := float64(in) / 1e6
			fmt.Printf("%-34s %-8s %9d → %9d  %.4f bits/byte  enc %.2f MB/s  dec %.2f MB/s  (CPU time: enc %.2f, dec %.2f MB/s)\n",
				m.Name(), sub, in, out, 8*float64(out)/float64(in), mb/tEnc.Seconds(), mb/tDec.Seconds(),
				mb/cEnc.Seconds(), mb/cDec.Seconds())
		}
	}
}

func splitFields(s string) []string {
	var out []string
	for _, f := range bytes.Fields([]byte(s)) {
		out = append(out, string(f))
	}
	return out
}

// parseSpec parses "ppm:D:M[:mem]", "ctw:D:alphaInv[:mem]" or "mix:mem:x".
func parseSpec(s string) (Model, error) {
	parts := bytes.Split([]byte(s), []byte(":"))
	if len(parts) < 3 {
		return nil, fmt.Errorf("bad spec %q", s)
	}
	a, err := strconv.Atoi(string(parts[1]))
	if err != nil {
		return nil, err
	}
	mem := 256
	if len(parts) > 3 {
		if mem, err = strconv.Atoi(string(parts[3])); err != nil {
			return nil, err
		}
	}
	switch string(parts[0]) {
	case "ppm":
		meth := ppm.MethodD
		if string(parts[2]) == "C" {
			meth = ppm.MethodC
		}
		return PPM(PPMConfig{Order: a, Method: meth, MemMB: mem})
	case "mix":
		return Mix(MixConfig{MemMB: a})
	case "ctw":
		k, err := strconv.Atoi(string(parts[2]))
		if err != nil {
			return nil, err
		}
		return CTW(CTWConfig{Depth: a, AlphaInv: k, MemMB: mem})
	}
	return nil, fmt.Errorf("bad spec %q", s)
}

func TestBadInput(t *testing.T) {
	x := bytes.Repeat([]byte("abracadabra, said the magician. "), 60)
	for _, m := range testModels(t) {
		z, err := EncodeBytes(x, m)
		if err != nil {
			t.Fatal(err)
		}
		// Every truncation is an error.
		for cut := 0; cut < len(z); cut += 1 + cut/8 {
			if _, err := DecodeBytes(z[:cut]); err == nil {
				t.Fatalf("%s: truncated to %d of %d bytes: no error", m.Name(), cut, len(z))
			} else if cut >= 8 && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: truncated to %d: %v", m.Name(), cut, err)
			}
		}
		// Every single-byte corruption is an error.
		r := rand.New(rand.NewPCG(9, 10))
		for it := range 120 {
			i := it
			if it >= 40 {
				i = r.IntN(len(z))
			}
			y := append([]byte(nil), z...)
			y[i] ^= byte(1 + r.IntN(255))
			if out, err := DecodeBytes(y); err == nil {
				t.Fatalf("%s: byte %d corrupted: no error (output %d bytes)", m.Name(), i, len(out))
			}
		}
		// Trailing garbage.
		if _, err := DecodeBytes(append(append([]byte(nil), z...), 0)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: trailing byte: %v", m.Name(), err)
		}
	}
	for _, foreign := range [][]byte{nil, []byte("PK\x03\x04 zip file"), []byte("VMC"), []byte("VMCZ\x02\x01\x00\x00")} {
		if _, err := DecodeBytes(foreign); !errors.Is(err, ErrFormat) && !errors.Is(err, ErrTruncated) {
			t.Fatalf("foreign %q: %v", foreign, err)
		}
	}
	if _, err := DecodeBytes([]byte("gzip\x1f\x8b")); !errors.Is(err, ErrFormat) {
		t.Fatalf("foreign: %v", err)
	}
}

func TestEncodeSizeMismatch(t *testing.T) {
	m, _ := PPM(DefaultPPM())
	var buf bytes.Buffer
	if _, err := Encode(&buf, bytes.NewReader([]byte("abc")), 4, m); err == nil {
		t.Fatal("short input: no error")
	}
	if _, err := Encode(&buf, bytes.NewReader([]byte("abcde")), 4, m); err == nil {
		t.Fatal("long input: no error")
	}
}

func TestQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for it := range 2000 {
		A := 1 + r.IntN(256)
		p := make([]float64, A)
		for a := range p {
			switch r.IntN(6) {
			case 0:
				p[a] = 0
			case 1:
				p[a] = 1e-300
			default:
				p[a] = r.Float64()
			}
		}
		if it%50 == 0 {
			p[0] = 1e308
			p[A-1] = 1e308 // sum overflows: uniform
		}
		freq := make([]uint32, A)
		Quantize(p, QuantTotal, freq)
		sum := uint32(0)
		for _, f := range freq {
			if f < 1 {
				t.Fatalf("zero frequency")
			}
			sum += f
		}
		if sum != QuantTotal {
			t.Fatalf("sum %d", sum)
		}
	}
	freq := make([]uint32, 3)
	Quantize([]float64{0.5, 0.5, 0}, 16, freq)
	if freq != nil && (freq[0] != 8 || freq[1] != 7 || freq[2] != 1) {
		t.Fatalf("tie-breaking: %v, want [8 7 1]", freq)
	}
}
