package compress

import (
	"fmt"

	"github.com/vomc/vomc/arith"
	"github.com/vomc/vomc/predict"
)

// FromPredictor returns a Model that codes every byte with the
// distribution p's State predicts, quantised by Quantize to frequencies of
// total QuantTotal. Bytes ≥ p.AlphabetSize() cannot be coded (Encode
// fails). The file records only p.Name(): decode it with DecodeWith and the
// same predictor, on a platform where p's predictions are bit-identical
// (see the package documentation on portability).
func FromPredictor(p predict.Predictor) Model { return predModel{p} }

type predModel struct{ p predict.Predictor }

func (m predModel) Name() string              { return m.p.Name() }
func (m predModel) spec() (byte, []byte)      { return idPredictor, []byte(m.p.Name()) }
func (m predModel) newCoder(size int64) coder { return newPredCoder(m.p) }

type predCoder struct {
	st   predict.State
	dist []float64
	freq []uint32
}

func newPredCoder(p predict.Predictor) *predCoder {
	A := p.AlphabetSize()
	return &predCoder{st: p.NewState(), dist: make([]float64, A), freq: make([]uint32, A)}
}

func (c *predCoder) table() {
	c.st.Predict(c.dist)
	Quantize(c.dist, QuantTotal, c.freq)
}

func (c *predCoder) encode(e *arith.Encoder, b byte) error {
	if int(b) >= len(c.freq) {
		return fmt.Errorf("byte %d outside the predictor's alphabet 0..%d", b, len(c.freq)-1)
	}
	c.table()
	cum := uint32(0)
	for _, f := range c.freq[:b] {
		cum += f
	}
	e.Encode(cum, c.freq[b], QuantTotal)
	c.st.Observe(b)
	return nil
}

func (c *predCoder) decode(d *arith.Decoder) byte {
	c.table()
	v := d.Target(QuantTotal)
	cum := uint32(0)
	a := 0
	for ; a < len(c.freq)-1 && cum+c.freq[a] <= v; a++ {
		cum += c.freq[a]
	}
	d.Update(cum, c.freq[a], QuantTotal)
	c.st.Observe(byte(a))
	return byte(a)
}
