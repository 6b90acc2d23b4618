//go:build ignore

// gelugen writes the AVX-512 GELU kernels (gelu.go):
//
//	go run gelugen.go -o gelu_avx512_amd64.s
//
// (without -o it writes to standard output; TestGeneratedAsmCurrent checks
// that the file is what the generator writes now).
//
// Φ(x) = ½(1 + erf(x/√2)) from Abramowitz & Stegun 7.1.26, as phi32 in
// gelu.go: for z = |x|/√2, t = 1/(1 + p·z), erfc(z) ≈ t·(a1 + t·(a2 + … +
// t·a5))·e^−z² (|error| ≤ 1.4e-7), q = Φ(−|x|) = ½·erfc(z), Φ(x) = 1 − q
// for x ≥ 0 and q for x < 0; φ(x) = e^−z²/√(2π) reuses the exponential.
// The kernels differ from phi32 in how they evaluate it: t by VRCP14PS and
// one Newton step (≤ 1 ulp from the quotient), e^−z² as 2^(−z²·log₂e) with
// the degree-6 polynomial of the fused attention (≈ 1.3 ulp), and z capped
// at 1e4 (Φ is 0 or 1 to float32 precision far below that; the cap keeps
// the Newton step finite for |x| = ∞).
//
// Each loop turn does two vectors of 16 values, their instructions
// interleaved (each value's chain of dependent operations is long: the
// reciprocal, the polynomial in t, the exponential), then one more vector
// when the count of whole vectors is odd, then the masked tail.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

var out strings.Builder

