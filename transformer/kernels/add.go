package kernels

// Add sets dst[i] = a[i] + b[i] for i < len(a) (dst may alias a or b
// exactly; len(dst), len(b) ≥ len(a)). It uses the set's kernel.
func (ks *Set) Add(dst, a, b []float32) {
	n := len(a)
	if n == 0 {
		return
	}
	dst, b = dst[:n], b[:n]
	if f := ks.vec.add; f != nil {
		f(&dst[0], &a[0], &b[0], n)
		return
	}
	for i, v := range a {
		dst[i] = v + b[i]
	}
}

// AddRows accumulates into dst (len ≥ cols) the rows of the rows × cols
// matrix m with row stride ld, in row order: dst += Σ_r m[r, :].
func (ks *Set) AddRows(dst, m []float32, rows, cols, ld int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	if f := ks.vec.addRows; f != nil {
		_ = dst[cols-1]
		_ = m[(rows-1)*ld+cols-1]
		f(&dst[0], &m[0], rows, cols, ld)
		return
	}
	for r := 0; r < rows; r++ {
		ks.Add(dst, dst[:cols], m[r*ld:r*ld+cols])
	}
}
