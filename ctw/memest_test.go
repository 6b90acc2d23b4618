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

// TestCountSequenceExactArrays checks that a trie built by CountSequence
// holds its per-node arrays at exactly the node count (the shape-only first
// pass), with every node counted, for both child layouts (inline tables
// at A ≤ 16, a map above).
func TestCountSequenceExactArrays(t *testing.T) {
	for _, c := range []struct{ A, D int }{{3, 16}, {256, 6}} {
		var x []byte
		for len(x) < 5000 {
			x = append(x, fmt.Sprintf("%d tree %d; ", len(x)%7, len(x)%13)...)
		}
		for i := range x {
			x[i] = byte(int(x[i]) % c.A)
		}
		for _, init := range []Init{Pad, Condition} {
			counts, err := CountSequence(Config{A: c.A, D: c.D, Lambda: 0.5, Alpha: 0.5, Init: init}, x)
			if err != nil {
				t.Fatal(err)
			}
			s := counts.s
			if s.dense {
				t.Fatalf("A=%d D=%d: dense layout, want a trie", c.A, c.D)
			}
			if cap(s.cnt) != s.nodes*c.A || cap(s.tot) != s.nodes || cap(s.f[0]) != s.nodes {
				t.Errorf("A=%d D=%d %v: %d nodes, array capacities %d, %d, %d", c.A, c.D, init, s.nodes, cap(s.cnt), cap(s.tot), cap(s.f[0]))
			}
			if got := counts.Nodes(); got != s.nodes {
				t.Errorf("A=%d D=%d %v: %d of %d nodes counted", c.A, c.D, init, got, s.nodes)
			}
		}
	}
}
