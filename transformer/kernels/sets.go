package kernels

import (
	"fmt"
	"os"
	"strings"
)

// A kernel set is one family of kernels for one instruction set: a GEMM
// and the vector operations (exp, softmax and its backward, GELU,
// LayerNorm, add, transpose). The sets, in order of preference:
//
//	avx512   amd64 with AVX-512F (Go assembly, 16-float zmm vectors)
//	avx2     amd64 with AVX2 and FMA (8-float ymm vectors)
//	neon     arm64 (Advanced SIMD, 4-float vectors, 32 registers)
//	portable pure Go, every platform (and every build with -tags purego)
//
// At start-up the engine uses the first set this build and CPU can run,
// unless the environment variable VOMC_KERNELS names another one (for
// tests and benchmarks); a set the CPU lacks is then an error reported by
// EnvError, and the best usable set is used meanwhile. Every set computes
// the same functions; results agree to float32 rounding (each set sums in
// its own order), and within a set they do not depend on the number of
// goroutines.
type set struct {
	name   string
	usable bool   // this build, CPU and OS run it
	why    string // why not, when !usable
	gemm   func(workers int) Kernel
	vec    vectorOps
	tiles  *tiling // the blocking of a tiled GEMM (portable, neon), else nil
}

func (s *set) tiling() *tiling { return s.tiles }

// vectorOps are a set's vector kernels on raw pointers; a nil entry means
// the portable Go version.
type vectorOps struct {
	exp               func(x *float32, n int)
	softmax           func(x *float32, n int, scale float32) (mx, sum float32)
	softmaxBackward   func(p, dp *float32, n int, scale float32)
	scaledExp         func(x *float32, n int, scale, shift float32)
	geluForward       func(out, inp *float32, n int)
	geluBackward      func(dinp, inp, dout *float32, n int)
	add               func(dst, a, b *float32, n int)
	transpose         func(dst *float32, ldd int, src *float32, lds, rows, cols int)
	layernorm         func(out, mean, rstd, inp, w, b *float32, rows, c int, invC, eps float32)
	layernormBackward func(dinp, dw, db, dout, inp, w, mean, rstd *float32, rows, c int, invC float32)
}

// portableSet is the pure-Go set.
var portableSet = &set{name: "portable", usable: true, gemm: func(w int) Kernel { return &Blocked{Workers: w} }, tiles: portableTiling}

// allSets are this build's sets in order of preference (archSets is
// defined per architecture and build tag).
var allSets = append(archSets(), portableSet)

// active is the set in use; vec its vector kernels.
var active, envErr = initialSet()

// vec is the active set's vector kernels (read on every vector call).
var vec = &active.vec

// Default is the GEMM used by the engine unless told otherwise: the active
// set's, parallel over GOMAXPROCS goroutines. Use changes it.
var Default = active.gemm(0)

// EnvVar is the environment variable that overrides the kernel set.
const EnvVar = "VOMC_KERNELS"

func initialSet() (*set, error) {
	best := allSets[0]
	for _, s := range allSets {
		if s.usable {
			best = s
			break
		}
	}
	name := strings.TrimSpace(os.Getenv(EnvVar))
	if name == "" {
		return best, nil
	}
	s, err := lookup(name)
	if err != nil {
		return best, fmt.Errorf("%s=%s: %w", EnvVar, name, err)
	}
	return s, nil
}

// lookup returns the usable set called name.
func lookup(name string) (*set, error) {
	for _, s := range allSets {
		if s.name == name {
			if !s.usable {
				return nil, fmt.Errorf("kernel set %q cannot run here: %s", name, s.why)
			}
			return s, nil
		}
	}
	for _, k := range KnownSets {
		if k == name {
			return nil, fmt.Errorf("kernel set %q is not in this %s", name, buildDesc())
		}
	}
	return nil, fmt.Errorf("unknown kernel set %q (known: %s)", name, strings.Join(KnownSets, ", "))
}

// KnownSets are the names of every kernel set of any build, in order of
// preference.
var KnownSets = []string{"avx512", "avx2", "neon", "portable"}

// SetInfo describes a kernel set of this build.
type SetInfo struct {
	Name   string
	Usable bool   // this CPU and OS run it
	Reason string // why not, when !Usable
}

// Sets lists every kernel set of KnownSets with whether it can run here:
// the sets of other architectures, and all but portable in a purego
// build, are listed as unusable with the reason.
func Sets() []SetInfo {
	var out []SetInfo
	for _, name := range KnownSets {
		info := SetInfo{Name: name, Reason: "not in this " + buildDesc()}
		for _, s := range allSets {
			if s.name == name {
				info.Usable, info.Reason = s.usable, s.why
				if info.Usable {
					info.Reason = ""
				}
			}
		}
		out = append(out, info)
	}
	return out
}

// Active returns the name of the kernel set in use.
func Active() string { return active.name }

// EnvError is non-nil when VOMC_KERNELS names a set that is unknown or
// that this build or CPU cannot run; the best usable set is in use then.
// Programs should report it and stop (vomc does).
func EnvError() error { return envErr }

// Use selects the kernel set called name (one of KnownSets) for the GEMM
// (Default) and the vector kernels. It is an error if this build or CPU
// cannot run it. Use is not safe to call concurrently with kernel calls:
// call it at start-up or between computations (tests and benchmarks).
func Use(name string) error {
	s, err := lookup(name)
	if err != nil {
		return err
	}
	active, vec, Default = s, &s.vec, s.gemm(0)
	envErr = nil
	return nil
}

// GemmOf returns the GEMM of the set called name using up to workers
// goroutines (≤ 0: GOMAXPROCS), or an error if it cannot run here. It
// does not change the active set.
func GemmOf(name string, workers int) (Kernel, error) {
	s, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return s.gemm(workers), nil
}

// Best returns the GEMM of the best usable set (parallel over GOMAXPROCS).
func Best() Kernel {
	for _, s := range allSets {
		if s.usable {
			return s.gemm(0)
		}
	}
	return portableSet.gemm(0)
}

// ScratchBytes estimates the packing memory the active set's GEMM keeps
// per call when it runs on workers goroutines: the tiled kernels
// (portable, neon) pool one mc·kc + kc·nc panel pair per goroutine; the
// AVX kernels pack at most a block of op(B) and row panels of A per part,
// bounded here by 1 MiB per goroutine.
func ScratchBytes(workers int) int64 {
	if workers < 1 {
		workers = 1
	}
	per := int64(1 << 20)
	if t := active.tiling(); t != nil {
		per = int64(4 * (t.mc*t.kc + t.kc*t.nc))
	}
	return int64(workers) * per
}
