package probe

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// DefaultPenalties are the relative ridge penalties c tried on the
// validation rows: the penalty is λ = c · tr(XᵀX)/p for p standardised
// features, so that c is comparable across streams of any width.
var DefaultPenalties = []float64{1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100}

// matrix is a row-major n×cols matrix of float64.
type matrix struct {
	n, cols int
	v       []float64
}

func newMatrix(n, cols int) matrix { return matrix{n, cols, make([]float64, n*cols)} }

func (m matrix) row(i int) []float64 { return m.v[i*m.cols : (i+1)*m.cols] }

// fmatrix is a row-major n×cols matrix of float32 (features).
type fmatrix struct {
	n, cols int
	v       []float32
}

func (m fmatrix) row(i int) []float32 { return m.v[i*m.cols : (i+1)*m.cols] }

// ridge is a ridge regression fitted on standardised features: the
// training features' column means μ and standard deviations σ (σ = 1 for
// a constant column) standardise every row, z = (x − μ)/σ; the targets
// are centred by their training means ȳ. With the eigendecomposition
// ZᵀZ = V diag(s) Vᵀ and G = Vᵀ Zᵀ (Y − ȳ), the weights for penalty λ are
// W_λ = V diag(1/(s + λ)) G, so that every penalty costs one p×k product
// once the decomposition is made. The prediction is ȳ + z W_λ.
type ridge struct {
	mu, sigma, ybar []float64
	vecs            *mat.Dense // V (p×p)
	vals            []float64  // s
	g               *mat.Dense // G (p×k)
	scale           float64    // tr(ZᵀZ)/p: λ = c·scale
}

// standardise returns (x − μ)/σ row by row.
func (r *ridge) standardise(x fmatrix) *mat.Dense {
	z := mat.NewDense(max(x.n, 1), x.cols, nil)
	for i := range x.n {
		row, out := x.row(i), z.RawRowView(i)
		for j := range row {
			out[j] = (float64(row[j]) - r.mu[j]) / r.sigma[j]
		}
	}
	return z
}

// fitRidge decomposes the standardised training features x (n×p) and
// projects the targets y (n×k). n ≥ 2 is required.
func fitRidge(x fmatrix, y matrix) (*ridge, error) {
	if x.n < 2 || x.n != y.n {
		return nil, fmt.Errorf("probe: %d feature rows and %d target rows (need at least 2)", x.n, y.n)
	}
	p, k := x.cols, y.cols
	r := &ridge{mu: make([]float64, p), sigma: make([]float64, p), ybar: make([]float64, k)}
	for i := range x.n {
		for j, v := range x.row(i) {
			r.mu[j] += float64(v)
		}
	}
	for j := range r.mu {
		r.mu[j] /= float64(x.n)
	}
	colMeans(y, r.ybar)
	for i := range x.n {
		for j, v := range x.row(i) {
			d := float64(v) - r.mu[j]
			r.sigma[j] += d * d
		}
	}
	for j := range r.sigma {
		r.sigma[j] = math.Sqrt(r.sigma[j] / float64(x.n))
		if !(r.sigma[j] > 1e-12*(1+math.Abs(r.mu[j]))) {
			r.sigma[j] = 1
		}
	}
	z := r.standardise(x)
	var gram mat.SymDense
	gram.SymOuterK(1, z.T())
	var es mat.EigenSym
	if !es.Factorize(&gram, true) {
		return nil, fmt.Errorf("probe: the eigendecomposition of the %d×%d feature Gram matrix failed", p, p)
	}
	r.vals = es.Values(nil)
	r.vecs = new(mat.Dense)
	es.VectorsTo(r.vecs)
	for i, s := range r.vals {
		r.vals[i] = max(s, 0)
		r.scale += r.vals[i]
	}
	r.scale = max(r.scale/float64(p), 1e-300)
	yc := mat.NewDense(y.n, k, nil)
	for i := range y.n {
		row, out := y.row(i), yc.RawRowView(i)
		for j := range row {
			out[j] = row[j] - r.ybar[j]
		}
	}
	var zty mat.Dense
	zty.Mul(z.T(), yc)
	r.g = new(mat.Dense)
	r.g.Mul(r.vecs.T(), &zty)
	return r, nil
}

// colMeans writes the column means of m into mu.
func colMeans(m matrix, mu []float64) {
	for i := range m.n {
		for j, v := range m.row(i) {
			mu[j] += v
		}
	}
	for j := range mu {
		mu[j] /= float64(max(m.n, 1))
	}
}

// projected holds features standardised by a fit and rotated into its
// eigenbasis (Z V), so that predictions for any penalty cost one product.
type projected struct {
	zv *mat.Dense
	n  int
}

func (r *ridge) project(x fmatrix) projected {
	var zv mat.Dense
	zv.Mul(r.standardise(x), r.vecs)
	return projected{&zv, x.n}
}

// predict returns the predictions ȳ + (Z V) diag(1/(s+λ)) G for the
// relative penalty c (λ = c·scale).
func (r *ridge) predict(pr projected, c float64) matrix {
	p, k := r.g.Dims()
	lam := c * r.scale
	w := mat.NewDense(p, k, nil)
	for i := range p {
		f := 1 / (r.vals[i] + lam)
		gi, wi := r.g.RawRowView(i), w.RawRowView(i)
		for j := range gi {
			wi[j] = gi[j] * f
		}
	}
	out := newMatrix(pr.n, k)
	if pr.n == 0 {
		return out
	}
	var pred mat.Dense
	pred.Mul(pr.zv, w)
	for i := range pr.n {
		row := out.row(i)
		copy(row, pred.RawRowView(i))
		for j := range row {
			row[j] += r.ybar[j]
		}
	}
	return out
}

// r2 is the coefficient of determination of predictions pred for targets
// y over all their columns, 1 − Σ SSE / Σ SST, with SST about each
// column's mean over these rows (the variance-weighted R² of several
// outputs). It is NaN when the targets do not vary.
func r2(y, pred matrix) float64 {
	var sse, sst float64
	mu := make([]float64, y.cols)
	colMeans(y, mu)
	for i := range y.n {
		yr, pr := y.row(i), pred.row(i)
		for j := range yr {
			d, e := yr[j]-pr[j], yr[j]-mu[j]
			sse += d * d
			sst += e * e
		}
	}
	if !(sst > 0) {
		return math.NaN()
	}
	return 1 - sse/sst
}

// argmaxRows returns the column of each row's largest value (the first
// on ties).
func argmaxRows(m matrix) []int {
	out := make([]int, m.n)
	for i := range m.n {
		row := m.row(i)
		for j, v := range row {
			if v > row[out[i]] {
				out[i] = j
			}
		}
	}
	return out
}

// accuracy is the share of rows whose predicted class (the arg-max of
// pred) is the arg-max of the one-hot targets y.
func accuracy(y, pred matrix) float64 {
	if y.n == 0 {
		return math.NaN()
	}
	a, b := argmaxRows(y), argmaxRows(pred)
	hit := 0
	for i := range a {
		if a[i] == b[i] {
			hit++
		}
	}
	return float64(hit) / float64(y.n)
}
