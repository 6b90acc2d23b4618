//go:build cgo

package main

// #include <stddef.h>
import "C"

import (
	"unsafe"
)

//export vomc_call
func vomc_call(op *C.char, req *C.char, reqLen C.longlong, arrays *unsafe.Pointer, lens *C.longlong, n C.int, id C.longlong) C.longlong {
	var in [][]byte
	if n > 0 {
		ptrs := unsafe.Slice(arrays, int(n))
		ls := unsafe.Slice(lens, int(n))
		in = make([][]byte, n)
		for i := range in {
			if ls[i] > 0 && ptrs[i] != nil {
				in[i] = unsafe.Slice((*byte)(ptrs[i]), int(ls[i]))
			}
		}
	}
	var body []byte
	if reqLen > 0 {
		body = C.GoBytes(unsafe.Pointer(req), C.int(reqLen))
	}
	return C.longlong(calls.run(int64(id), C.GoString(op), body, in))
}

//export vomc_result
func vomc_result(h C.longlong, i C.int, dst unsafe.Pointer, n C.longlong) C.longlong {
	part, ok := calls.part(int64(h), int(i))
	if !ok {
		return -1
	}
	if dst != nil && n > 0 {
		copy(unsafe.Slice((*byte)(dst), int(n)), part)
	}
	return C.longlong(len(part))
}

//export vomc_release
func vomc_release(h C.longlong) { calls.release(int64(h)) }

//export vomc_cancel
func vomc_cancel(id C.longlong) { calls.cancel(int64(id)) }
