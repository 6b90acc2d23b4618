//go:build linux

package kernels

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// guarded returns n floats that end exactly at a page the process may not
// touch (PROT_NONE), so that reading or writing one float past them
// faults; free unmaps them.
func guarded(t *testing.T, n int) (x []float32, free func()) {
	t.Helper()
	page := syscall.Getpagesize()
	size := (4*n+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	if err := syscall.Mprotect(mem[size-page:], syscall.PROT_NONE); err != nil {
		syscall.Munmap(mem)
		t.Skipf("mprotect: %v", err)
	}
	end := size - page
	x = unsafe.Slice((*float32)(unsafe.Pointer(&mem[end-4*n])), n)
	return x, func() { syscall.Munmap(mem) }
}

// TestAttentionHead16Bounds runs the fused kernels with every row buffer
// ending exactly at an inaccessible page: a load or store past the last
// row of q, k, v, out, dout, dq, dk or dv faults (the test binary dies).
func TestAttentionHead16Bounds(t *testing.T) {
	ks := Best()
	if !ks.HasAttention16() {
		t.Skipf("kernel set %s has no fused attention", ks.Name())
	}
	r := rand.New(rand.NewPCG(9, 9))
	for T := 1; T <= 40; T++ {
		for _, ld := range []int{16, 48} {
			ldo := 64 - ld // the other stride for out and dout
			n, no := (T-1)*ld+16, (T-1)*ldo+16
			var frees []func()
			buf := func(n int) []float32 {
				x, free := guarded(t, n)
				frees = append(frees, free)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				return x
			}
			q, k, v, dq, dk, dv := buf(n), buf(n), buf(n), buf(n), buf(n), buf(n)
			out, dout, lse := buf(no), buf(no), buf(T)
			scratch := make([]float32, Attention16Scratch(T))
			ks.AttentionHead16Forward(out, ldo, lse, q, k, v, ld, T, 0.25, scratch)
			ks.AttentionHead16Backward(dq, dk, dv, dout, ldo, q, k, v, ld, lse, T, 0.25, scratch)
			for _, f := range frees {
				f()
			}
		}
	}
}
