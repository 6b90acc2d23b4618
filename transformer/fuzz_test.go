package transformer

import (
	"bytes"
	"context"
	"testing"

	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// reseal rewrites a safetensors input with a correct checksum, so that
// the fuzzers explore what lies behind the checksum (nil if the input is
// not a well-formed safetensors file).
func reseal(in []byte) []byte {
	h, err := safetensors.ReadHeader(bytes.NewReader(in), 1<<20, int64(len(in)))
	if err != nil {
		return nil
	}
	h.Checksum = "" // not verified
	ts, err := h.ReadData(bytes.NewReader(in[h.Size-h.DataSize:]))
	if err != nil {
		return nil
	}
	var buf bytes.Buffer
	if safetensors.Write(&buf, h.Meta, ts) != nil {
		return nil
	}
	return buf.Bytes()
}

// seedModel is a small model file (with and without a checksum).
func seedModels(f *testing.F) [][]byte {
	var out [][]byte
	for _, c := range []Config{DefaultConfig(1, 1, 4, 6, 3),
		{Layers: 2, Heads: []int{2, 1}, Embed: 4, Context: 5, Alphabet: 2, Activation: ReLU, Positional: Sinusoidal}} {
		m, err := NewOn(cpu.NewDefault(), c, 1)
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		m.WriteSafetensors(&buf)
		out = append(out, buf.Bytes())
	}
	return out
}

// FuzzReadSafetensors: reading a model file never panics, and a model it
// returns is usable (a forward pass over its whole context).
func FuzzReadSafetensors(f *testing.F) {
	for _, b := range seedModels(f) {
		f.Add(b)
	}
	f.Add([]byte("\x08\x00\x00\x00\x00\x00\x00\x00{}      "))
	f.Fuzz(func(t *testing.T, in []byte) {
		ReadSafetensorsOn(cpu.NewDefault(), bytes.NewReader(in))
		in = reseal(in)
		if in == nil {
			return
		}
		m, err := ReadSafetensorsOn(cpu.NewDefault(), bytes.NewReader(in))
		if err != nil {
			return
		}
		if m.Config.Validate() != nil || len(m.HostParams()) != m.Config.NumParams() {
			t.Fatalf("accepted an inconsistent model %v", m.Config)
		}
		T := min(m.Config.Context, 8)
		acts := m.NewActivations(1, T, false)
		m.Forward(acts, make([]byte, T), 1, T)
	})
}

// FuzzParseConfig: ParseConfig never panics and what it accepts is valid
// and round-trips through String.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(DefaultConfig(2, 4, 8, 16, 3).String()))
	f.Add([]byte(`{"layers":1,"heads":[2],"embed":8,"context":5,"alphabet":4,"activation":"relu","positional":"sinusoidal"}`))
	f.Add([]byte(`{"layers":3000000}`))
	f.Add([]byte(`{"embed":2147483648}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := ParseConfig(in)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		c2, err := ParseConfig([]byte(c.String()))
		if err != nil || c2.String() != c.String() {
			t.Fatalf("round trip: %v", err)
		}
		if c.paramCount() != float64(c.NumParams()) || c.numTensors() != len(c.Layout()) {
			t.Fatalf("closed forms disagree with the layout for %v", c)
		}
	})
}

// FuzzReadCheckpoint: reading a checkpoint never panics, and one it
// returns resumes on windows of its shape.
func FuzzReadCheckpoint(f *testing.F) {
	train, _, _ := markovWindows(testChain, 6, 6, 1)
	m, _ := NewOn(cpu.NewDefault(), DefaultConfig(1, 1, 4, 6, 3), 1)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.MaxSteps = 4, 2, 3
	tr, err := NewTrainer(m, tc, train, train[:2])
	if err != nil {
		f.Fatal(err)
	}
	var fresh, trained bytes.Buffer
	tr.WriteCheckpoint(&fresh, map[string]string{"data": "/x", "val_frac": "0.1"})
	if _, err := tr.Run(context.Background()); err != nil {
		f.Fatal(err)
	}
	tr.WriteCheckpoint(&trained, nil)
	f.Add(fresh.Bytes())
	f.Add(trained.Bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		ReadCheckpoint(bytes.NewReader(in))
		in = reseal(in)
		if in == nil {
			return
		}
		c, err := ReadCheckpoint(bytes.NewReader(in))
		if err != nil {
			return
		}
		if c.TrainWindows > 64 || c.ValWindows > 64 || c.WindowLen > 64 {
			return
		}
		ws := make(sliceWindows, c.TrainWindows)
		for i := range ws {
			ws[i] = make([]byte, c.WindowLen)
		}
		var val Windows
		if c.ValWindows > 0 {
			vs := make(sliceWindows, c.ValWindows)
			for i := range vs {
				vs[i] = make([]byte, c.WindowLen)
			}
			val = vs
		}
		if c.Train.BatchSize > 64 || c.Config.NumParams() > 1<<16 {
			return
		}
		tr, err := c.ResumeOn(cpu.NewDefault(), ws, val)
		if err != nil {
			return
		}
		tr.Cfg.MaxSteps = tr.Step + 1
		tr.Run(context.Background())
	})
}

// FuzzCheckpointMeta fuzzes the JSON metadata of a checkpoint (config,
// train config, state, history, meta) around valid tensors, with a
// correct checksum: whatever ReadCheckpoint accepts must resume and run a
// step without panicking.
func FuzzCheckpointMeta(f *testing.F) {
	train, _, _ := markovWindows(testChain, 6, 6, 1)
	m, _ := NewOn(cpu.NewDefault(), DefaultConfig(1, 1, 4, 6, 3), 1)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.MaxSteps, tc.LogEvery = 4, 3, 4, 1
	tr, err := NewTrainer(m, tc, train, train[:2])
	if err != nil {
		f.Fatal(err)
	}
	seed := func() {
		var buf bytes.Buffer
		if err := tr.WriteCheckpoint(&buf, map[string]string{"data": "/x", "val_frac": "0.1"}); err != nil {
			f.Fatal(err)
		}
		h, err := safetensors.ReadHeader(bytes.NewReader(buf.Bytes()), 0, int64(buf.Len()))
		if err != nil {
			f.Fatal(err)
		}
		md := h.Meta
		f.Add(md["config"], md["train_config"], md["state"], md["history"], md["meta"])
	}
	seed()
	if _, err := tr.Run(context.Background()); err != nil {
		f.Fatal(err)
	}
	seed()
	P := m.NumParams()
	params := safetensors.Float32Bytes(m.HostParams())
	zeros := make([]byte, 4*P)
	f.Fuzz(func(t *testing.T, config, trainConfig, state, history, meta string) {
		md := map[string]string{"format": checkpointFormat, "version": checkpointVersion, "config": config,
			"train_config": trainConfig, "state": state, "history": history, "meta": meta}
		ts := []safetensors.Tensor{{Name: "params", DType: "F32", Shape: []int{P}, Data: params},
			{Name: "adam.m", DType: "F32", Shape: []int{P}, Data: zeros}, {Name: "adam.v", DType: "F32", Shape: []int{P}, Data: zeros}}
		var buf bytes.Buffer
		if err := safetensors.Write(&buf, md, ts); err != nil {
			return
		}
		c, err := ReadCheckpoint(&buf)
		if err != nil {
			return
		}
		if c.TrainWindows > 64 || c.ValWindows > 64 || c.Train.BatchSize > 64 {
			return
		}
		ws := make(sliceWindows, c.TrainWindows)
		for i := range ws {
			ws[i] = make([]byte, c.WindowLen)
		}
		var val Windows
		if c.ValWindows > 0 {
			vs := make(sliceWindows, c.ValWindows)
			for i := range vs {
				vs[i] = make([]byte, c.WindowLen)
			}
			val = vs
		}
		tr, err := c.ResumeOn(cpu.NewDefault(), ws, val)
		if err != nil {
			return
		}
		tr.Cfg.MaxSteps = tr.Step + 2
		tr.Run(context.Background())
		for _, e := range tr.History {
			if _, err := e.MarshalJSON(); err != nil {
				t.Fatalf("log entry %+v: %v", e, err)
			}
		}
	})
}