func emit(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

// Constant registers.
const (
	rSign   = "Z31" // sign bit
	rOne    = "Z30" // 1
	rHalf   = "Z29" // ½
	rInvS2  = "Z28" // 1/√2
	rP      = "Z27" // p
	rCap    = "Z26" // 1e4
	rNL2e   = "Z25" // −log₂e
	rInvS2P = "Z24" // 1/√(2π)
)

// rA are a1..a5 (Z19..Z23), rC c1..c6 of 2^r (Z13..Z18).
var rA = [5]string{"Z19", "Z20", "Z21", "Z22", "Z23"}
var rC = [6]string{"Z13", "Z14", "Z15", "Z16", "Z17", "Z18"}

// The constants as float32 bit patterns (A&S 7.1.26, gelu.go's erfP and
// erfA1..erfA5; the 2^r polynomial of attngen.go's exp2Poly, a copy that
// TestAttn16Exp2Poly checks).
var (
	bitsA   = [5]uint32{0x3e827906, 0xbe91a98e, 0x3fb5f0e3, 0xbfba00e3, 0x3f87dc22}
	bitsC   = [6]uint32{0x3f317218, 0x3e75fdee, 0x3d635774, 0x3c1d96a7, 0x3aaf9f24, 0x3920fdc7}
	consts  = map[string]uint32{rSign: 0x80000000, rOne: 0x3f800000, rHalf: 0x3f000000, rInvS2: 0x3f3504f3, rP: 0x3ea7ba05, rCap: 0x461c4000, rNL2e: 0xbfb8aa3b, rInvS2P: 0x3ecc422a}
	constOr = []string{rSign, rOne, rHalf, rInvS2, rP, rCap, rNL2e, rInvS2P}
)

// slot is one vector's registers: x the input, a..d temporaries, r the
// result, k the mask of negative x.
type slot struct{ x, a, b, c, d, r, k string }

var slots = [2]slot{
	{"Z0", "Z1", "Z2", "Z3", "Z4", "Z5", "K2"},
	{"Z6", "Z7", "Z8", "Z9", "Z10", "Z11", "K3"},
}

// phi returns the instructions that set s.r = Φ(s.x) and s.a = e^(−x²/2)
// (the exponential, for φ).
func phi(s slot) []string {
	var l []string
	e := func(format string, args ...any) { l = append(l, fmt.Sprintf("\t"+format, args...)) }
	e("VPANDND %s, %s, %s", s.x, rSign, s.a) // |x|
	e("VMULPS %s, %s, %s", rInvS2, s.a, s.a) // z
	e("VMINPS %s, %s, %s", rCap, s.a, s.a)   // z ≤ 1e4
	e("VMOVAPS %s, %s", rOne, s.b)
	e("VFMADD231PS %s, %s, %s", rP, s.a, s.b) // 1 + p·z
	e("VRCP14PS %s, %s", s.b, s.c)            // t₀ ≈ 1/(1 + p·z)
	e("VMOVAPS %s, %s", rOne, s.d)
	e("VFNMADD231PS %s, %s, %s", s.c, s.b, s.d) // 1 − (1 + p·z)·t₀
	e("VFMADD231PS %s, %s, %s", s.d, s.c, s.c)  // t = t₀ + t₀·(1 − (1 + p·z)·t₀)
	e("VMULPS %s, %s, %s", s.a, s.a, s.b)       // z²
	e("VMULPS %s, %s, %s", rNL2e, s.b, s.b)     // y = −z²·log₂e
	e("VMOVAPS %s, %s", rA[4], s.d)             // the polynomial in t
	for i := 3; i >= 0; i-- {
		e("VFMADD213PS %s, %s, %s", rA[i], s.c, s.d) // … + a_i
	}
	e("VMULPS %s, %s, %s", s.c, s.d, s.d) // t·(a1 + …)
	e("VRNDSCALEPS $0, %s, %s", s.b, s.c) // n = round(y)
	e("VSUBPS %s, %s, %s", s.c, s.b, s.b) // r = y − n
	e("VMOVAPS %s, %s", rC[5], s.a)       // 2^r
	for i := 4; i >= 0; i-- {
		e("VFMADD213PS %s, %s, %s", rC[i], s.b, s.a)
	}
	e("VFMADD213PS %s, %s, %s", rOne, s.b, s.a)
	e("VSCALEFPS %s, %s, %s", s.c, s.a, s.a)  // e^(−z²) = 2^r·2^n
	e("VMULPS %s, %s, %s", s.a, s.d, s.d)     // erfc(z)
	e("VMULPS %s, %s, %s", rHalf, s.d, s.d)   // q = Φ(−|x|)
	e("VSUBPS %s, %s, %s", s.d, rOne, s.r)    // 1 − q
	e("VPTESTMD %s, %s, %s", rSign, s.x, s.k) // x < 0
	e("VMOVAPS %s, %s, %s", s.d, s.k, s.r)    // Φ(x)
	return l
}

// zip emits the lines of several slots interleaved line by line.
func zip(ls ...[]string) {
	for i := 0; ; i++ {
		any := false
		for _, l := range ls {
			if i < len(l) {
				out.WriteString(l[i] + "\n")
				any = true
			}
		}
		if !any {
			return
		}
	}
}

// kernel is one of the three kernels: what it does with Φ for a slot,
// given the addresses of its input, output and dout vectors (and whether
// the access is the masked tail).
type kernel struct {
	name, doc, args string
	frame           int
	loads           []string // pointer registers after DI (out/dinp) and SI (inp): R8 = dout
	body            func(s slot, off int, tail bool) []string
}

var kernels = []kernel{
	{
		name: "geluForwardSIMD", doc: "out[i] = x·Φ(x), x = inp[i], for n ≥ 1 values.",
		args: "out *float32, inp *float32, n int", frame: 24,
		body: func(s slot, off int, tail bool) []string {
			l := []string{fmt.Sprintf("\tVMULPS %s, %s, %s", s.r, s.x, s.r)}
			return append(l, store(s.r, off, tail))
		},
	},
	{
		name: "geluBackwardSIMD", doc: "dinp[i] += dout[i]·(Φ(x) + x·φ(x)), x = inp[i], for n ≥ 1 values.",
		args: "dinp *float32, inp *float32, dout *float32, n int", frame: 32, loads: []string{"R8"},
		body: func(s slot, off int, tail bool) []string {
			l := deriv(s)
			l = append(l, loadTo(s.a, "DI", off, tail), loadTo(s.b, "R8", off, tail))
			l = append(l, fmt.Sprintf("\tVFMADD231PS %s, %s, %s", s.b, s.r, s.a))
			return append(l, store(s.a, off, tail))
		},
	},
	{
		name: "geluBackwardSetSIMD", doc: "dinp[i] = dout[i]·(Φ(x) + x·φ(x)), x = inp[i], for n ≥ 1 values.",
		args: "dinp *float32, inp *float32, dout *float32, n int", frame: 32, loads: []string{"R8"},
		body: func(s slot, off int, tail bool) []string {
			l := deriv(s)
			l = append(l, loadTo(s.b, "R8", off, tail))
			l = append(l, fmt.Sprintf("\tVMULPS %s, %s, %s", s.b, s.r, s.a))
			return append(l, store(s.a, off, tail))
		},
	},
}

// deriv returns the instructions that set s.r = Φ(x) + x·φ(x) after phi.
func deriv(s slot) []string {
	return []string{
		fmt.Sprintf("\tVMULPS %s, %s, %s", rInvS2P, s.a, s.a),
		fmt.Sprintf("\tVFMADD231PS %s, %s, %s", s.a, s.x, s.r),
	}
}

func loadTo(reg, ptr string, off int, tail bool) string {
	if tail {
		return fmt.Sprintf("\tVMOVUPS.Z %d(%s), K1, %s", off, ptr, reg)
	}
	return fmt.Sprintf("\tVMOVUPS %d(%s), %s", off, ptr, reg)
}

func store(reg string, off int, tail bool) string {
	if tail {
		return fmt.Sprintf("\tVMOVUPS %s, K1, %d(DI)", reg, off)
	}
	return fmt.Sprintf("\tVMOVUPS %s, %d(DI)", reg, off)
}

// vector returns slot s's instructions for the vector at byte offset off.
func vector(k kernel, s slot, off int, tail bool) []string {
	l := []string{loadTo(s.x, "SI", off, tail)}
	l = append(l, phi(s)...)
	return append(l, k.body(s, off, tail)...)
}

func write(k kernel) {
	emit("// func %s(%s)", k.name, k.args)
	emit("// %s", k.doc)
	emit("TEXT ·%s(SB), NOSPLIT, $0-%d", k.name, k.frame)
	first := strings.Fields(strings.Split(k.args, ",")[0])[0]
	emit("\tMOVQ %s+0(FP), DI", first)
	emit("\tMOVQ inp+8(FP), SI")
	nOff := 16
	if len(k.loads) > 0 {
		emit("\tMOVQ dout+16(FP), R8")
		nOff = 24
	}
	emit("\tMOVQ n+%d(FP), CX", nOff)
	emit("\t// DX = pairs of whole vectors, BX = one more whole vector (0 or 1), K1 = the tail's lanes")
	emit("\tMOVQ CX, DX")
	emit("\tSHRQ $5, DX")
	emit("\tMOVQ CX, BX")
	emit("\tSHRQ $4, BX")
	emit("\tANDQ $1, BX")
	emit("\tANDQ $15, CX")
	emit("\tMOVL $1, AX")
	emit("\tSHLL CX, AX")
	emit("\tDECL AX")
	emit("\tKMOVW AX, K1")
	for _, r := range constOr {
		emit("\tMOVL $0x%08x, AX", consts[r])
		emit("\tVPBROADCASTD AX, %s", r)
	}
	for i, b := range bitsA {
		emit("\tMOVL $0x%08x, AX", b)
		emit("\tVPBROADCASTD AX, %s", rA[i])
	}
	for i, b := range bitsC {
		emit("\tMOVL $0x%08x, AX", b)
		emit("\tVPBROADCASTD AX, %s", rC[i])
	}
	lbl := strings.TrimSuffix(k.name, "SIMD")
	step := func(bytes int) {
		emit("\tADDQ $%d, SI", bytes)
		emit("\tADDQ $%d, DI", bytes)
		for _, r := range k.loads {
			emit("\tADDQ $%d, %s", bytes, r)
		}
	}
	emit("\tTESTQ DX, DX")
	emit("\tJZ %s_one", lbl)
	emit("%s_pair:", lbl)
	zip(vector(k, slots[0], 0, false), vector(k, slots[1], 64, false))
	step(128)
	emit("\tDECQ DX")
	emit("\tJNZ %s_pair", lbl)
	emit("%s_one:", lbl)
	emit("\tTESTQ BX, BX")
	emit("\tJZ %s_tail", lbl)
	zip(vector(k, slots[0], 0, false))
	step(64)
	emit("%s_tail:", lbl)
	emit("\tTESTQ CX, CX")
	emit("\tJZ %s_done", lbl)
	zip(vector(k, slots[0], 0, true))
	emit("%s_done:", lbl)
	emit("\tVZEROUPPER")
	emit("\tRET")
}

func main() {
	o := flag.String("o", "", "output file (default: standard output)")
	flag.Parse()
	emit("// Code generated by gelugen.go; DO NOT EDIT.")
	emit("")
	emit("//go:build amd64 && !purego")
	emit("")
	emit("#include \"textflag.h\"")
	for _, k := range kernels {
		emit("")
		write(k)
	}
	if *o == "" {
		fmt.Print(out.String())
		return
	}
	if err := os.WriteFile(*o, []byte(out.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
