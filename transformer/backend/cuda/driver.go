package cuda

import (
	"errors"
	"unsafe"
)

// driver is what the backend needs of the CUDA driver API: device memory,
// copies, kernel launches. libcuda (driver_linux.go) is the NVIDIA driver
// loaded at run time; the tests also run the backend on an emulator that
// executes kernels.cu on the CPU (emu_test.go).
type driver interface {
	// device names the device.
	device() string
	// enter makes the driver's context current on the calling OS thread
	// (the backend has locked its goroutine to it); exit undoes enter.
	enter() error
	exit()
	// alloc returns bytes > 0 of device memory (not zeroed), or an error
	// wrapping errDeviceOOM when the device cannot hold it.
	alloc(bytes uint64) (uint64, error)
	free(ptr uint64) error
	htod(dst uint64, src unsafe.Pointer, bytes uint64) error
	dtoh(dst unsafe.Pointer, src uint64, bytes uint64) error
	dtod(dst, src uint64, bytes uint64) error
	memset32(dst uint64, v uint32, n uint64) error
	memset8(dst uint64, v uint8, n uint64) error
	// function returns the kernel named name.
	function(name string) (kernel, error)
	// launch runs k on grid × block threads with the argument values
	// whose addresses are in params (kinds: one letter per argument, p
	// pointer, i int32, l int64, f float32, d float64).
	launch(k kernel, grid, block [3]uint32, params unsafe.Pointer, kinds string) error
	// memInfo is the device's free and total memory in bytes.
	memInfo() (free, total uint64, err error)
	// sync waits for every launched kernel.
	sync() error
	// close releases the context and the module.
	close() error
}

// kernel is a driver's handle of a kernel function.
type kernel struct {
	name string
	h    uintptr
}

// errDeviceOOM is the driver's out-of-memory result.
var errDeviceOOM = errors.New("device out of memory")

// maxArgs is the most arguments a kernel takes.
const maxArgs = 16

// params is the argument block of a launch: vals holds each argument's
// value, ptrs each value's address (the driver's kernelParams). It is
// allocated once per backend on the Go heap (which does not move
// objects) and holds no Go pointers, only addresses as uintptr; the
// driver reads it during the launch call alone.
type params struct {
	vals [maxArgs]uint64
	ptrs [maxArgs]uintptr
}
