package perf

import (
	"bytes"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"math"
	"strings"
	"testing"
)

func TestParseTrainBench(t *testing.T) {
	for _, s := range []string{"C1", "c2"} {
		if b, err := ParseTrainBench(s); err != nil || b.Batch == 0 {
			t.Errorf("%s: %+v %v", s, b, err)
		}
	}
	b, err := ParseTrainBench("L=1:H=2:E=8:N=16:B=4:A=5")
	if err != nil || b.Model.Layers != 1 || b.Model.Heads[0] != 2 || b.Model.Embed != 8 || b.Model.Context != 16 || b.Batch != 4 || b.Model.Alphabet != 5 {
		t.Fatalf("%+v %v", b, err)
	}
	for _, bad := range []string{"C3", "L=1:H=2", "L=1:H=3:E=8:N=16:B=4", "L=x:H=2:E=8:N=16:B=4", "L=1:H=2:E=8:N=16:B=0"} {
		if _, err := ParseTrainBench(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestBenchTrain times a tiny model and checks the report.
func TestBenchTrain(t *testing.T) {
	b, _ := ParseTrainBench("L=1:H=2:E=8:N=16:B=4")
	r, err := BenchTrain(cpu.NewDefault(), b, 2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.TokensPerSecond <= 0 || r.MeanStep <= 0 || r.MinStep > r.MeanStep || r.Params != b.Model.NumParams() {
		t.Fatalf("%+v", r)
	}
	// parameters, gradients and AdamW's two moments at least
	if r.PeakHeapInUse < uint64(4*4*r.Params) {
		t.Errorf("peak heap %d bytes for %d parameters", r.PeakHeapInUse, r.Params)
	}
	if math.Abs(r.Loss-math.Log(3)) > 0.2 {
		t.Errorf("loss %v at initialisation, want ≈ ln 3", r.Loss)
	}
	var buf bytes.Buffer
	WriteTrainReports(&buf, []*TrainReport{r})
	if !strings.Contains(buf.String(), "tokens/s") || !strings.Contains(buf.String(), "L=1 H=[2] E=8 N=16") {
		t.Errorf("table:\n%s", buf.String())
	}
}
