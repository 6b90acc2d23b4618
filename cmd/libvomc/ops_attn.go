package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/explore"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/transformer"
)

// modelFile is the file of a model directory written by 'vomc train'.
const modelFile = "model.safetensors"

// opAttentionMaps runs a vomc model (a run directory or a .safetensors
// file) on the windows (array 0) and returns its attention weights
// (transformer.Model.AttentionMaps) as one float32 blob of shape (W, L,
// H, N, N).
func opAttentionMaps(ctx context.Context, req []byte, arrays [][]byte) (any, [][]byte, error) {
	var r struct {
		Model string `json:"model"`
		W     int    `json:"W"`
		N     int    `json:"N"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	file := r.Model
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		file = filepath.Join(file, modelFile)
	}
	m, err := transformer.LoadSafetensorsOn(compute(), file)
	if err != nil {
		return nil, nil, err
	}
	c := m.Config
	H := 0
	for l, h := range c.Heads {
		if l > 0 && h != H {
			return nil, nil, fmt.Errorf("%s: layers with %v heads do not fit one (W, L, H, N, N) array", r.Model, c.Heads)
		}
		H = h
	}
	if r.N > c.Context {
		return nil, nil, fmt.Errorf("%s: windows of %d symbols, the model's context is %d", r.Model, r.N, c.Context)
	}
	xs, err := windowsOf(arrays, 0, r.W, r.N, c.Alphabet, "windows")
	if err != nil {
		return nil, nil, err
	}
	out := make([]byte, 0, 4*r.W*c.Layers*H*r.N*r.N)
	for _, x := range xs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		maps, err := m.AttentionMaps(x)
		if err != nil {
			return nil, nil, err
		}
		for _, layer := range maps {
			for _, head := range layer {
				out, _ = binary.Append(out, binary.NativeEndian, head)
			}
		}
	}
	return map[string]any{"layers": c.Layers, "heads": H, "name": m.Name()}, [][]byte{out}, nil
}

// opLabelHeads labels the heads of attention weights (array 1, float32,
// (W, L, H, T, T)) on the windows (array 0) by the null tests of 'vomc
// attention' (attnmap.ScoreWindows, hypotheses up to max_k = D+1 by
// default), and returns the report (attnmap.Report: scores.json's form)
// with its table.
func opLabelHeads(ctx context.Context, req []byte, arrays [][]byte) (any, [][]byte, error) {
	var r struct {
		W, T, L, H, A int
		D             int    `json:"D"`
		MaxK          int    `json:"max_k"`
		Perms         int    `json:"perms"`
		Seed          uint64 `json:"seed"`
		Workers       int    `json:"workers"`
		Model, Source string
		IDs           []int `json:"ids"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	if r.L < 1 || r.H < 1 || r.D < 0 || r.MaxK < 0 || r.Perms < 0 {
		return nil, nil, fmt.Errorf("%d layers of %d heads, D = %d, max_k = %d, perms = %d: want layers and heads ≥ 1, the rest ≥ 0", r.L, r.H, r.D, r.MaxK, r.Perms)
	}
	xs, err := windowsOf(arrays, 0, r.W, r.T, r.A, "windows")
	if err != nil {
		return nil, nil, err
	}
	T := r.T
	b, err := array(arrays, 1, 4*int64(r.W)*int64(r.L)*int64(r.H)*int64(T)*int64(T), "attention")
	if err != nil {
		return nil, nil, err
	}
	att, err := float32s(b)
	if err != nil {
		return nil, nil, err
	}
	if err := checkAttention(att, T); err != nil {
		return nil, nil, err
	}
	maxK := r.MaxK
	if maxK == 0 {
		maxK = r.D + 1
	}
	per := r.L * r.H * T * T
	mapsOf := func(w int) ([][][]float32, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		maps := make([][][]float32, r.L)
		for l := range maps {
			maps[l] = make([][]float32, r.H)
			for h := range maps[l] {
				o := w*per + (l*r.H+h)*T*T
				maps[l][h] = att[o : o+T*T : o+T*T]
			}
		}
		return maps, nil
	}
	null := attnmap.NullOptions{Perms: r.Perms, Seed: r.Seed, Workers: r.Workers}
	scores, err := attnmap.ScoreWindows(xs, mapsOf, maxK, null)
	if err != nil {
		return nil, nil, err
	}
	ids := r.IDs
	if len(ids) != r.W {
		ids = make([]int, r.W)
		for i := range ids {
			ids[i] = i
		}
	}
	rep := attnmap.Report{Model: r.Model, Source: r.Source, Window: ids[0], T: T, D: r.D, MaxK: maxK,
		Windows: ids, Perms: r.Perms, Seed: r.Seed, Alpha: attnmap.Alpha, MinLift: attnmap.MinLift, Heads: scores}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		return nil, nil, err
	}
	return rep, [][]byte{table.Bytes()}, nil
}

// checkAttention checks that every row of T×T maps is a distribution over
// keys: finite weights ≥ 0 summing to 1 within 1e-3.
func checkAttention(att []float32, T int) error {
	for r := 0; r*T < len(att); r++ {
		s := 0.0
		for j, v := range att[r*T : (r+1)*T] {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < 0 {
				return fmt.Errorf("attention: map %d row %d key %d: %v is not a weight", r/T, r%T, j, v)
			}
			s += float64(v)
		}
		if math.Abs(s-1) > 1e-3 {
			return fmt.Errorf("attention: map %d row %d sums to %.6g, not 1 (the rows of an attention pattern are distributions over keys)", r/T, r%T, s)
		}
	}
	return nil
}

// opExploreStatic writes the self-contained page of 'vomc explore
// --static' for models and a data set, and returns it.
func opExploreStatic(_ context.Context, req []byte, _ [][]byte) (any, [][]byte, error) {
	var r struct {
		Models, Data, Train, Methods string
		Window, T                    int
		HeadWindows                  int    `json:"head_windows"`
		MeanWindows                  int    `json:"mean_windows"`
		MaxK                         int    `json:"max_k"`
		Seed                         uint64 `json:"seed"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	var list methods.List
	if r.Methods != "" {
		var err error
		if list, err = methods.Parse(r.Methods); err != nil {
			return nil, nil, err
		}
	}
	o, err := explore.Open(explore.Source{Models: r.Models, Data: r.Data, Train: r.Train},
		explore.Options{Backend: compute(), Methods: list, HeadWindows: r.HeadWindows, MeanWindows: r.MeanWindows, MaxK: r.MaxK, Seed: r.Seed})
	if err != nil {
		return nil, nil, err
	}
	if r.Window < 0 || r.Window >= o.Data.Windows() {
		return nil, nil, fmt.Errorf("window %d: the data set has windows 0..%d", r.Window, o.Data.Windows()-1)
	}
	s, err := explore.New(o)
	if err != nil {
		return nil, nil, err
	}
	var page bytes.Buffer
	if err := s.WriteStatic(&page, r.Window, r.T, true); err != nil {
		return nil, nil, err
	}
	return map[string]any{"models": s.ModelNames(), "data": o.DataName}, [][]byte{page.Bytes()}, nil
}
