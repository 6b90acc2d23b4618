package ctw

import (
	"fmt"
	"testing"
)

// TestSequenceMemoryEstimate checks the exact context count against the
// nodes a counting pass creates (pad convention), and that the estimate
// never exceeds the worst case.
func TestSequenceMemoryEstimate(t *testing.T) {
	var x []byte
	for len(x) < 20000 {
		x = append(x, fmt.Sprintf("abc %d abd; ", len(x)%31)...)
	}
	for _, D := range []int{1, 3, 8} {
		cfg := Config{A: 256, D: D, Lambda: 0.5, Alpha: 0.5}
		counts, err := CountSequence(cfg, x)
		if err != nil {
			t.Fatal(err)
		}
		est := SequenceMemoryEstimate(cfg, x)
		nodes := est / nodeBytes(cfg.A, cfg.Form)
		if d := nodes - int64(counts.Nodes()); d < -1 || d > 1+int64(D) {
			t.Errorf("D=%d: %d contexts counted, the counting pass made %d nodes", D, nodes, counts.Nodes())
		}
		t.Logf("D=%d: %d contexts counted, %d nodes made", D, nodes, counts.Nodes())
		if w := MemoryEstimate(cfg, int64(len(x))); est > w {
			t.Errorf("D=%d: estimate %d above the worst case %d", D, est, w)
		}
	}
}
