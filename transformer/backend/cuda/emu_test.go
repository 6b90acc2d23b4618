//go:build linux && (amd64 || arm64)

package cuda

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/backendtest"
)

// The emulator: kernels.cu compiled for the CPU with testdata/emu/emu.h
// into a shared library that stands in for the driver, so the backend —
// its Go code and every kernel's arithmetic, indexing and barriers — is
// tested on machines without a GPU (CI). It needs g++; without it the
// tests are skipped.

var emuLib struct {
	once sync.Once
	err  error
	skip string

	launch    func(name string, gx, gy, gz, bx, by, bz uint32, params unsafe.Pointer) int32
	signature func(name string, out *byte, n int32) int32
	malloc    func(n uintptr) uintptr
	free      func(p uintptr)
	memcpyHD  func(dst uintptr, src unsafe.Pointer, n uintptr)
	memcpyDH  func(dst unsafe.Pointer, src uintptr, n uintptr)
	memcpyDD  func(dst, src uintptr, n uintptr)
	memset32  func(dst uintptr, v uint32, n uintptr)
	memset8   func(dst uintptr, v uint8, n uintptr)
}

var kernelName = regexp.MustCompile(`extern "C" +void +(k_\w+) *\(`)

// buildEmu loads the emulator library once per test process: built by
// g++, or from the user's cache directory (emuCached).
func buildEmu(t *testing.T) {
	emuLib.once.Do(func() { emuLib.skip, emuLib.err = loadEmu() })
	if emuLib.skip != "" {
		t.Skip(emuLib.skip)
	}
	if emuLib.err != nil {
		t.Fatal(emuLib.err)
	}
}

// emuFlags are g++'s flags for the library besides the paths.
var emuFlags = []string{"-std=c++17", "-O2", "-shared", "-fPIC", "-DVOMC_EMU"}

