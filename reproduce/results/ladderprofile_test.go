package results

import (
	"math"
	"testing"
)

func TestLadderProfileBest(t *testing.T) {
	p := LadderProfile{Prev: [][]float64{{0, 0.95, 0.1, 0.0}, {0, 0.2, 0.93, 0.97, 0.5}}}
	for _, tc := range []struct {
		q    int
		w    float64
		head int
	}{{1, 0.95, 1}, {2, 0.93, 2}, {3, 0.97, 2}, {4, 0.5, 2}, {5, math.Inf(-1), 0}, {-1, math.Inf(-1), 0}} {
		if w, h := p.Best(tc.q); w != tc.w || h != tc.head {
			t.Errorf("Best(%d) = %g, head %d; want %g, head %d", tc.q, w, h, tc.w, tc.head)
		}
	}
}
