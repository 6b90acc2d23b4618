package explore

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/panics"
	"github.com/vomc/vomc/predict"
)

type labelKey struct{ model, step int }

// once is a value computed once, in the background, per (model, step).
type once[T any] struct {
	once sync.Once
	done chan struct{}
	val  T
	err  error
}

// background returns the value of key in m, computing it with compute in
// the background the first time (one computation at a time per s.work
// slot; a panic becomes an error). With wait it waits for the value;
// without, a computation not yet finished gives pending = true.
func background[T any](s *Server, m *sync.Map, key labelKey, wait bool, compute func() (T, error)) (val T, pending bool, err error) {
	v, _ := m.LoadOrStore(key, &once[T]{done: make(chan struct{})})
	e := v.(*once[T])
	e.once.Do(func() {
		go func() {
			defer close(e.done)
			defer func() {
				if r := recover(); r != nil {
					e.err = panicError(r)
				}
			}()
			s.work <- struct{}{}
			defer func() { <-s.work }()
			e.val, e.err = compute()
		}()
	})
	if wait {
		<-e.done
	} else {
		select {
		case <-e.done:
		default:
			var zero T
			return zero, true, nil
		}
	}
	return e.val, false, e.err
}

// Labels returns the head labels of model mi at step ([layer][head]),
// computed once by attnmap.ScoreWindows on the first HeadWindows windows of
// the data set. Without wait, a computation not yet finished is started in
// the background and Labels returns pending = true.
func (s *Server) Labels(mi, step int, wait bool) (labels [][]Label, pending bool, err error) {
	m, err := s.model(mi)
	if err != nil {
		return nil, false, err
	}
	if _, err := m.at(step); err != nil {
		return nil, false, err
	}
	return background(s, &s.labels, labelKey{mi, step}, wait, func() ([][]Label, error) { return s.computeLabels(mi, step) })
}

func (s *Server) computeLabels(mi, step int) ([][]Label, error) {
	m := s.models[mi]
	tm, err := m.at(step)
	if err != nil {
		return nil, err
	}
	n := min(s.opts.HeadWindows, s.data.Windows())
	xs := make([][]byte, n)
	for w := range n {
		xs[w] = s.data.Window(w)[:s.T]
	}
	s.logf("explore: labelling the heads of %s%s on %d windows", m.Name, stepText(step), n)
	scores, err := attnmap.ScoreWindows(xs, func(w int) ([][][]float32, error) { return tm.AttentionMaps(xs[w]) },
		s.maxK, attnmap.NullOptions{Seed: s.opts.Seed})
	if err != nil {
		return nil, fmt.Errorf("explore: head labels of %s: %w", m.Name, err)
	}
	labels := make([][]Label, len(m.Config.Heads))
	for l, H := range m.Config.Heads {
		labels[l] = make([]Label, H)
	}
	for _, sc := range scores {
		labels[sc.Layer-1][sc.Head-1] = Label{Text: sc.Label, Short: shortLabel(sc), Labelled: sc.Labelled, Best: sc.Best}
	}
	return labels, nil
}

func stepText(step int) string {
	if step == FinalStep {
		return ""
	}
	return fmt.Sprintf(" at step %d", step)
}

// shortLabel is a head's label in a few characters: "d=1 prev", "k=3 (o1)",
// or "–" for an unlabelled head.
func shortLabel(h attnmap.HeadScore) string {
	if !h.Labelled {
		return "unlabelled"
	}
	b := h.Best
	var s string
	switch b.Kind {
	case attnmap.Relative:
		s = fmt.Sprintf("offset d=%d", b.D)
		if b.D == 1 {
			s = "previous token (d=1)"
		}
	case attnmap.SuffixMatch:
		s = fmt.Sprintf("suffix k=%d, offset %d", b.K, b.Offset)
	default:
		s = string(b.Kind)
	}
	return fmt.Sprintf("%s · p_adj %s", s, attnmap.PValue(b.PAdj))
}

// Mean are per-position losses averaged over the first MeanWindows windows
// of the data set: Loss[i][t] is method i's mean −ln P(x[t+1] | x[0..t])
// (references, then the model), with the standard error SE[i][t].
type Mean struct {
	Windows int      `json:"windows"`
	Names   []string `json:"names"`
	Kinds   []string `json:"kinds"`
	Loss    []Losses `json:"loss"`
	SE      []Losses `json:"se"`
	Excess  string   `json:"excess"`
}

// Mean returns the mean curves of model mi at step beside every reference
// (computed once, in the background; pending while it runs).
func (s *Server) Mean(mi, step int, wait bool) (*Mean, bool, error) {
	m, err := s.model(mi)
	if err != nil {
		return nil, false, err
	}
	if _, err := m.at(step); err != nil {
		return nil, false, err
	}
	return background(s, &s.means, labelKey{mi, step}, wait, func() (*Mean, error) { return s.computeMean(mi, step) })
}

func (s *Server) computeMean(mi, step int) (*Mean, error) {
	m := s.models[mi]
	tm, err := m.at(step)
	if err != nil {
		return nil, err
	}
	W := min(s.opts.MeanWindows, s.data.Windows())
	preds := make([]predict.Predictor, 0, len(s.refs)+1)
	mean := &Mean{Windows: W, Excess: s.excess}
	for _, r := range s.refs {
		preds = append(preds, r.P)
		mean.Names, mean.Kinds = append(mean.Names, r.Name), append(mean.Kinds, "reference")
	}
	preds = append(preds, tm)
	mean.Names, mean.Kinds = append(mean.Names, m.Name), append(mean.Kinds, "model")
	T := s.T
	sum := make([][]float64, len(preds))
	sq := make([][]float64, len(preds))
	for i := range preds {
		sum[i], sq[i] = make([]float64, T-1), make([]float64, T-1)
	}
	s.logf("explore: mean curves of %s%s over %d windows", m.Name, stepText(step), W)
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := make([]error, len(preds))
	for i, p := range preds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { // a method's bug: this computation's error, not a crash
				if err := panics.Of(recover()); err != nil {
					errs[i] = fmt.Errorf("explore: %s: %w", p.Name(), err)
				}
			}()
			loss := make([]float64, T)
			for w := range W {
				if _, err := predict.LogLoss(p, s.data.Window(w)[:T], loss); err != nil {
					errs[i] = err
					return
				}
				mu.Lock()
				for t := range T - 1 {
					sum[i][t] += loss[t+1]
					sq[i][t] += loss[t+1] * loss[t+1]
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("explore: mean curves: %w", err)
	}
	for i := range preds {
		l, se := make(Losses, T-1), make(Losses, T-1)
		for t := range T - 1 {
			mu := sum[i][t] / float64(W)
			l[t] = mu
			if W > 1 {
				v := (sq[i][t] - float64(W)*mu*mu) / float64(W-1)
				se[t] = math.Sqrt(max(v, 0) / float64(W))
			}
		}
		mean.Loss, mean.SE = append(mean.Loss, l), append(mean.SE, se)
	}
	return mean, nil
}

// panicError turns a recovered panic into an error.
func panicError(r any) error {
	return fmt.Errorf("explore: internal error: %v", strings.TrimSpace(fmt.Sprint(r)))
}
