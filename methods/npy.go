package methods

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/npy"
	"github.com/vomc/vomc/predict"
)

// NPYTolerance is how far a row of an npy method's distributions may sum
// from 1, and how far the rows of two windows with the same prefix may
// differ (a causal model gives them the same distribution).
const NPYTolerance = 1e-3

// NPYPredictor replays the predictive distributions of an external model
// stored in a .npy array of shape (W, N, A) — float32 or float64 — whose
// row [w, t] is the model's distribution P(x_{t+1} = · | x_1..x_t) for
// window w of the evaluated data (row 0: before the first symbol). It is
// keyed by window content: PredictSequence(x) returns the rows of the
// evaluated window x (or of any window that x is a prefix of, which by
// the causality check have the same rows), and the State narrows the
// candidate windows symbol by symbol. Probabilities are used as given (no
// renormalisation); losses are −ln of them, in nats.
type NPYPredictor struct {
	name    string
	A, N    int
	windows [][]byte
	rows    []float64 // W·N·A
	order   []int     // window indices sorted by content
}

// Name is the label of the model.
func (p *NPYPredictor) Name() string { return p.name }

// AlphabetSize is A.
func (p *NPYPredictor) AlphabetSize() int { return p.A }

// LoadNPY reads path and checks it against the evaluated windows (all of
// length N) over an alphabet of size A: shape (len(windows), N, A), every
// entry finite and ≥ 0, every row summing to 1 within NPYTolerance, a
// non-zero probability for every observed symbol, and causality: windows
// that share their first t symbols have rows 0..t equal within
// NPYTolerance. Errors name the window and position (0-based).
func LoadNPY(path, name string, windows [][]byte, A int) (*NPYPredictor, error) {
	if len(windows) == 0 {
		return nil, fmt.Errorf("%s: no evaluated windows to match (an npy method is matched against the windows of the data set or file evaluated)", path)
	}
	a, err := npy.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".npy")
	}
	p, err := NewNPYPredictor(name, a.Data, a.Shape, windows, A)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// NewNPYPredictor is LoadNPY's predictor of distributions held in memory:
// rows of the given shape (W, N, A), row-major (row [w, t] at
// rows[(w·N+t)·A:]), checked against the evaluated windows as LoadNPY
// checks a file. The predictor keeps rows (no copy): the caller must not
// change them while it is in use. Errors name the window and position
// (0-based) but not where the rows came from.
func NewNPYPredictor(name string, rows []float64, shape []int, windows [][]byte, A int) (*NPYPredictor, error) {
	if len(windows) == 0 {
		return nil, fmt.Errorf("no evaluated windows to match (an npy method is matched against the windows of the data set or file evaluated)")
	}
	N := len(windows[0])
	for w, x := range windows {
		if len(x) != N {
			return nil, fmt.Errorf("the evaluated windows have different lengths (%d and %d at window %d)", N, len(x), w)
		}
	}
	if want := []int{len(windows), N, A}; !slices.Equal(shape, want) {
		return nil, fmt.Errorf("shape %v, want (windows, N, A) = %v for this data", shape, want)
	}
	if len(rows) != len(windows)*N*A {
		return nil, fmt.Errorf("%d values for shape %v", len(rows), shape)
	}
	if err := checkRows(rows, windows, A); err != nil {
		return nil, err
	}
	p := &NPYPredictor{name: name, A: A, N: N, windows: windows, rows: rows, order: make([]int, len(windows))}
	for i := range p.order {
		p.order[i] = i
	}
	slices.SortStableFunc(p.order, func(i, j int) int { return bytes.Compare(windows[i], windows[j]) })
	return p, p.checkCausal()
}

// checkRows checks that every row of rows is a distribution (finite
// entries ≥ 0 summing to 1 within NPYTolerance) giving the observed
// symbol a non-zero probability.
func checkRows(rows []float64, windows [][]byte, A int) error {
	for w, x := range windows {
		N := len(x)
		for t := range N {
			row := rows[(w*N+t)*A : (w*N+t+1)*A]
			s := 0.0
			for q, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					return fmt.Errorf("window %d position %d symbol %d: %v is not a probability", w, t, q, v)
				}
				s += v
			}
			if math.Abs(s-1) > NPYTolerance {
				return fmt.Errorf("window %d position %d: the row sums to %.6g, not 1 (±%g)", w, t, s, NPYTolerance)
			}
			if int(x[t]) >= A {
				return fmt.Errorf("window %d position %d: symbol %d outside the alphabet 0..%d", w, t, x[t], A-1)
			}
			if row[x[t]] == 0 {
				return fmt.Errorf("window %d position %d: probability 0 for the observed symbol %d (infinite loss)", w, t, x[t])
			}
		}
	}
	return nil
}

// checkCausal checks causality: windows that share their first t symbols
// have rows 0..t equal within NPYTolerance. Neighbours in sorted order
// share the longest prefixes.
func (p *NPYPredictor) checkCausal() error {
	N, A, windows := p.N, p.A, p.windows
	for k := 1; k < len(p.order); k++ {
		u, v := p.order[k-1], p.order[k]
		l := 0
		for l < N && windows[u][l] == windows[v][l] {
			l++
		}
		for t := 0; t <= min(l, N-1); t++ {
			for q := range A {
				if d := math.Abs(p.row(u, t)[q] - p.row(v, t)[q]); d > NPYTolerance {
					return fmt.Errorf("not a causal predictor: windows %d and %d share their first %d symbols, but their rows at position %d differ by %.3g in symbol %d", u, v, t, t, d, q)
				}
			}
		}
	}
	return nil
}

