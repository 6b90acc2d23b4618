package ctw

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
)

// WriteWeightsCSV writes ω_{n,l} (State.Weights) before every symbol of x
// as CSV: position (1-based), symbol, omega_0..omega_D.
func WriteWeightsCSV(w io.Writer, cfg Config, x []byte) error {
	h := "position,symbol"
	for l := 0; l <= cfg.D; l++ {
		h += ",omega_" + strconv.Itoa(l)
	}
	om := make([]float64, cfg.D+1)
	return writeTrace(w, cfg, x, h, func(st State, bw *bufio.Writer, i int) {
		st.Weights(om)
		fmt.Fprintf(bw, "%d,%d", i+1, x[i])
		writeRow(bw, om)
	})
}

// WritePredictionsCSV writes the predictive distribution before every
// symbol of x as CSV: position (1-based), symbol, its loss in nats,
// p_0..p_{A−1}.
func WritePredictionsCSV(w io.Writer, cfg Config, x []byte) error {
	h := "position,symbol,loss_nats"
	for a := 0; a < cfg.A; a++ {
		h += ",p_" + strconv.Itoa(a)
	}
	p := make([]float64, cfg.A)
	return writeTrace(w, cfg, x, h, func(st State, bw *bufio.Writer, i int) {
		st.Predict(p)
		fmt.Fprintf(bw, "%d,%d,%.10g", i+1, x[i], -math.Log(p[x[i]]))
		writeRow(bw, p)
	})
}

// writeTrace writes header and one row per symbol of x, each written by
// row from the state before the symbol.
func writeTrace(w io.Writer, cfg Config, x []byte, header string, row func(st State, bw *bufio.Writer, i int)) error {
	pr, err := New(cfg)
	if err != nil {
		return err
	}
	st := pr.NewCTWState()
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, header)
	for i, a := range x {
		row(st, bw, i)
		st.Observe(a)
	}
	return bw.Flush()
}

// writeRow writes ",v" for every value (10 significant digits) and a
// newline.
func writeRow(w *bufio.Writer, vs []float64) {
	for _, v := range vs {
		w.WriteByte(',')
		w.WriteString(strconv.FormatFloat(v, 'g', 10, 64))
	}
	w.WriteByte('\n')
}
