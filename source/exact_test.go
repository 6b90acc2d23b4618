package source

import (
	"math"
	"testing"
)

// branchingProb returns the probability of a structure under the bounded
// branching process node by node: λ for each leaf above depth D, 1−λ for
// each internal node, 1 for a leaf at depth D.
func branchingProb(n *Node, depth, D int, lambda float64) float64 {
	if n.Children == nil {
		if depth == D {
			return 1
		}
		return lambda
	}
	p := 1 - lambda
	for _, c := range n.Children {
		p *= branchingProb(c, depth+1, D, lambda)
	}
	return p
}

// TestPiDBruteForce enumerates all trees of T(D) for small A, D and checks
// π_D(T) = (1−λ)^{(|L|−1)/(A−1)} λ^{|L|−|L_D|} against the branching
// process, that it sums to 1, and LeafCountDistribution against the sums of
// π_D over trees with k leaves.
func TestPiDBruteForce(t *testing.T) {
	wantShapes := map[[2]int]int{{2, 0}: 1, {2, 1}: 2, {2, 2}: 5, {2, 3}: 26, {3, 1}: 2, {3, 2}: 9, {4, 2}: 17}
	for AD, count := range wantShapes {
		A, D := AD[0], AD[1]
		for _, lambda := range []float64{0.15, 0.5, 0.9} {
			trees := enumShapes(A, D)
			if len(trees) != count {
				t.Fatalf("A=%d D=%d: %d structures, want %d", A, D, len(trees), count)
			}
			total := 0.0
			byLeaves := map[int]float64{}
			for _, tr := range trees {
				if err := tr.Validate(); err != nil {
					t.Fatal(err)
				}
				lp, err := tr.LogStructurePrior(lambda)
				if err != nil {
					t.Fatal(err)
				}
				p := math.Exp(lp)
				if bp := branchingProb(tr.Root, 0, D, lambda); math.Abs(p-bp) > 1e-14 {
					t.Errorf("A=%d D=%d λ=%v %s: formula %v, branching process %v", A, D, lambda, shapeKey(tr), p, bp)
				}
				prior := Prior{A: A, Depths: []int{D}, Lambda: lambda, Alpha: []float64{1}}
				if lq, err := prior.LogTreeProb(tr); err != nil || math.Abs(lq-lp) > 1e-12 {
					t.Errorf("LogTreeProb = %v, %v; want %v", lq, err, lp)
				}
				total += p
				byLeaves[tr.NumLeaves()] += p
			}
			if math.Abs(total-1) > 1e-12 {
				t.Errorf("A=%d D=%d λ=%v: Σ π_D(T) = %v", A, D, lambda, total)
			}
			dist, err := LeafCountDistribution(A, D, lambda)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range dist {
				if math.Abs(v-byLeaves[k]) > 1e-14 {
					t.Errorf("A=%d D=%d λ=%v: P(|L|=%d) = %v, enumeration %v", A, D, lambda, k, v, byLeaves[k])
				}
			}
		}
	}
}

func TestLeafCountDistribution(t *testing.T) {
	for _, c := range []struct {
		A, D   int
		lambda float64
	}{{3, 5, 0.15}, {2, 10, 0.3}, {256, 1, 0.5}, {3, 0, 0.2}, {16, 3, 0.7}} {
		dist, err := LeafCountDistribution(c.A, c.D, c.lambda)
		if err != nil {
			t.Fatal(err)
		}
		sum, mean := 0.0, 0.0
		for k, v := range dist {
			if v < 0 {
				t.Fatalf("negative probability")
			}
			if v > 0 && (k-1)%(c.A-1) != 0 {
				t.Errorf("P(|L|=%d) = %v but |L| ≡ 1 mod A−1", k, v)
			}
			sum += v
			mean += float64(k) * v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%+v: sums to %v", c, sum)
		}
		// E|L| = Σ_d ExpectedLeavesAtDepth.
		exp, err := ExpectedLeavesAtDepth(c.A, c.D, c.lambda)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for _, v := range exp {
			want += v
		}
		if math.Abs(mean-want) > 1e-9*want {
			t.Errorf("%+v: E|L| = %v from the distribution, %v from ExpectedLeavesAtDepth", c, mean, want)
		}
	}
	bad := []struct {
		A, D   int
		lambda float64
	}{{1, 2, 0.5}, {3, -1, 0.5}, {3, 2, 0}, {3, 2, 1}, {3, 20, 0.5}}
	for _, c := range bad {
		if _, err := LeafCountDistribution(c.A, c.D, c.lambda); err == nil {
			t.Errorf("LeafCountDistribution(%d,%d,%v) accepted bad input", c.A, c.D, c.lambda)
		}
	}
	if _, err := ContextDepthDistribution(-1, 0.5); err == nil {
		t.Error("ContextDepthDistribution(-1) accepted")
	}
	if _, err := ExpectedLeavesAtDepth(3, 2, 1.5); err == nil {
		t.Error("ExpectedLeavesAtDepth(λ=1.5) accepted")
	}
}

func TestContextDepthDistribution(t *testing.T) {
	d, err := ContextDepthDistribution(3, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.25, 0.75 * 0.25, 0.75 * 0.75 * 0.25, 0.75 * 0.75 * 0.75}
	for i := range want {
		if math.Abs(d[i]-want[i]) > 1e-15 {
			t.Errorf("depth %d: %v, want %v", i, d[i], want[i])
		}
	}
}
