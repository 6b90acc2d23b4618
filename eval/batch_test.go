package eval_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/predict"
)

// batched is a predictor that batches (predict.BatchPredictor): its
// distributions are those of p (through the State loop), it prefers
// batches of width windows, and it records the size of every batch.
type batched struct {
	p     predict.Predictor
	width int
	fail  error // returned by PredictBatch when set
	nan   bool  // assign NaN to every symbol of the batch's last window

	mu    *sync.Mutex
	sizes *[]int
}

func newBatched(p predict.Predictor, width int) batched {
	return batched{p: p, width: width, mu: new(sync.Mutex), sizes: new([]int)}
}

func (b batched) Name() string            { return b.p.Name() }
func (b batched) AlphabetSize() int       { return b.p.AlphabetSize() }
func (b batched) NewState() predict.State { return b.p.NewState() }
func (b batched) BatchWindows(int) int    { return b.width }

func (b batched) PredictSequence(x []byte, out []float64) {
	if err := predict.Sequence(b.p, x, out); err != nil {
		panic(err)
	}
}

func (b batched) PredictBatch(xs [][]byte, outs [][]float64) error {
	b.mu.Lock()
	*b.sizes = append(*b.sizes, len(xs))
	b.mu.Unlock()
	if b.fail != nil {
		return b.fail
	}
	for j, x := range xs {
		if err := predict.Sequence(b.p, x, outs[j]); err != nil {
			return err
		}
	}
	if b.nan {
		for i := range outs[len(xs)-1] {
			outs[len(xs)-1][i] = math.NaN()
		}
	}
	return nil
}

// TestBatchedSameResult checks that a method evaluated through
// PredictBatch (groups of chunks per worker) gives the result of the same
// method evaluated window by window, bit for bit, for window counts that
// no batch divides, several batch widths and numbers of workers; and that
// the batches cover every window once, each at most the group's windows.
func TestBatchedSameResult(t *testing.T) {
	for _, nw := range []int{1, 3, 23, 41} {
		windows := markovWindows(7, nw, 24, 3)
		want, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		wantJS := encodeJSON(t, want)
		for _, width := range []int{1, 3, 5, 9, 64} {
			for _, workers := range []int{1, 2, 3} {
				ps := preds3()
				b := newBatched(ps[1], width)
				ps[1] = b
				got, err := eval.Evaluate(context.Background(), windows, 3, ps, eval.Config{Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(encodeJSON(t, got), wantJS) {
					t.Fatalf("%d windows, batches of %d, %d workers: the result differs from the unbatched one", nw, width, workers)
				}
				group := min((width+3)/4, (nw+3)/4) * 4
				sum := 0
				for _, s := range *b.sizes {
					sum += s
					if s < 1 || s > group {
						t.Errorf("%d windows, batches of %d: a batch of %d windows (groups of %d)", nw, width, s, group)
					}
				}
				if sum != nw {
					t.Errorf("%d windows, batches of %d: the batches hold %d windows", nw, width, sum)
				}
			}
		}
	}
}

// TestBatchedErrors checks that a batch's error and a NaN in a batch are
// errors of Evaluate that name the method (never a panic).
func TestBatchedErrors(t *testing.T) {
	windows := markovWindows(8, 10, 16, 3)
	for _, workers := range []int{1, 2} {
		ps := preds3()
		b := newBatched(ps[1], 4)
		b.fail = errors.New("out of device memory")
		ps[1] = b
		_, err := eval.Evaluate(context.Background(), windows, 3, ps, eval.Config{Workers: workers})
		if err == nil || !strings.Contains(err.Error(), "out of device memory") || !strings.Contains(err.Error(), `"unigram"`) {
			t.Errorf("workers=%d: a failing batch gave %v", workers, err)
		}
		ps = preds3()
		b = newBatched(ps[1], 4)
		b.nan = true
		ps[1] = b
		_, err = eval.Evaluate(context.Background(), windows, 3, ps, eval.Config{Workers: workers})
		if err == nil || !strings.Contains(err.Error(), "NaN") {
			t.Errorf("workers=%d: NaN from a batch gave %v", workers, err)
		}
	}
	// cancellation between batches
	ctx, cancel := context.WithCancel(context.Background())
	ps := preds3()
	ps[1] = newBatched(ps[1], 4)
	calls := 0
	_, err := eval.Evaluate(ctx, markovWindows(9, 40, 16, 3), 3, ps, eval.Config{Workers: 1, Events: onProgress(func(done, total int) {
		if calls++; calls == 5 {
			cancel()
		}
	})})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
