//go:build linux && (amd64 || arm64)

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CUDA driver API, loaded from libcuda.so.1 at run time (purego: no
// cgo). Every function returns a CUresult (0 = success).
var cu struct {
	once sync.Once
	err  error

	Init                    func(flags uint32) int32
	DeviceGetCount          func(n *int32) int32
	DeviceGet               func(dev *int32, ordinal int32) int32
	DeviceGetName           func(name *byte, n int32, dev int32) int32
	DevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	DevicePrimaryCtxRelease func(dev int32) int32
	CtxSetCurrent           func(ctx uintptr) int32
	CtxSynchronize          func() int32
	ModuleLoadDataEx        func(mod *uintptr, image unsafe.Pointer, nopt uint32, opts unsafe.Pointer, vals unsafe.Pointer) int32
	ModuleUnload            func(mod uintptr) int32
	ModuleGetFunction       func(f *uintptr, mod uintptr, name string) int32
	LaunchKernel            func(f uintptr, gx, gy, gz, bx, by, bz, shmem uint32, stream uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32
	MemAlloc                func(p *uint64, bytes uint64) int32
	MemFree                 func(p uint64) int32
	MemcpyHtoD              func(dst uint64, src unsafe.Pointer, bytes uint64) int32
	MemcpyDtoH              func(dst unsafe.Pointer, src uint64, bytes uint64) int32
	MemcpyDtoD              func(dst, src uint64, bytes uint64) int32
	MemsetD32               func(dst uint64, v uint32, n uint64) int32
	MemsetD8                func(dst uint64, v uint8, n uint64) int32
	MemGetInfo              func(free, total *uint64) int32
	GetErrorName            func(res int32, s **byte) int32
	GetErrorString          func(res int32, s **byte) int32
}

// loadDriver loads libcuda.so.1 and its functions once.
func loadDriver() error {
	cu.once.Do(func() {
		lib, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			cu.err = fmt.Errorf("cuda: cannot load the NVIDIA driver library libcuda.so.1 (is the NVIDIA driver installed?): %v", err)
			return
		}
		defer func() {
			if r := recover(); r != nil { // RegisterLibFunc panics on a missing symbol
				cu.err = fmt.Errorf("cuda: the NVIDIA driver library lacks a function vomc needs (driver too old?): %v", r)
			}
		}()
		reg := func(fp any, name string) { purego.RegisterLibFunc(fp, lib, name) }
		reg(&cu.Init, "cuInit")
		reg(&cu.DeviceGetCount, "cuDeviceGetCount")
		reg(&cu.DeviceGet, "cuDeviceGet")
		reg(&cu.DeviceGetName, "cuDeviceGetName")
		reg(&cu.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
		reg(&cu.DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
		reg(&cu.CtxSetCurrent, "cuCtxSetCurrent")
		reg(&cu.CtxSynchronize, "cuCtxSynchronize")
		reg(&cu.ModuleLoadDataEx, "cuModuleLoadDataEx")
		reg(&cu.ModuleUnload, "cuModuleUnload")
		reg(&cu.ModuleGetFunction, "cuModuleGetFunction")
		reg(&cu.LaunchKernel, "cuLaunchKernel")
		reg(&cu.MemAlloc, "cuMemAlloc_v2")
		reg(&cu.MemFree, "cuMemFree_v2")
		reg(&cu.MemcpyHtoD, "cuMemcpyHtoD_v2")
		reg(&cu.MemcpyDtoH, "cuMemcpyDtoH_v2")
		reg(&cu.MemcpyDtoD, "cuMemcpyDtoD_v2")
		reg(&cu.MemsetD32, "cuMemsetD32_v2")
		reg(&cu.MemsetD8, "cuMemsetD8_v2")
		reg(&cu.MemGetInfo, "cuMemGetInfo_v2")
		reg(&cu.GetErrorName, "cuGetErrorName")
		reg(&cu.GetErrorString, "cuGetErrorString")
		if r := cu.Init(0); r != 0 {
			cu.err = fmt.Errorf("cuda: cuInit: %v", cuErr(r))
		}
	})
	return cu.err
}

// cudaOOM is CUDA_ERROR_OUT_OF_MEMORY.
const cudaOOM = 2

// cuError is a CUresult.
type cuError int32

func (e cuError) Error() string {
	name, desc := "CUDA error", ""
	if cu.GetErrorName != nil {
		var s *byte
		if cu.GetErrorName(int32(e), &s) == 0 {
			name = cString(s)
		}
		if cu.GetErrorString(int32(e), &s) == 0 {
			desc = cString(s)
		}
	}
	if desc != "" {
		return fmt.Sprintf("%s (%d): %s", name, int32(e), desc)
	}
	return fmt.Sprintf("%s %d", name, int32(e))
}

func cuErr(r int32) error {
	if r == 0 {
		return nil
	}
	if r == cudaOOM {
		return fmt.Errorf("%w: %v", errDeviceOOM, cuError(r))
	}
	return cuError(r)
}

// cString copies the NUL-terminated C string at p (driver-owned static
// strings).
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for i := 0; i < 4096; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b.WriteByte(c)
	}
	return b.String()
}

// libcuda is the driver on one device's primary context with the
// kernels' module loaded.
type libcuda struct {
	dev  int32
	ctx  uintptr
	mod  uintptr
	name string
}

func openDriver(ordinal int) (driver, error) {
	if err := loadDriver(); err != nil {
		return nil, err
	}
	var n int32
	if r := cu.DeviceGetCount(&n); r != 0 {
		return nil, fmt.Errorf("cuda: cuDeviceGetCount: %v", cuErr(r))
	}
	if ordinal < 0 || int(n) <= ordinal {
		return nil, fmt.Errorf("cuda: device %d asked for, %d CUDA devices present", ordinal, n)
	}
	d := &libcuda{}
	if r := cu.DeviceGet(&d.dev, int32(ordinal)); r != 0 {
		return nil, fmt.Errorf("cuda: cuDeviceGet(%d): %v", ordinal, cuErr(r))
	}
	nameBuf := make([]byte, 256)
	if r := cu.DeviceGetName(&nameBuf[0], int32(len(nameBuf)), d.dev); r == 0 {
		d.name = strings.TrimRight(string(nameBuf[:clen(nameBuf)]), " ")
	} else {
		d.name = fmt.Sprintf("device %d", ordinal)
	}
	if r := cu.DevicePrimaryCtxRetain(&d.ctx, d.dev); r != 0 {
		return nil, fmt.Errorf("cuda: %s: cuDevicePrimaryCtxRetain: %v", d.name, cuErr(r))
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := cu.CtxSetCurrent(d.ctx); r != 0 {
		cu.DevicePrimaryCtxRelease(d.dev)
		return nil, fmt.Errorf("cuda: %s: cuCtxSetCurrent: %v", d.name, cuErr(r))
	}
	if err := d.loadModule(); err != nil {
		cu.CtxSetCurrent(0)
		cu.DevicePrimaryCtxRelease(d.dev)
		return nil, err
	}
	cu.CtxSetCurrent(0)
	return d, nil
}

func clen(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// loadModule JIT-compiles the embedded PTX, reporting the JIT's log on
// failure.
func (d *libcuda) loadModule() error {
	image := append([]byte(ptxSource()), 0)
	logBuf := make([]byte, 16384)
	// CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
	opts := []int32{5, 6}
	vals := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
	var pin runtime.Pinner
	pin.Pin(&logBuf[0])
	pin.Pin(&image[0])
	pin.Pin(&opts[0])
	pin.Pin(&vals[0])
	defer pin.Unpin()
	r := cu.ModuleLoadDataEx(&d.mod, unsafe.Pointer(&image[0]), uint32(len(opts)), unsafe.Pointer(&opts[0]), unsafe.Pointer(&vals[0]))
	if r != 0 {
		return fmt.Errorf("cuda: %s: loading the kernels (PTX for compute capability 7.0, JIT-compiled by the driver): %v\n%s", d.name, cuErr(r), logBuf[:clen(logBuf)])
	}
	return nil
}

func (d *libcuda) device() string { return d.name }

func (d *libcuda) enter() error {
	if r := cu.CtxSetCurrent(d.ctx); r != 0 {
		return fmt.Errorf("cuCtxSetCurrent: %w", cuErr(r))
	}
	return nil
}

func (d *libcuda) exit() {}

func (d *libcuda) alloc(bytes uint64) (uint64, error) {
	var p uint64
	if r := cu.MemAlloc(&p, bytes); r != 0 {
		return 0, cuErr(r)
	}
	return p, nil
}

func (d *libcuda) free(p uint64) error { return cuErr(cu.MemFree(p)) }

func (d *libcuda) htod(dst uint64, src unsafe.Pointer, bytes uint64) error {
	return cuErr(cu.MemcpyHtoD(dst, src, bytes))
}

func (d *libcuda) dtoh(dst unsafe.Pointer, src uint64, bytes uint64) error {
	return cuErr(cu.MemcpyDtoH(dst, src, bytes))
}

func (d *libcuda) dtod(dst, src uint64, bytes uint64) error {
	return cuErr(cu.MemcpyDtoD(dst, src, bytes))
}

func (d *libcuda) memset32(dst uint64, v uint32, n uint64) error {
	return cuErr(cu.MemsetD32(dst, v, n))
}

func (d *libcuda) memset8(dst uint64, v uint8, n uint64) error { return cuErr(cu.MemsetD8(dst, v, n)) }

func (d *libcuda) function(name string) (kernel, error) {
	var f uintptr
	if r := cu.ModuleGetFunction(&f, d.mod, name); r != 0 {
		return kernel{}, cuErr(r)
	}
	return kernel{name: name, h: f}, nil
}

func (d *libcuda) launch(k kernel, grid, block [3]uint32, params unsafe.Pointer, kinds string) error {
	r := cu.LaunchKernel(k.h, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, 0, params, nil)
	if r != 0 {
		return fmt.Errorf("launch of %s (grid %v, block %v): %w", k.name, grid, block, cuErr(r))
	}
	return nil
}

func (d *libcuda) sync() error { return cuErr(cu.CtxSynchronize()) }

func (d *libcuda) memInfo() (free, total uint64, err error) {
	err = cuErr(cu.MemGetInfo(&free, &total))
	return free, total, err
}

func (d *libcuda) close() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var errs []error
	if r := cu.CtxSetCurrent(d.ctx); r != 0 {
		errs = append(errs, cuErr(r))
	}
	if d.mod != 0 {
		if r := cu.ModuleUnload(d.mod); r != 0 {
			errs = append(errs, cuErr(r))
		}
		d.mod = 0
	}
	cu.CtxSetCurrent(0)
	if r := cu.DevicePrimaryCtxRelease(d.dev); r != 0 {
		errs = append(errs, cuErr(r))
	}
	return errors.Join(errs...)
}
