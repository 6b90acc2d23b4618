package transformer_test

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// ExampleNew builds a small transformer, predicts a sequence with it (every
// row a distribution over the alphabet) and round-trips its weights
// through the safetensors format.
func ExampleNew() {
	cfg := transformer.DefaultConfig(2, 2, 16, 32, 3) // L=2 layers of 2 heads, E=16, N=32, A=3
	m, err := transformer.NewOn(cpu.NewDefault(), cfg, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	x := []byte{0, 1, 2, 2, 1, 0, 1, 2}
	p := make([]float64, len(x)*cfg.Alphabet)
	m.PredictSequence(x, p) // row i: P(x[i] = · | x[0..i−1]); row 0 is uniform
	sum := 0.0
	for _, v := range p[len(p)-cfg.Alphabet:] {
		sum += v
	}
	fmt.Printf("%d parameters; the last row sums to %.6f\n", m.NumParams(), sum)

	var buf bytes.Buffer
	if err := m.WriteSafetensors(&buf); err != nil {
		fmt.Println(err)
		return
	}
	m2, err := transformer.ReadSafetensorsOn(cpu.NewDefault(), &buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	p2 := make([]float64, len(p))
	m2.PredictSequence(x, p2)
	fmt.Println("same predictions after the round trip:", slices.Equal(p, p2))
	// Output:
	// 7203 parameters; the last row sums to 1.000000
	// same predictions after the round trip: true
}
