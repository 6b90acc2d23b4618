package kernels

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// A Set is one family of kernels for one instruction set: a GEMM and
// the vector operations (exp, softmax and its backward, GELU, LayerNorm,
// add, transpose). The sets, in order of preference:
//
//	avx512   amd64 with AVX-512F (Go assembly, 16-float zmm vectors)
//	avx2     amd64 with AVX2 and FMA (8-float ymm vectors)
//	neon     arm64 (Advanced SIMD, 4-float vectors, 32 registers)
//	portable pure Go, every platform (and every build with -tags purego)
//
// A Set is a value that the caller chooses once and passes down (the CPU
// backend keeps one as a field): Lookup gives a set by name, Best the
// first one this build and CPU can run, FromEnv the one the environment
// variable VOMC_KERNELS names (for tests and benchmarks). Every set
// computes the same functions; results agree to float32 rounding (each
// set sums in its own order), and within a set they do not depend on the
// number of goroutines. Sets are immutable and safe for concurrent use.
type Set struct {
	name   string
	usable bool   // this build, CPU and OS run it
	why    string // why not, when !usable
	gemm   func(workers int) Kernel
	vec    vectorOps
	tiles  *tiling // the blocking of a tiled GEMM (portable, neon), else nil
}

func (s *Set) tiling() *tiling { return s.tiles }

// Name is the set's name, one of KnownSets.
func (s *Set) Name() string { return s.name }

// GEMM returns the set's GEMM using up to workers goroutines (≤ 0:
// GOMAXPROCS at each call). Its results do not depend on workers.
func (s *Set) GEMM(workers int) Kernel { return s.gemm(workers) }

// vectorOps are a set's vector kernels on raw pointers; a nil entry means
// the portable Go version.
type vectorOps struct {
	exp               func(x *float32, n int)
	softmax           func(x *float32, n int, scale float32) (mx, sum float32)
	softmaxBackward   func(p, dp *float32, n int, scale float32)
	scaledExp         func(x *float32, n int, scale, shift float32)
	geluForward       func(out, inp *float32, n int)
	geluBackward      func(dinp, inp, dout *float32, n int)
	geluBackwardSet   func(dinp, inp, dout *float32, n int) // nil: clear, then geluBackward
	add               func(dst, a, b *float32, n int)
	addRows           func(dst, m *float32, rows, cols, ld int) // nil: add row after row
	transpose         func(dst *float32, ldd int, src *float32, lds, rows, cols int)
	layernorm         func(out, mean, rstd, inp, w, b *float32, rows, c int, invC, eps float32)
	layernormBackward func(dinp, dw, db, dout, inp, w, mean, rstd *float32, rows, c int, invC float32)
	// the fused attention of head size 16 (attention16.go: attn16Forward
	// and attn16Backward, the AVX-512 kernels; called directly, not
	// through a func value, so that their argument block stays on the
	// stack)
	attn16 bool
}

// portableSet is the pure-Go set.
var portableSet = &Set{name: "portable", usable: true, gemm: func(w int) Kernel { return &Blocked{Workers: w} }, tiles: portableTiling}

// allSets are this build's sets in order of preference (archSets is
// defined per architecture and build tag).
var allSets = append(archSets(), portableSet)

// EnvVar is the environment variable that overrides the kernel set.
const EnvVar = "VOMC_KERNELS"

// Best returns the first set of KnownSets that this build and CPU can run
// (portable when no other can).
func Best() *Set {
	for _, s := range allSets {
		if s.usable {
			return s
		}
	}
	return portableSet
}

// FromEnv returns the set named by the environment variable VOMC_KERNELS,
// read now, or Best when it is unset or empty. A name that is unknown, or
// that this build or CPU cannot run, is an error; Best is returned with
// it. Programs call it once at the top (or use Default) and pass the set
// down.
func FromEnv() (*Set, error) {
	name := strings.TrimSpace(os.Getenv(EnvVar))
	if name == "" {
		return Best(), nil
	}
	s, err := Lookup(name)
	if err != nil {
		return Best(), fmt.Errorf("%s=%s: %w", EnvVar, name, err)
	}
	return s, nil
}

// startup is FromEnv at the first call of Default or EnvError.
var startup = sync.OnceValues(FromEnv)

// Default is the set FromEnv gave at its first call in this process (the
// environment is read once): the set of callers that are not given one,
// such as cpu.NewDefault. It never changes.
func Default() *Set {
	s, _ := startup()
	return s
}

// EnvError is non-nil when VOMC_KERNELS named, at the first call of
// Default or EnvError, a set that is unknown or that this build or CPU
// cannot run; Default is Best then. Programs should report it and stop
// (vomc does).
func EnvError() error {
	_, err := startup()
	return err
}

// Active returns the name of Default.
func Active() string { return Default().name }

// Lookup returns the set called name, or an error if it is unknown or this
// build or CPU cannot run it.
func Lookup(name string) (*Set, error) {
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

// Usable returns the sets this build and CPU can run, in order of
// preference (tests and benchmarks iterate them).
func Usable() []*Set {
	var out []*Set
	for _, s := range allSets {
		if s.usable {
			out = append(out, s)
		}
	}
	return out
}

// ScratchBytes estimates the packing memory the set's GEMM keeps per call
// when it runs on workers goroutines: the tiled kernels (portable, neon)
// pool one mc·kc + kc·nc panel pair per goroutine; the AVX kernels pack at
// most a block of op(B) and row panels of A per part, bounded here by 1
// MiB per goroutine.
func (s *Set) ScratchBytes(workers int) int64 {
	if workers < 1 {
		workers = 1
	}
	per := int64(1 << 20)
	if t := s.tiling(); t != nil {
		per = int64(4 * (t.mc*t.kc + t.kc*t.nc))
	}
	return int64(workers) * per
}