// loadEmu builds (or finds) the emulator library and binds its functions;
// skip says why the emulator cannot be built here.
func loadEmu() (skip string, err error) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		return "no g++ to build the CUDA emulator (apt-get install g++)", nil
	}
	dir, err := os.MkdirTemp("", "vomc-cudaemu")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir) // the library stays mapped once opened
	src, _ := filepath.Abs("kernels.cu")
	inc, _ := filepath.Abs("testdata/emu")
	// the kernels' names, from the preprocessed source (macros expanded)
	pre, err := exec.Command(gxx, "-E", "-x", "c++", "-std=c++17", "-DVOMC_EMU", "-I", inc, src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("g++ -E kernels.cu: %v\n%s", err, pre)
	}
	seen := map[string]bool{}
	for _, m := range kernelName.FindAllStringSubmatch(string(pre), -1) {
		seen[m[1]] = true
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	var reg strings.Builder
	for _, n := range names {
		fmt.Fprintf(&reg, "REG(%s)\n", n)
	}
	if err := os.WriteFile(filepath.Join(dir, "registry.inc"), []byte(reg.String()), 0o644); err != nil {
		return "", err
	}
	args := append(append([]string(nil), emuFlags...), fmt.Sprintf("-DKERNELS_CU=%q", src), "-I", inc, "-I", dir, filepath.Join(inc, "emu_main.cpp"))
	so, err := emuCached(gxx, args, dir, func(out string) error {
		if b, err := exec.Command(gxx, append(args, "-o", out)...).CombinedOutput(); err != nil {
			return fmt.Errorf("building the CUDA emulator: %v\n%s", err, b)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	lib, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return "", err
	}
	purego.RegisterLibFunc(&emuLib.launch, lib, "emu_launch")
	purego.RegisterLibFunc(&emuLib.signature, lib, "emu_signature")
	purego.RegisterLibFunc(&emuLib.malloc, lib, "emu_malloc")
	purego.RegisterLibFunc(&emuLib.free, lib, "emu_free")
	purego.RegisterLibFunc(&emuLib.memcpyHD, lib, "emu_memcpy")
	purego.RegisterLibFunc(&emuLib.memcpyDH, lib, "emu_memcpy")
	purego.RegisterLibFunc(&emuLib.memcpyDD, lib, "emu_memcpy")
	purego.RegisterLibFunc(&emuLib.memset32, lib, "emu_memset32")
	purego.RegisterLibFunc(&emuLib.memset8, lib, "emu_memset8")
	return "", nil
}

// emuCached returns the path of the library that build writes: in the
// user's cache directory (vomc/cuda-emulator), where a library that the
// same g++ built from the same translation unit — preprocessed without
// line markers, so the same in every checkout — is taken as it is (g++
// takes about 2 s of CPU for it, as long as the emulator's -short tests);
// without a cache directory, in tmp. A miss removes the cache's libraries
// unused for 30 days.
func emuCached(gxx string, args []string, tmp string, build func(out string) error) (string, error) {
	cache, err := os.UserCacheDir()
	if err == nil {
		cache = filepath.Join(cache, "vomc", "cuda-emulator")
		err = os.MkdirAll(cache, 0o755)
	}
	unit, err2 := exec.Command(gxx, append([]string{"-E", "-P"}, args...)...).Output()
	if err != nil || err2 != nil { // no cache, or an error the build will report
		so := filepath.Join(tmp, "libvomccudaemu.so")
		return so, build(so)
	}
	version, _ := exec.Command(gxx, "--version").Output()
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%q\x00", version, emuFlags)
	h.Write(unit)
	so := filepath.Join(cache, fmt.Sprintf("libvomccudaemu-%x.so", h.Sum(nil)[:16]))
	now := time.Now()
	if _, err := os.Stat(so); err == nil {
		os.Chtimes(so, now, now) // used: kept by the pruning
		return so, nil
	}
	old, _ := filepath.Glob(filepath.Join(cache, "*.so"))
	for _, f := range old {
		if st, err := os.Stat(f); err == nil && now.Sub(st.ModTime()) > 30*24*time.Hour {
			os.Remove(f)
		}
	}
	f, err := os.CreateTemp(cache, "partial-*.so")
	if err != nil {
		return "", err
	}
	f.Close()
	if err := build(f.Name()); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return so, os.Rename(f.Name(), so)
}

// emuDriver is the driver interface on the emulator: host memory, kernels
// run on the CPU. It checks each launch's argument kinds against the
// kernel's C++ signature.
type emuDriver struct {
	sigs   map[string]string
	closed bool
}

func newEmuBackend(t *testing.T) (*Backend, error) {
	buildEmu(t)
	return newBackend(&emuDriver{sigs: map[string]string{}})
}

// emuBackend is a backend on the emulator, closed when the test ends.
func emuBackend(t *testing.T) *Backend {
	t.Helper()
	be, err := newEmuBackend(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

func (d *emuDriver) device() string { return "emulator" }
func (d *emuDriver) enter() error   { return nil }
func (d *emuDriver) exit()          {}

func (d *emuDriver) alloc(bytes uint64) (uint64, error) {
	if bytes > 1<<40 {
		return 0, errDeviceOOM
	}
	p := emuLib.malloc(uintptr(bytes))
	if p == 0 {
		return 0, errDeviceOOM
	}
	return uint64(p), nil
}

func (d *emuDriver) free(p uint64) error { emuLib.free(uintptr(p)); return nil }

func (d *emuDriver) htod(dst uint64, src unsafe.Pointer, n uint64) error {
	emuLib.memcpyHD(uintptr(dst), src, uintptr(n))
	return nil
}

func (d *emuDriver) dtoh(dst unsafe.Pointer, src uint64, n uint64) error {
	emuLib.memcpyDH(dst, uintptr(src), uintptr(n))
	return nil
}

func (d *emuDriver) dtod(dst, src uint64, n uint64) error {
	emuLib.memcpyDD(uintptr(dst), uintptr(src), uintptr(n))
	return nil
}

func (d *emuDriver) memset32(dst uint64, v uint32, n uint64) error {
	emuLib.memset32(uintptr(dst), v, uintptr(n))
	return nil
}

func (d *emuDriver) memset8(dst uint64, v uint8, n uint64) error {
	emuLib.memset8(uintptr(dst), v, uintptr(n))
	return nil
}

func (d *emuDriver) function(name string) (kernel, error) {
	buf := make([]byte, 64)
	if emuLib.signature(name, &buf[0], int32(len(buf))) != 0 {
		return kernel{}, fmt.Errorf("no kernel %s in kernels.cu", name)
	}
	d.sigs[name] = string(buf[:clenBytes(buf)])
	return kernel{name: name}, nil
}

func clenBytes(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

func (d *emuDriver) launch(k kernel, grid, block [3]uint32, params unsafe.Pointer, kinds string) error {
	if want := d.sigs[k.name]; want != kinds {
		return fmt.Errorf("kernel %s takes arguments %q, launched with %q", k.name, want, kinds)
	}
	if r := emuLib.launch(k.name, grid[0], grid[1], grid[2], block[0], block[1], block[2], params); r != 0 {
		if r == 3 {
			return fmt.Errorf("emulator: launch of %s (grid %v, block %v): barrier divergence (see stderr)", k.name, grid, block)
		}
		return fmt.Errorf("emulator: launch of %s failed (%d)", k.name, r)
	}
	return nil
}

func (d *emuDriver) sync() error { return nil }

func (d *emuDriver) memInfo() (free, total uint64, err error) { return 1 << 36, 1 << 36, nil }
func (d *emuDriver) close() error                             { d.closed = true; return nil }

// TestEmulatorConformance runs the backend conformance suite on the
// emulated device.
func TestEmulatorConformance(t *testing.T) {
	backendtest.Run(t, func() (backend.Backend, error) { return newEmuBackend(t) })
}

// TestEmulatorTraining: losses of training steps on the emulated device
// equal the CPU backend's to float32 tolerance.
func TestEmulatorTraining(t *testing.T) {
	be := emuBackend(t)
	small := transformer.DefaultConfig(2, 2, 16, 24, 3)
	noff := small
	noff.FeedForward, noff.LayerNorm = false, false
	sin := small
	sin.Positional, sin.Activation, sin.Heads = transformer.Sinusoidal, transformer.ReLU, []int{1, 4}
	compareTraining(t, be, 8, 1e-4, []transformer.Config{small, noff, sin}, 4)
}

// TestEmulatorHeadSizeLimit: a model whose head size the kernels cannot
// run is refused when it is made, not at its first step.
func TestEmulatorHeadSizeLimit(t *testing.T) {
	be := emuBackend(t)
	cfg := transformer.DefaultConfig(2, 1, 256, 8, 3)
	cfg.Heads = []int{2, 1}
	if m, err := transformer.NewOn(be, cfg, 1); err == nil || !strings.Contains(err.Error(), "layer 2's head size 256") {
		t.Fatalf("NewOn with head size 256: %v, %v; want an error naming layer 2's head size", m, err)
	}
	cfg.Heads = []int{2, 2}
	m, err := transformer.NewOn(be, cfg, 1)
	if err != nil {
		t.Fatalf("head size 128: %v", err)
	}
	m.Free()
}
