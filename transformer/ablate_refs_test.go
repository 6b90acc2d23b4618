package transformer

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/vomc/vomc/transformer/backend"
)

// setHook writes fixed outputs (N, hs) into some heads of a pass: a
// mean ablation computed outside the engine.
type setHook struct {
	c   Config
	out map[Head][]float32
}

func (k setHook) attention(in *Inference, l int, atty, _ backend.Tensor, _ []byte, B, T int) {
	C := k.c.Embed
	hs := C / k.c.Heads[l]
	a := make([]float32, B*T*C)
	in.be.Download(a, atty)
	for h, v := range k.out {
		if h.Layer != l {
			continue
		}
		for b := range B {
			for t := range T {
				copy(a[(b*T+t)*C+h.Head*hs:][:hs], v[t*hs:][:hs])
			}
		}
	}
	in.be.Upload(atty, a)
}

// TestMeanAblationIsTheMean: with R = 4 reference windows, HeadOutputs'
// mean at each position is the mean of the head's outputs on each window
// computed alone (one pass per window), and a mean-ablated model predicts
// what the intact model does with those means written into the heads.
func TestMeanAblationIsTheMean(t *testing.T) {
	cfg := tinyConfigs()[0]
	m := randomModel(t, cfg, 12, 0.5)
	defer m.Free()
	N, A, R := cfg.Context, cfg.Alphabet, 4
	var refs [][]byte
	for r := range R {
		refs = append(refs, randomInputs(40+uint64(r), N, A))
	}
	ho, err := m.HeadOutputs(refs, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[Head][]float32{}
	for _, h := range cfg.AllHeads() {
		hs := cfg.Embed / cfg.Heads[h.Layer]
		sum := make([]float64, N*hs)
		for r := range R {
			one, err := m.HeadOutputs(refs[r:r+1], []Head{h})
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range one.out[h] {
				sum[k] += float64(v)
			}
		}
		mean := make([]float32, N*hs)
		spread := 0.0 // the outputs differ between windows: a wrong divisor shows
		for k, s := range sum {
			mean[k] = float32(s / float64(R))
			spread = max(spread, math.Abs(float64(mean[k])))
		}
		if spread < 0.05 {
			t.Fatalf("%v: outputs too small (%g) to tell means apart", h, spread)
		}
		for k := range mean {
			if d := math.Abs(float64(ho.mean[h][k] - mean[k])); d > 1e-5 {
				t.Fatalf("%v at position %d: HeadOutputs' mean %v, the mean of the %d windows' outputs %v", h, k/hs, ho.mean[h][k], R, mean[k])
			}
		}
		want[h] = mean
	}

	ablated := []Head{{0, 1}, {1, 0}}
	x, err := m.Intervene(Intervention{Ablate: ablated, Mode: AblateMean, References: refs})
	if err != nil {
		t.Fatal(err)
	}
	B := 3
	inputs := randomInputs(50, B*N, A)
	in, err := m.AllocInference(B * N)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Free()
	m.forwardInfer(in, inputs, B, N, x)
	got := slices.Clone(in.Probs())
	set := setHook{cfg, map[Head][]float32{}}
	for _, h := range ablated {
		set.out[h] = want[h]
	}
	m.forwardInfer(in, inputs, B, N, set)
	for i, p := range in.Probs() {
		if math.Abs(float64(p-got[i])) > 1e-6 {
			t.Fatalf("row %d: mean-ablated p = %v, with the directly computed means %v", i/A, got[i], p)
		}
	}
	m.forwardInfer(in, inputs, B, N, nil)
	if slices.Equal(in.Probs(), got) {
		t.Error("mean ablation changed no prediction")
	}
}

// TestResampleChoosesWindows: resample ablation puts at each position the
// output of one of the R reference windows there, chosen from the seed and
// the symbols so far: every window is chosen somewhere in a window of 64
// positions, the choices differ between seeds and between inputs, and are
// the same for the same seed and input.
func TestResampleChoosesWindows(t *testing.T) {
	const N, R = 64, 4
	p := headPatch{head: 0, hs: 1, mode: AblateResample, refs: make([]float32, R*N)}
	for r := range R {
		for t := range N {
			p.refs[r*N+t] = float32(r) // window r's output: r at every position
		}
	}
	choose := func(x []byte, seed uint64) []int {
		a := make([]float32, N)
		p.ablate(window{a: a, x: x, C: 1}, N, seed)
		ch := make([]int, N)
		for t, v := range a {
			ch[t] = int(v)
		}
		return ch
	}
	x, y := randomInputs(1, N, 3), randomInputs(2, N, 3)
	seen := map[string]uint64{}
	for seed := range uint64(6) {
		ch := choose(x, seed)
		counts := make([]int, R)
		for _, r := range ch {
			counts[r]++
		}
		if slices.Contains(counts, 0) {
			t.Errorf("seed %d: windows chosen %v times over %d positions; want every one of the %d", seed, counts, N, R)
		}
		if !slices.Equal(choose(x, seed), ch) {
			t.Errorf("seed %d: two passes choose differently", seed)
		}
		if slices.Equal(choose(y, seed), ch) {
			t.Errorf("seed %d: another input chose the same windows", seed)
		}
		key := fmt.Sprint(ch)
		if s, ok := seen[key]; ok {
			t.Errorf("seeds %d and %d choose the same windows", s, seed)
		}
		seen[key] = seed
	}
}