func (p *NPYPredictor) row(w, t int) []float64 {
	return p.rows[(w*p.N+t)*p.A : (w*p.N+t+1)*p.A]
}

// find returns a window that x is a prefix of, or −1.
func (p *NPYPredictor) find(x []byte) int {
	i, _ := slices.BinarySearchFunc(p.order, x, func(w int, x []byte) int {
		return bytes.Compare(p.windows[w], x)
	})
	if i < len(p.order) && bytes.HasPrefix(p.windows[p.order[i]], x) {
		return p.order[i]
	}
	return -1
}

// PredictSequence copies the rows of the window x (or of a window x is a
// prefix of). It panics when x is not (a prefix of) an evaluated window or
// longer than N: the npy method predicts only the data it was made for.
func (p *NPYPredictor) PredictSequence(x []byte, out []float64) {
	w := -1
	if len(x) <= p.N {
		w = p.find(x)
	}
	if w < 0 {
		panic(fmt.Sprintf("methods: %s has no distributions for this sequence of %d symbols (not one of the evaluated windows)", p.name, len(x)))
	}
	copy(out, p.rows[w*p.N*p.A:(w*p.N+len(x))*p.A])
}

// NewState returns a state that follows the evaluated windows consistent
// with the symbols observed so far.
func (p *NPYPredictor) NewState() predict.State { return &npyState{p: p} }

type npyState struct {
	p *NPYPredictor
	x []byte
}

func (s *npyState) Predict(out []float64) {
	t := len(s.x)
	w := -1
	if t < s.p.N {
		w = s.p.find(s.x)
	}
	if w < 0 {
		panic(fmt.Sprintf("methods: %s has no distribution after these %d symbols (not a prefix of an evaluated window)", s.p.name, t))
	}
	copy(out, s.p.row(w, t))
}

func (s *npyState) Observe(a byte) { s.x = append(s.x, a) }

var _ predict.SequencePredictor = (*NPYPredictor)(nil)

// buildNPY loads npy:path=P.npy[:name=LABEL].
func buildNPY(a *args, d Defaults) (Built, error) {
	var b Built
	path := a.str("path", "") // required (ParseSpec), present (List.Check)
	p, err := LoadNPY(path, a.str("name", ""), d.Windows, d.A)
	if err != nil {
		return b, fmt.Errorf("methods: %q: %w", a.text, err)
	}
	b.Predictor = p
	b.Note = fmt.Sprintf("%s: distributions of %d windows × %d positions × %d symbols", path, len(d.Windows), p.N, p.A)
	return b, nil
}

// ExportName is the file name ExportNPY gives a method: its name with λ,
// α and δ spelled out and every run of characters other than ASCII
// letters, digits, '.', '-' and '=' replaced by '_', plus ".npy"; e.g.
// "CTW(D=3,λ=0.15,α=0.5)" → "CTW_D=3_lambda=0.15_alpha=0.5.npy".
func ExportName(method string) string {
	r := strings.NewReplacer("λ", "lambda", "α", "alpha", "δ", "delta", "@", "_at_")
	var b strings.Builder
	under := false
	for _, c := range r.Replace(method) {
		ok := c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '=')
		if ok {
			b.WriteRune(c)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	s := strings.Trim(b.String(), "_.")
	if s == "" {
		s = "method"
	}
	return s + ".npy"
}

// ExportNPY writes, for every predictor, DIR/ExportName(name) holding its
// predictive distributions on the windows (all of one length N) as a
// float64 array of shape (len(windows), N, A): row [w, t] is
// P(x_{t+1} = · | x_1..x_t) of window w, the layout the npy method reads,
// so evaluating an export reproduces the method's losses exactly. Each
// file is written atomically (temporary file and rename); an existing
// file is an error unless force. It returns the paths written.
func ExportNPY(dir string, force bool, windows [][]byte, preds []predict.Predictor) ([]string, error) {
	if len(windows) == 0 {
		return nil, fmt.Errorf("export: no windows")
	}
	N := len(windows[0])
	for w, x := range windows {
		if len(x) != N {
			return nil, fmt.Errorf("export: windows of different lengths (%d and %d at window %d)", N, len(x), w)
		}
	}
	seen := map[string]string{}
	for _, p := range preds {
		f := ExportName(p.Name())
		if prev, dup := seen[f]; dup {
			return nil, fmt.Errorf("export: %s and %s would both be written to %s", prev, p.Name(), f)
		}
		seen[f] = p.Name()
	}
	var out []string
	for _, p := range preds {
		A := p.AlphabetSize()
		path := filepath.Join(dir, ExportName(p.Name()))
		err := fsutil.WriteFile(path, force, func(w io.Writer) error {
			bw := bufio.NewWriterSize(w, 1<<20)
			nw, err := npy.NewWriter(bw, len(windows), N, A)
			if err != nil {
				return err
			}
			buf := make([]float64, N*A)
			for _, x := range windows {
				if err := predict.Sequence(p, x, buf); err != nil {
					return err
				}
				if err := nw.Write(buf); err != nil {
					return err
				}
			}
			if err := nw.Close(); err != nil {
				return err
			}
			return bw.Flush()
		})
		if err != nil {
			return out, fmt.Errorf("export %s: %w", p.Name(), err)
		}
		out = append(out, path)
	}
	return out, nil
}
