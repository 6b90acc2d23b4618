package methods

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/panics"
	"github.com/vomc/vomc/predict"
)

// TestDistributions checks Distributions against predict.Sequence window
// by window for every worker count, and that it refuses bad shapes and
// stops on a cancelled context.
func TestDistributions(t *testing.T) {
	const W, N, A = 7, 20, 3
	ws := npyWindows(W, N, A, 4)
	built, err := Build(MustParse("ctw:D=3,markov:k=2"), Defaults{A: A, D: 3, Lambda: 0.15, Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		want := make([]float64, W*N*A)
		for w, x := range ws {
			if err := predict.Sequence(b.Predictor, x, want[w*N*A:(w+1)*N*A]); err != nil {
				t.Fatal(err)
			}
		}
		for _, workers := range []int{1, 3, 0} {
			got := make([]float64, W*N*A)
			if err := Distributions(context.Background(), b.Predictor, ws, got, workers); err != nil {
				t.Fatalf("%s, %d workers: %v", b.Spec, workers, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, %d workers: the rows differ from predict.Sequence's", b.Spec, workers)
			}
		}
	}
	p := built[0].Predictor
	for _, c := range []struct {
		name    string
		windows [][]byte
		out     int
	}{
		{"no windows", nil, 0},
		{"ragged", [][]byte{{0, 1}, {0}}, 6},
		{"short output", ws, W*N*A - 1},
		{"symbol", [][]byte{{0, 3}}, 2 * A},
	} {
		if err := Distributions(context.Background(), p, c.windows, make([]float64, c.out), 2); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Distributions(ctx, p, ws, make([]float64, W*N*A), 2); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v, want context.Canceled", err)
	}
}

// TestNewNPYPredictor checks that distributions held in memory replay as
// a file's do, and that a bad array is refused with its window and
// position named.
func TestNewNPYPredictor(t *testing.T) {
	const W, N, A = 4, 6, 3
	ws := npyWindows(W, N, A, 2)
	built, err := Build(MustParse("ctw:D=2"), Defaults{A: A, D: 2, Lambda: 0.15, Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]float64, W*N*A)
	if err := Distributions(context.Background(), built[0].Predictor, ws, rows, 1); err != nil {
		t.Fatal(err)
	}
	p, err := NewNPYPredictor("mine", rows, []int{W, N, A}, ws, A)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, N*A)
	for w, x := range ws {
		if err := predict.Sequence(p, x, got); err != nil || !slices.Equal(got, rows[w*N*A:(w+1)*N*A]) {
			t.Errorf("window %d: replay differs (%v)", w, err)
		}
	}
	bad := slices.Clone(rows)
	bad[(2*N+3)*A+1] = -1
	if _, err := NewNPYPredictor("mine", bad, []int{W, N, A}, ws, A); err == nil || err.Error() != "window 2 position 3 symbol 1: -1 is not a probability" {
		t.Errorf("negative entry: error %v", err)
	}
	if _, err := NewNPYPredictor("mine", rows, []int{W, N, A + 1}, ws, A); err == nil {
		t.Error("wrong shape accepted")
	}
}

// panicky is a predictor with a bug: its Predict panics (a runtime error)
// once the history holds at symbols.
type panicky struct{ A, at int }

type panickyState struct {
	p panicky
	n int
}

func (p panicky) Name() string                { return "panicky" }
func (p panicky) AlphabetSize() int           { return p.A }
func (p panicky) NewState() predict.State     { return &panickyState{p: p} }
func (s *panickyState) Observe(byte)          { s.n++ }
func (s *panickyState) Predict(out []float64) { fillOrPanic(out, s.n >= s.p.at) }

func fillOrPanic(out []float64, bug bool) {
	if bug {
		var counts map[int]int
		counts[len(out)]++
	}
	for i := range out {
		out[i] = 1 / float64(len(out))
	}
}

// TestDistributionsPanic: a predictor that panics on a worker goroutine
// makes Distributions return an error with the panic's value and the
// worker's stack, for any number of workers; the process lives on.
func TestDistributionsPanic(t *testing.T) {
	const W, N, A = 9, 12, 3
	ws := npyWindows(W, N, A, 5)
	for _, workers := range []int{1, 4} {
		err := Distributions(context.Background(), panicky{A: A, at: 5}, ws, make([]float64, W*N*A), workers)
		var pe *panics.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%d workers: error %v, want a *panics.Error", workers, err)
		}
		for _, want := range []string{"distributions: panicky on window ", "assignment to entry in nil map", "methods.fillOrPanic"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%d workers: the error does not say %q:\n%v", workers, want, err)
			}
		}
	}
}
