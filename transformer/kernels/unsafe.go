package kernels

import "unsafe"

// unsafeSlice returns the n floats starting at p.
func unsafeSlice(p *float32, n int) []float32 { return unsafe.Slice(p, n) }
