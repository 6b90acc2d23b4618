package main

import (
	"bytes"
	"fmt"
	"io"
	"unsafe"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// array returns arrays[i] after checking that it holds want bytes; what
// names it in the error.
func array(arrays [][]byte, i int, want int64, what string) ([]byte, error) {
	if i >= len(arrays) {
		return nil, fmt.Errorf("vomc: %s: missing (argument %d)", what, i)
	}
	if int64(len(arrays[i])) != want {
		return nil, fmt.Errorf("vomc: %s: %d bytes, want %d", what, len(arrays[i]), want)
	}
	return arrays[i], nil
}

// float64s views b (8-byte aligned, the caller's float64 array) as
// float64 values.
func float64s(b []byte) ([]float64, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		return nil, fmt.Errorf("vomc: a float64 array is not aligned")
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8), nil
}

// float32s views b (4-byte aligned) as float32 values.
func float32s(b []byte) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil, fmt.Errorf("vomc: a float32 array is not aligned")
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4), nil
}

// windowsOf cuts the W·N symbols of arrays[i] into W windows of N and
// checks every symbol against the alphabet size A.
func windowsOf(arrays [][]byte, i, W, N, A int, what string) ([][]byte, error) {
	if W < 1 || N < 1 {
		return nil, fmt.Errorf("vomc: %s: %d windows of %d symbols (want at least one of at least one)", what, W, N)
	}
	b, err := array(arrays, i, int64(W)*int64(N), what)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, W)
	for w := range out {
		out[w] = b[w*N : (w+1)*N : (w+1)*N]
		for t, a := range out[w] {
			if int(a) >= A {
				return nil, fmt.Errorf("vomc: %s: window %d position %d: symbol %d outside the alphabet 0..%d", what, w, t, a, A-1)
			}
		}
	}
	return out, nil
}
