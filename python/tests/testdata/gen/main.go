// Command gen writes the Go reference data of vomc_torch's pytest suite
// (python/tests) into python/tests/testdata: what Go's math/rand/v2,
// safetensors.Write, dataset.Build, transformer.SplitByTree, trainrun.Data,
// transformer.LearningRate and the transformer's forward pass produce, so
// that the Python twins are tested against Go itself.
//
// Regenerate (from the repository root) after changing any of those:
//
//	go run ./python/tests/testdata/gen
//
// TestPytestFixtures (python/pytest_test.go) fails when the committed files
// differ from what this program writes.
package main

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

func main() {
	out := flag.String("out", "python/tests/testdata", "output directory")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, f := range []func(string) error{genRand, genSafetensors, genData, genLR, genModels} {
		if err := f(out); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// genRand: PCG.Uint64 streams, Rand.Uint64N draws (the rejection path
// included) and Rand.Perm.
func genRand(out string) error {
	seeds := [][2]uint64{{0, 0}, {1, 2}, {42, 0x73706c6974}, {math.MaxUint64, 12345}, {0x0123456789abcdef, math.MaxUint64}}
	type stream struct {
		Seed1, Seed2 uint64
		Uint64       []uint64
	}
	type draws struct {
		Seed1, Seed2, N uint64
		Draws           []uint64
	}
	type perm struct {
		Seed1, Seed2 uint64
		N            int
		Perm         []int
	}
	var res struct {
		Streams []stream
		Uint64N []draws
		Perms   []perm
	}
	for _, s := range seeds {
		p := rand.NewPCG(s[0], s[1])
		st := stream{Seed1: s[0], Seed2: s[1]}
		for range 8 {
			st.Uint64 = append(st.Uint64, p.Uint64())
		}
		res.Streams = append(res.Streams, st)
	}
	for _, n := range []uint64{1, 6, 1 << 40, 1e18 + 7, 3 << 62, 1<<63 + 1, math.MaxUint64} {
		r := rand.New(rand.NewPCG(7, n))
		d := draws{Seed1: 7, Seed2: n, N: n}
		for range 16 {
			d.Draws = append(d.Draws, r.Uint64N(n))
		}
		res.Uint64N = append(res.Uint64N, d)
	}
	for _, s := range seeds[:4] {
		for _, n := range []int{0, 1, 2, 3, 8, 100, 1024, 3001} {
			if n > 100 && s[0] != 1 {
				continue // long permutations for one seed only (file size)
			}
			res.Perms = append(res.Perms, perm{Seed1: s[0], Seed2: s[1], N: n, Perm: rand.New(rand.NewPCG(s[0], s[1])).Perm(n)})
		}
	}
	return writeJSON(filepath.Join(out, "gorand.json"), res)
}

// stTensors are the tensors of the safetensors fixtures; the test builds
// the same ones with numpy.
func stTensors() []safetensors.Tensor {
	w := make([]float32, 6)
	for i := range w {
		w[i] = float32(i)*0.25 - 1
	}
	b := make([]float64, 4)
	for i := range b {
		b[i] = float64(i) / 3
	}
	z := []byte{0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff} // int64 −7
	return []safetensors.Tensor{
		{Name: "w", DType: "F32", Shape: []int{2, 3}, Data: safetensors.Float32Bytes(w)},
		{Name: "A.b", DType: "F64", Shape: []int{4}, Data: safetensors.Float64Bytes(b)},
		{Name: "z_count", DType: "I64", Shape: []int{}, Data: z},
		{Name: "empty", DType: "F32", Shape: []int{0, 5}, Data: nil},
	}
}

// genSafetensors: files written by safetensors.Write, with awkward
// metadata and without any.
func genSafetensors(out string) error {
	meta := map[string]string{
		"quote":        `say "hi" \ back`,
		"non_ascii":    "λ ≤ 0.5, ü, 😀",
		"html":         "<a href='x'>&</a>",
		"ctrl":         "line1\nline2\ttab\r\b\f\x01\x1f\x7f",
		"separators":   "\u2028\u2029",
		"Zebra":        "upper-case key sorts first",
		"ärger":        "non-ASCII key sorts last",
		"config":       `{"layers":2,"heads":[2,2]}`,
		"empty":        "",
		"hello":        "world",
		"__not_meta__": "x",
	}
	if err := writeJSON(filepath.Join(out, "st_meta.json"), meta); err != nil {
		return err
	}
	for name, md := range map[string]map[string]string{"st_go.safetensors": meta, "st_go_nometa.safetensors": nil} {
		f, err := os.Create(filepath.Join(out, name))
		if err != nil {
			return err
		}
		if err := safetensors.Write(f, md, stTensors()); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// genData: a small training set (dataset.Build, as 'vomc data'), the splits
// of transformer.SplitByTree and the windows of trainrun.Data.
func genData(out string) error {
	cfg := dataset.Config{Prior: source.PaperPrior(2), K: 12, NK: 64, N: 16, Fresh: false, Seed: 5}
	ds, err := dataset.Build(cfg, 1, nil)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, "ds")
	if err := ds.Write(dir, true); err != nil {
		return err
	}
	type split struct {
		K          int // 0: the data set in ds
		Frac       float64
		Seed       uint64
		Train, Val []int
	}
	var splits []split
	add := func(d *dataset.Dataset, K int, frac float64, seed uint64) error {
		tr, va, err := transformer.SplitByTree(d, frac, seed)
		if err != nil {
			return err
		}
		splits = append(splits, split{K: K, Frac: frac, Seed: seed, Train: nonNil(tr.Idx), Val: nonNil(va.Idx)})
		return nil
	}
	for _, c := range []struct {
		frac float64
		seed uint64
	}{{0, 1}, {0.05, 1}, {0.25, 1}, {0.25, 2}, {0.5, 99}, {0.9, math.MaxUint64}} {
		if err := add(ds, 0, c.frac, c.seed); err != nil {
			return err
		}
	}
	// One window per tree, K trees (no trees kept: K from TreeOf).
	for _, K := range []int{1, 2, 3, 10, 1000} {
		d := &dataset.Dataset{TreeOf: make([]int32, K)}
		for i := range d.TreeOf {
			d.TreeOf[i] = int32(i)
		}
		for _, c := range []struct {
			frac float64
			seed uint64
		}{{0.05, 1}, {1.0 / 6, 3}, {0.25, 7}, {0.35, 11}, {0.999, 0}} {
			if err := add(d, K, c.frac, c.seed); err != nil {
				return err
			}
		}
	}
	if err := writeJSON(filepath.Join(out, "split.json"), splits); err != nil {
		return err
	}

	type windows struct {
		Meta       map[string]string // without data (the data set in ds)
		Train, Val []string          // hex, in order
	}
	var ws []windows
	for _, m := range []map[string]string{
		{"val_frac": "0", "N": "0", "split_seed": "1"},
		{"val_frac": "0.25", "N": "0", "split_seed": "3"},
		{"val_frac": "0.25", "N": "5", "split_seed": "3"},
		{"val_frac": "0.1", "N": "8", "split_seed": "4", "max_windows": "7"},
		{"val_frac": "0", "N": "16", "split_seed": "1", "max_windows": "0"},
		{"val_frac": "0", "N": "2", "split_seed": "1", "max_windows": "100"},
	} {
		full := map[string]string{"data": dir}
		for k, v := range m {
			full[k] = v
		}
		tr, va, _, err := trainrun.Data(full)
		if err != nil {
			return err
		}
		w := windows{Meta: m, Train: hexWindows(tr), Val: hexWindows(va)}
		ws = append(ws, w)
	}
	return writeJSON(filepath.Join(out, "windows.json"), ws)
}

func nonNil(v []int) []int {
	if v == nil {
		return []int{}
	}
	return v
}

func hexWindows(w transformer.Windows) []string {
	out := []string{}
	if w == nil {
		return out
	}
	for i := range w.Windows() {
		out = append(out, hex.EncodeToString(w.Window(i)))
	}
	return out
}

// genLR: transformer.LearningRate on a table.
func genLR(out string) error {
	type row struct {
		Schedule            string
		Step, Warmup, Total int
		Peak, Floor, LR     float64
	}
	var rows []row
	for _, c := range []struct {
		warmup, total int
		peak, floor   float64
	}{{0, 10, 1e-3, 1e-5}, {5, 20, 3e-4, 0}, {100, 1000, 1e-3, 1e-5}, {10, 10, 1, 0.5}, {20, 10, 2e-3, 1e-4}, {1, 7, 0.1, 0.1}} {
		for _, s := range []int{0, 1, 2, 4, 5, 6, 9, 10, 11, 19, 20, 21, 99, 100, 101, 333, 550, 999, 1000, 5000} {
			for _, sch := range transformer.Schedules {
				rows = append(rows, row{sch, s, c.warmup, c.total, c.peak, c.floor, transformer.LearningRate(sch, s, c.warmup, c.total, c.peak, c.floor)})
			}
		}
	}
	return writeJSON(filepath.Join(out, "lr.json"), rows)
}

// genModels: small transformers with random parameters (every tensor
// uniform, LayerNorm gains around 1), written by WriteSafetensors, and
// their logits on random inputs, computed with the portable kernel set
// (pure Go: the same bytes on every amd64 machine, whichever SIMD sets it
// has — those agree with it to float32 rounding, not bit for bit).
func genModels(out string) error {
	ks, err := kernels.Lookup("portable")
	if err != nil {
		return err
	}
	be := cpu.New(ks)
	defer be.Close()
	type ref struct {
		Name   string
		Config transformer.Config
		B, T   int
		Inputs []int
		Logits []float32 // (B, T, A)
	}
	var refs []ref
	for i, c := range []struct {
		name     string
		L        int
		heads    []int
		E, N, A  int
		ff, ln   bool
		act, pos string
		T        int
	}{
		{"learned_ln_ff_gelu", 2, []int{2, 4}, 8, 8, 3, true, true, transformer.GELU, transformer.Learned, 8},
		{"sinusoidal_ln_ff_relu", 2, []int{1, 2}, 8, 10, 4, true, true, transformer.ReLU, transformer.Sinusoidal, 7},
		{"learned_noln_ff_relu", 1, []int{2}, 8, 6, 2, true, false, transformer.ReLU, transformer.Learned, 6},
		{"sinusoidal_noln_noff_gelu", 3, []int{4, 2, 1}, 8, 9, 3, false, false, transformer.GELU, transformer.Sinusoidal, 9},
		{"learned_ln_noff", 1, []int{2}, 6, 5, 5, false, true, transformer.GELU, transformer.Learned, 4},
		{"zero_layers_sinusoidal", 0, []int{}, 4, 6, 3, true, true, transformer.GELU, transformer.Sinusoidal, 6},
	} {
		cfg := transformer.Config{Layers: c.L, Heads: c.heads, Embed: c.E, Context: c.N, Alphabet: c.A,
			FeedForward: c.ff, LayerNorm: c.ln, Activation: c.act, Positional: c.pos}
		r := rand.New(rand.NewPCG(uint64(i), 0x6c6f67697473))
		flat := make([]float32, cfg.NumParams())
		for _, t := range cfg.Layout() {
			s := flat[t.Offset : t.Offset+t.Size]
			for j := range s {
				s[j] = float32(r.Float64() - 0.5)
				if len(t.Shape) == 1 && (hasSuffix(t.Name, "ln1.weight") || hasSuffix(t.Name, "ln2.weight") || t.Name == "lnf.weight") {
					s[j] += 1
				}
			}
		}
		m, err := transformer.FromParamsOn(be, cfg, flat)
		if err != nil {
			return err
		}
		if err := m.SaveSafetensors(filepath.Join(out, "model_"+c.name+".safetensors")); err != nil {
			return err
		}
		B := 2
		in := make([]byte, B*c.T)
		ints := make([]int, len(in))
		for j := range in {
			in[j] = byte(r.IntN(c.A))
			ints[j] = int(in[j])
		}
		a := m.NewActivations(B, c.T, false)
		m.Forward(a, in, B, c.T)
		refs = append(refs, ref{Name: c.name, Config: m.Config, B: B, T: c.T, Inputs: ints, Logits: append([]float32(nil), a.Logits()...)})
	}
	return writeJSON(filepath.Join(out, "model_logits.json"), refs)
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }
