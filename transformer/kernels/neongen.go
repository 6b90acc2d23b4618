//go:build ignore

// neongen writes neon_arm64.s, the arm64 Advanced SIMD (NEON) kernels of
// the neon kernel set:
//
//	go run neongen.go            (writes neon_arm64.s)
//	go run neongen.go -o FILE    (writes FILE; TestNeonGenCurrent uses it)
//
// Go's arm64 assembler has loads, stores, integer vector operations and
// DUP, but no floating-point vector arithmetic (FADD, FMUL, FMLA by
// element, FRINTN, FCVTZS, FDIV, …). Those instructions are emitted as
// raw words, WORD $0x…, by the small encoder below, each followed by a
// comment in GNU syntax. The encodings are those of the Arm Architecture
// Reference Manual (A64, "Advanced SIMD" classes), always with Q = 1 (128-bit
// vectors) and single precision (sz = 0, four float32 lanes, ".4s"):
//
//	three registers same type   0 Q U 01110 a sz 1 Rm opcode 1 Rn Rd
//	two registers misc          0 Q U 01110 a sz 10000 opcode 10 Rn Rd
//	by element (FMLA, FMUL …)   0 Q U 01111 1 sz L M Rm opcode H 0 Rn Rd
//	                            (lane = H:L, Vm = M:Rm, any of V0..V31)
//	shift by immediate          0 Q U 011110 immh:immb opcode 1 Rn Rd
//	                            (SHL: immh:immb = 32+shift, SSHR: 64−shift)
//	across lanes, pairwise      FADDP (scalar) 0111 1110 0011 0000 1101 10 Rn Rd
//	                            FMAXV          0110 1110 0011 0000 1111 10 Rn Rd
//
// The base words (Rd = Rn = Rm = 0) are the constants of the ops table;
// the register fields are or-ed in. `go tool objdump -gnu` on a test
// binary shows the decoded instructions next to these comments.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
)

var out strings.Builder

func emit(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

// word emits one encoded instruction with its GNU-syntax comment.
func word(enc uint32, format string, args ...any) {
	emit("\tWORD $0x%08x // %s", enc, fmt.Sprintf(format, args...))
}

// Three-register instructions on .4s (or .16b for the bitwise ones, .2d
// for trn1d/trn2d): Vd ← Vn op Vm.
var three = map[string]uint32{
	"fadd":  0x4e20d400,
	"fsub":  0x4ea0d400,
	"fmul":  0x6e20dc00,
	"fdiv":  0x6e20fc00,
	"fmax":  0x4e20f400,
	"fmla":  0x4e20cc00, // Vd += Vn·Vm (fused)
	"fmls":  0x4ea0cc00, // Vd −= Vn·Vm (fused)
	"fcmgt": 0x6ea0e400, // Vd = Vn > Vm ? all ones : 0
	"fcmeq": 0x4e20e400,
	"faddp": 0x6e20d400, // pairwise: Vd = (n0+n1, n2+n3, m0+m1, m2+m3)
	"and":   0x4e201c00,
	"bic":   0x4e601c00, // Vd = Vn &^ Vm
	"orr":   0x4ea01c00,
	"bsl":   0x6e601c00, // Vd = Vd ? Vn : Vm (bitwise)
	"add":   0x4ea08400, // int32 lanes
	"sub":   0x6ea08400, // int32 lanes
	"trn1":  0x4e802800,
	"trn2":  0x4e806800,
	"trn1d": 0x4ec02800, // .2d
	"trn2d": 0x4ec06800, // .2d
}

// Two-register instructions on .4s: Vd ← op Vn.
var two = map[string]uint32{
	"frintn": 0x4e218800, // round to nearest, ties to even
	"fcvtzs": 0x4ea1b800, // to int32, toward zero
	"fabs":   0x4ea0f800,
	"fneg":   0x6ea0f800,
}

// By-element instructions: Vd ← Vd ± Vn·Vm.s[lane] (fmla, fmls) or
// Vd ← Vn·Vm.s[lane] (fmul).
var byElem = map[string]uint32{
	"fmla": 0x4f801000,
	"fmls": 0x4f805000,
	"fmul": 0x4f809000,
}

func reg(r int) uint32 {
	if r < 0 || r > 31 {
		panic(fmt.Sprintf("bad register V%d", r))
	}
	return uint32(r)
}

func op3(name string, d, n, m int) {
	enc, ok := three[name]
	if !ok {
		panic(name)
	}
	arr := "4s"
	switch name {
	case "and", "bic", "orr", "bsl":
		arr = "16b"
	case "trn1d", "trn2d":
		arr, name = "2d", name[:4]
	}
	word(enc|reg(m)<<16|reg(n)<<5|reg(d), "%s v%d.%s, v%d.%s, v%d.%s", name, d, arr, n, arr, m, arr)
}

func op2(name string, d, n int) {
	enc, ok := two[name]
	if !ok {
		panic(name)
	}
	word(enc|reg(n)<<5|reg(d), "%s v%d.4s, v%d.4s", name, d, n)
}

func elem(name string, d, n, m, lane int) {
	enc, ok := byElem[name]
	if !ok || lane < 0 || lane > 3 {
		panic(name)
	}
	l, h := uint32(lane&1), uint32(lane>>1)
	word(enc|l<<21|reg(m)<<16|h<<11|reg(n)<<5|reg(d), "%s v%d.4s, v%d.4s, v%d.s[%d]", name, d, n, m, lane)
}

// mov copies Vn to Vd (orr Vd, Vn, Vn).
func mov(d, n int) {
	word(three["orr"]|reg(n)<<16|reg(n)<<5|reg(d), "mov v%d.16b, v%d.16b", d, n)
}

// shl and sshr shift the int32 lanes of Vn left / arithmetically right.
func shl(d, n, s int) {
	word(0x4f005400|uint32(32+s)<<16|reg(n)<<5|reg(d), "shl v%d.4s, v%d.4s, #%d", d, n, s)
}

func sshr(d, n, s int) {
	word(0x4f000400|uint32(64-s)<<16|reg(n)<<5|reg(d), "sshr v%d.4s, v%d.4s, #%d", d, n, s)
}

// hsum sets Sd (the low lane of Vd) to (n0+n1)+(n2+n3); Vn is clobbered.
func hsum(d, n int) {
	op3("faddp", n, n, n)
	word(0x7e30d800|reg(n)<<5|reg(d), "faddp s%d, v%d.2s", d, n)
}

// hmax sets Sd to the largest lane of Vn.
func hmax(d, n int) {
	word(0x6e30f800|reg(n)<<5|reg(d), "fmaxv s%d, v%d.4s", d, n)
}

// zero clears Vd.
func zero(d int) { emit("\tVEOR V%d.B16, V%d.B16, V%d.B16", d, d, d) }

// splat broadcasts the 32-bit pattern bits to the four lanes of Vd.
func splat(d int, bits uint32) {
	emit("\tMOVW $0x%08x, R16", bits)
	emit("\tVDUP R16, V%d.S4", d)
}

func splatF(d int, v float32) { splat(d, math.Float32bits(v)) }

// splatArg broadcasts the float32 argument at off(FP) to Vd.
func splatArg(d int, name string, off int) {
	emit("\tMOVWU %s+%d(FP), R16", name, off)
	emit("\tVDUP R16, V%d.S4", d)
}

// ld and st load / store consecutive vectors V(r)..V(r+k−1) at (R), with
// post-increment when post.
func regList(r, k int) string {
	var s []string
	for i := 0; i < k; i++ {
		s = append(s, fmt.Sprintf("V%d.S4", r+i))
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func ld(r, k int, base string, post bool) {
	if post {
		emit("\tVLD1.P %d(%s), %s", 16*k, base, regList(r, k))
	} else {
		emit("\tVLD1 (%s), %s", base, regList(r, k))
	}
}

func st(r, k int, base string, post bool) {
	if post {
		emit("\tVST1.P %s, %d(%s)", regList(r, k), 16*k, base)
	} else {
		emit("\tVST1 %s, (%s)", regList(r, k), base)
	}
}

// ---------------------------------------------------------------- GEMM

// gemm8x12 is the micro-kernel of the NEON GEMM: the 8×12 tile of C
// lives in V0..V23 (row i, columns 4v..4v+3 in V(3i+v)); per step p the
// 8 values of the packed A panel are loaded into V24, V25 and the 12 of
// the B panel into V26..V28, and each accumulator gets one FMLA by
// element (V(3i+v) += V(26+v)·V(24+i/4).s[i%4]): 24 FMLAs for 5 loads,
// 29 of the 32 registers.
func gemm8x12() {
	emit("// func neonGemm8x12(kb int, a *float32, b *float32, c *float32, ldc int, acc int)")
	emit("TEXT ·neonGemm8x12(SB), NOSPLIT, $0-48")
	emit("\tMOVD kb+0(FP), R0")
	emit("\tMOVD a+8(FP), R1")
	emit("\tMOVD b+16(FP), R2")
	emit("\tMOVD c+24(FP), R3")
	emit("\tMOVD ldc+32(FP), R4")
	emit("\tLSL $2, R4")
	emit("\tMOVD acc+40(FP), R5")
	for r := 0; r < 24; r++ {
		zero(r)
	}
	emit("gemmloop:")
	ld(24, 2, "R1", true)
	ld(26, 3, "R2", true)
	for i := 0; i < 8; i++ {
		for v := 0; v < 3; v++ {
			elem("fmla", 3*i+v, 26+v, 24+i/4, i%4)
		}
	}
	emit("\tSUBS $1, R0")
	emit("\tBNE gemmloop")
	emit("\tCBZ R5, gemmstore")
	for i := 0; i < 8; i++ {
		ld(26, 3, "R3", false)
		for v := 0; v < 3; v++ {
			op3("fadd", 3*i+v, 3*i+v, 26+v)
		}
		st(3*i, 3, "R3", false)
		emit("\tADD R4, R3")
	}
	emit("\tRET")
	emit("gemmstore:")
	for i := 0; i < 8; i++ {
		st(3*i, 3, "R3", false)
		emit("\tADD R4, R3")
	}
	emit("\tRET")
	emit("")
}

// ---------------------------------------------------------------- exp

// Registers of the exp constants (set by expConsts).
const (
	kLog2e = 18 + iota
	kLn2hi
	kLn2lo
	kC7
	kC6
	kC5
	kC4
	kC3
	kC2
	kOne
	kHi   // 88.8: above, +Inf
	kLo   // −104: not above, 0 (NaN stays NaN)
	kInf  // +Inf
	kI127 // int32 127
)

// expConsts broadcasts the constants of Exp32 (softmax.go) to V18..V31.
func expConsts() {
	for _, c := range []struct {
		r int
		v float64
	}{{kLog2e, 1.44269504088896340736}, {kLn2hi, 0.693359375}, {kLn2lo, -2.12194440e-4},
		{kC7, 1.0 / 5040}, {kC6, 1.0 / 720}, {kC5, 1.0 / 120}, {kC4, 1.0 / 24}, {kC3, 1.0 / 6}, {kC2, 1.0 / 2},
		{kOne, 1}, {kHi, 88.8}, {kLo, -104}, {kInf, math.Inf(1)}} {
		splatF(c.r, float32(c.v))
	}
	splat(kI127, 127)
}

// exp sets Vres = Exp32(Vx) lane by lane, with the algorithm of Exp32:
// n = round(x·log₂e) (ties to even), r = x − n·ln2hi − n·ln2lo, the
// degree-7 Taylor polynomial of e^r by Horner's rule, times 2ⁿ, applied
// as 2^⌊n/2⌋·2^(n−⌊n/2⌋) (both factors normal for every n of x ∈ (−104,
// 88.8], so the product is rounded once, as Exp32's); x > 88.8 gives
// +Inf, x ≤ −104 gives 0 and NaN stays NaN. The multiply-adds are fused
// (the Go compiler fuses Exp32's on arm64 too). Vx is kept; t0..t3 are
// clobbered; the result is in t1.
func exp(x, t0, t1, t2, t3 int) (res int) {
	n, r, a, b := t0, t1, t2, t3
	op3("fmul", n, x, kLog2e)
	op2("frintn", n, n)
	mov(r, x)
	op3("fmls", r, n, kLn2hi)
	op3("fmls", r, n, kLn2lo)
	// Horner: p = c7; p = c_k + p·r for c6, c5, c4, c3, c2, 1, 1
	p := kC7
	dst := []int{a, b}
	for i, c := range []int{kC6, kC5, kC4, kC3, kC2, kOne, kOne} {
		d := dst[i%2]
		mov(d, c)
		op3("fmla", d, p, r)
		p = d
	}
	// p is in a; scale by 2ⁿ
	op2("fcvtzs", n, n)
	sshr(r, n, 1)       // e1 = n>>1
	op3("sub", b, n, r) // e2 = n − e1
	op3("add", r, r, kI127)
	shl(r, r, 23)
	op3("add", b, b, kI127)
	shl(b, b, 23)
	op3("fmul", a, a, r)
	op3("fmul", a, a, b)
	// special cases
	op3("fcmgt", n, x, kHi)
	op3("bsl", n, kInf, a) // n = x > 88.8 ? +Inf : p·2ⁿ
	op3("fcmgt", r, x, kLo)
	op3("fcmeq", b, x, x)
	op3("bic", b, x, b) // NaN where x is NaN, else 0
	op3("bsl", r, n, b) // r = x > −104 ? n : b
	return r
}

// expKernel: x[i] = Exp32(scale·(x[i] − sub) − shift) for n (a multiple
// of 4) elements; returns the sum of the results (4 lanes, then pairwise).
func expKernel() {
	emit("// func neonExp(x *float32, n int, scale float32, sub float32, shift float32) (sum float32)")
	emit("TEXT ·neonExp(SB), NOSPLIT, $0-36")
	emit("\tMOVD x+0(FP), R0")
	emit("\tMOVD n+8(FP), R1")
	expConsts()
	splatArg(4, "scale", 16)
	splatArg(5, "sub", 20)
	splatArg(6, "shift", 24)
	zero(7) // sum
	emit("\tCBZ R1, expdone")
	emit("exploop:")
	ld(8, 1, "R0", false)
	op3("fsub", 8, 8, 5)
	op3("fmul", 8, 8, 4)
	op3("fsub", 8, 8, 6)
	res := exp(8, 9, 10, 11, 12)
	op3("fadd", 7, 7, res)
	st(res, 1, "R0", true)
	emit("\tSUBS $4, R1")
	emit("\tBNE exploop")
	emit("expdone:")
	hsum(0, 7)
	emit("\tFMOVS F0, sum+32(FP)")
	emit("\tRET")
	emit("")
}

// ---------------------------------------------------------------- reductions and simple loops

// loop emits a loop over n (in R1, a positive multiple of 4) elements:
// body emits one 4-lane step. The pointers are advanced by the body.
func loop(name string, body func()) {
	emit("%s:", name)
	body()
	emit("\tSUBS $4, R1")
	emit("\tBNE %s", name)
}

func simpleKernels() {
	// max of n ≥ 4 elements
	emit("// func neonMax(x *float32, n int) float32")
	emit("TEXT ·neonMax(SB), NOSPLIT, $0-20")
	emit("\tMOVD x+0(FP), R0")
	emit("\tMOVD n+8(FP), R1")
	ld(0, 1, "R0", false)
	loop("maxloop", func() {
		ld(1, 1, "R0", true)
		op3("fmax", 0, 0, 1)
	})
	hmax(2, 0)
	emit("\tFMOVS F2, ret+16(FP)")
	emit("\tRET")
	emit("")

	// x *= s
	emit("// func neonScale(x *float32, n int, s float32)")
	emit("TEXT ·neonScale(SB), NOSPLIT, $0-20")
	emit("\tMOVD x+0(FP), R0")
	emit("\tMOVD n+8(FP), R1")
	emit("\tCBZ R1, scaledone")
	splatArg(1, "s", 16)
	loop("scaleloop", func() {
		ld(0, 1, "R0", false)
		op3("fmul", 0, 0, 1)
		st(0, 1, "R0", true)
	})
	emit("scaledone:")
	emit("\tRET")
	emit("")

	// Σ x·y
	emit("// func neonDot(x *float32, y *float32, n int) float32")
	emit("TEXT ·neonDot(SB), NOSPLIT, $0-28")
	emit("\tMOVD x+0(FP), R0")
	emit("\tMOVD y+8(FP), R2")
	emit("\tMOVD n+16(FP), R1")
	zero(0)
	emit("\tCBZ R1, dotdone")
	loop("dotloop", func() {
		ld(1, 1, "R0", true)
		ld(2, 1, "R2", true)
		op3("fmla", 0, 1, 2)
	})
	emit("dotdone:")
	hsum(3, 0)
	emit("\tFMOVS F3, ret+24(FP)")
	emit("\tRET")
	emit("")

	// dp = (scale·p)·(dp − dot)
	emit("// func neonSoftmaxBack(p *float32, dp *float32, n int, scale float32, dot float32)")
	emit("TEXT ·neonSoftmaxBack(SB), NOSPLIT, $0-32")
	emit("\tMOVD p+0(FP), R0")
	emit("\tMOVD dp+8(FP), R2")
	emit("\tMOVD n+16(FP), R1")
	emit("\tCBZ R1, sbdone")
	splatArg(4, "scale", 24)
	splatArg(5, "dot", 28)
	loop("sbloop", func() {
		ld(0, 1, "R0", true)
		ld(1, 1, "R2", false)
		op3("fmul", 0, 0, 4)
		op3("fsub", 1, 1, 5)
		op3("fmul", 1, 0, 1)
		st(1, 1, "R2", true)
	})
	emit("sbdone:")
	emit("\tRET")
	emit("")

	// dst = a + b
	emit("// func neonAdd(dst *float32, a *float32, b *float32, n int)")
	emit("TEXT ·neonAdd(SB), NOSPLIT, $0-32")
	emit("\tMOVD dst+0(FP), R3")
	emit("\tMOVD a+8(FP), R0")
	emit("\tMOVD b+16(FP), R2")
	emit("\tMOVD n+24(FP), R1")
	emit("\tCBZ R1, adddone")
	loop("addloop", func() {
		ld(0, 1, "R0", true)
		ld(1, 1, "R2", true)
		op3("fadd", 0, 0, 1)
		st(0, 1, "R3", true)
	})
	emit("adddone:")
	emit("\tRET")
	emit("")
}

// ---------------------------------------------------------------- GELU

// Registers of the GELU constants (with expConsts' V18..V31).
const (
	gInvSqrt2 = 9 + iota
	gErfP
	gHalf
	gA1
	gA2
	gA3
	gA4
	gA5
	gInvSqrt2Pi
)

func geluConsts() {
	for _, c := range []struct {
		r int
		v float64
	}{{gInvSqrt2, 0.70710678118654752440}, {gErfP, 0.3275911}, {gHalf, 0.5},
		{gA1, 0.254829592}, {gA2, -0.284496736}, {gA3, 1.421413741}, {gA4, -1.453152027}, {gA5, 1.061405429},
		{gInvSqrt2Pi, 0.39894228040143267794}} {
		splatF(c.r, float32(c.v))
	}
}

// phi sets (Φ(x), e^(−x²/2)) of Vx as phi32 (gelu.go) does: z = |x|/√2,
// t = 1/(1 + p·z), q = ½t·poly(t)·e^(−z²), Φ = q for x < 0, else 1 − q.
// Uses V1..V8 (V0 = x); returns the registers of Φ and e.
func phi() (ph, e int) {
	const x, z, t = 0, 1, 2
	op2("fabs", z, x)
	op3("fmul", z, z, gInvSqrt2)
	mov(t, kOne)
	op3("fmla", t, z, gErfP)
	op3("fdiv", t, kOne, t)
	op3("fmul", z, z, z)
	op2("fneg", z, z) // −z²
	e = exp(z, 3, 4, 5, 6)
	// poly(t) = (((a5·t + a4)·t + a3)·t + a2)·t + a1, in V7/V8
	p := gA5
	dst := []int{7, 8}
	for i, c := range []int{gA4, gA3, gA2, gA1} {
		d := dst[i%2]
		mov(d, c)
		op3("fmla", d, p, t)
		p = d
	}
	// q = ((½·t)·poly)·e
	op3("fmul", t, t, gHalf)
	op3("fmul", t, t, p)
	op3("fmul", t, t, e)
	// Φ = x < 0 ? q : 1 − q
	op3("fsub", 3, kOne, t)
	zero(5)
	op3("fcmgt", 5, 5, x) // 0 > x
	op3("bsl", 5, t, 3)
	return 5, e
}

func geluKernels() {
	emit("// func neonGelu(out *float32, inp *float32, n int)")
	emit("TEXT ·neonGelu(SB), NOSPLIT, $0-24")
	emit("\tMOVD out+0(FP), R3")
	emit("\tMOVD inp+8(FP), R0")
	emit("\tMOVD n+16(FP), R1")
	emit("\tCBZ R1, geludone")
	expConsts()
	geluConsts()
	loop("geluloop", func() {
		ld(0, 1, "R0", true)
		ph, _ := phi()
		op3("fmul", ph, 0, ph)
		st(ph, 1, "R3", true)
	})
	emit("geludone:")
	emit("\tRET")
	emit("")

	// dinp += dout·(Φ + (x·e)·(1/√(2π)))
	emit("// func neonGeluBack(dinp *float32, inp *float32, dout *float32, n int)")
	emit("TEXT ·neonGeluBack(SB), NOSPLIT, $0-32")
	emit("\tMOVD dinp+0(FP), R3")
	emit("\tMOVD inp+8(FP), R0")
	emit("\tMOVD dout+16(FP), R2")
	emit("\tMOVD n+24(FP), R1")
	emit("\tCBZ R1, gbdone")
	expConsts()
	geluConsts()
	loop("gbloop", func() {
		ld(0, 1, "R0", true)
		ph, e := phi()
		op3("fmul", e, 0, e)
		op3("fmla", ph, e, gInvSqrt2Pi)
		ld(1, 1, "R2", true)
		ld(2, 1, "R3", false)
		op3("fmla", 2, 1, ph)
		st(2, 1, "R3", true)
	})
	emit("gbdone:")
	emit("\tRET")
	emit("")
}

// ---------------------------------------------------------------- LayerNorm

// layernormKernels writes the LayerNorm kernels: the two statistics
// (neonSum, neonSqDev), the forward (neonLNApply) and the two passes of the
// backward (neonLNBackDots, neonLNBackApply).
func layernormKernels() {
	sumKernel()
	sqDevKernel()
	lnApplyKernel()
	lnBackDotsKernel()
	lnBackApplyKernel()
}

// sumKernel writes neonSum: Σ x, in four accumulators of 4 lanes when n is
// a multiple of 16 (16 partial sums, as the AVX-512 kernel), else one.
func sumKernel() {
	emit("// func neonSum(x *float32, n int) float32")
	emit("TEXT ·neonSum(SB), NOSPLIT, $0-20")
	emit("\tMOVD x+0(FP), R0")
	emit("\tMOVD n+8(FP), R1")
	for r := 0; r < 4; r++ {
		zero(r)
	}
	emit("\tCBZ R1, sumdone")
	emit("\tTST $15, R1")
	emit("\tBNE sumloop1")
	emit("sumloop4:")
	ld(4, 4, "R0", true)
	for r := 0; r < 4; r++ {
		op3("fadd", r, r, 4+r)
	}
	emit("\tSUBS $16, R1")
	emit("\tBNE sumloop4")
	emit("\tB sumdone")
	loop("sumloop1", func() {
		ld(4, 1, "R0", true)
		op3("fadd", 0, 0, 4)
	})
	emit("sumdone:")
	op3("fadd", 0, 0, 1)
	op3("fadd", 2, 2, 3)
	op3("fadd", 0, 0, 2)
	hsum(5, 0)
	emit("\tFMOVS F5, ret+16(FP)")
	emit("\tRET")
	emit("")
}

// sqDevKernel writes neonSqDev: Σ (x − m)².
func sqDevKernel() {
	emit("// func neonSqDev(x *float32, n int, m float32) float32")
	emit("TEXT ·neonSqDev(SB), NOSPLIT, $0-28")
	emit("\tMOVD x+0(FP), R0")
	emit("\tMOVD n+8(FP), R1")
	splatArg(1, "m", 16)
	zero(0)
	emit("\tCBZ R1, sqdone")
	loop("sqloop", func() {
		ld(2, 1, "R0", true)
		op3("fsub", 2, 2, 1)
		op3("fmla", 0, 2, 2)
	})
	emit("sqdone:")
	hsum(3, 0)
	emit("\tFMOVS F3, ret+24(FP)")
	emit("\tRET")
	emit("")
}

// lnApplyKernel writes neonLNApply, the forward: out = ((x − m)·s)·w + b.
func lnApplyKernel() {
	emit("// func neonLNApply(out *float32, x *float32, w *float32, b *float32, n int, m float32, s float32)")
	emit("TEXT ·neonLNApply(SB), NOSPLIT, $0-48")
	emit("\tMOVD out+0(FP), R3")
	emit("\tMOVD x+8(FP), R0")
	emit("\tMOVD w+16(FP), R2")
	emit("\tMOVD b+24(FP), R4")
	emit("\tMOVD n+32(FP), R1")
	emit("\tCBZ R1, lnadone")
	splatArg(4, "m", 40)
	splatArg(5, "s", 44)
	loop("lnaloop", func() {
		ld(0, 1, "R0", true)
		ld(1, 1, "R2", true)
		ld(2, 1, "R4", true)
		op3("fsub", 0, 0, 4)
		op3("fmul", 0, 0, 5)
		op3("fmla", 2, 0, 1)
		st(2, 1, "R3", true)
	})
	emit("lnadone:")
	emit("\tRET")
	emit("")
}

// lnBackDotsKernel writes neonLNBackDots, the backward's first pass:
// gm = Σ dout·w, gxm = Σ (dout·w)·x̂, x̂ = (x − m)·s.
func lnBackDotsKernel() {
	emit("// func neonLNBackDots(dout *float32, x *float32, w *float32, n int, m float32, s float32) (gm float32, gxm float32)")
	emit("TEXT ·neonLNBackDots(SB), NOSPLIT, $0-48")
	emit("\tMOVD dout+0(FP), R2")
	emit("\tMOVD x+8(FP), R0")
	emit("\tMOVD w+16(FP), R4")
	emit("\tMOVD n+24(FP), R1")
	splatArg(4, "m", 32)
	splatArg(5, "s", 36)
	zero(6)
	zero(7)
	emit("\tCBZ R1, lnddone")
	loop("lndloop", func() {
		ld(0, 1, "R0", true)
		ld(1, 1, "R2", true)
		ld(2, 1, "R4", true)
		op3("fsub", 0, 0, 4)
		op3("fmul", 0, 0, 5)
		op3("fmul", 1, 1, 2)
		op3("fadd", 6, 6, 1)
		op3("fmla", 7, 1, 0)
	})
	emit("lnddone:")
	hsum(8, 6)
	hsum(9, 7)
	emit("\tFMOVS F8, gm+40(FP)")
	emit("\tFMOVS F9, gxm+44(FP)")
	emit("\tRET")
	emit("")
}

// lnBackApplyKernel writes neonLNBackApply, the backward's second pass:
// db += dout; dw += dout·x̂; dinp += s·(dout·w − gm − x̂·gxm).
func lnBackApplyKernel() {
	emit("// func neonLNBackApply(dinp *float32, dw *float32, db *float32, dout *float32, x *float32, w *float32, n int, m float32, s float32, gm float32, gxm float32)")
	emit("TEXT ·neonLNBackApply(SB), NOSPLIT, $0-72")
	emit("\tMOVD dinp+0(FP), R3")
	emit("\tMOVD dw+8(FP), R5")
	emit("\tMOVD db+16(FP), R6")
	emit("\tMOVD dout+24(FP), R2")
	emit("\tMOVD x+32(FP), R0")
	emit("\tMOVD w+40(FP), R4")
	emit("\tMOVD n+48(FP), R1")
	emit("\tCBZ R1, lnbdone")
	splatArg(16, "m", 56)
	splatArg(17, "s", 60)
	splatArg(18, "gm", 64)
	splatArg(19, "gxm", 68)
	loop("lnbloop", func() {
		ld(0, 1, "R0", true) // x
		ld(1, 1, "R2", true) // dout
		ld(2, 1, "R4", true) // w
		ld(3, 1, "R6", false)
		ld(4, 1, "R5", false)
		ld(5, 1, "R3", false)
		op3("fsub", 0, 0, 16)
		op3("fmul", 0, 0, 17) // x̂
		op3("fadd", 3, 3, 1)
		op3("fmla", 4, 1, 0)
		op3("fmul", 6, 1, 2) // g = dout·w
		op3("fsub", 6, 6, 18)
		op3("fmls", 6, 0, 19) // g − gm − x̂·gxm
		op3("fmla", 5, 6, 17)
		st(3, 1, "R6", true)
		st(4, 1, "R5", true)
		st(5, 1, "R3", true)
	})
	emit("lnbdone:")
	emit("\tRET")
	emit("")
}

// ---------------------------------------------------------------- transpose

// transpose4 transposes rows × cols (multiples of 4) of src into dst in
// 4×4 blocks: four rows are loaded, TRN1/TRN2 on 32-bit then on 64-bit
// lanes give the four columns.
func transpose4() {
	emit("// func neonTranspose(dst *float32, ldd int, src *float32, lds int, rows int, cols int)")
	emit("TEXT ·neonTranspose(SB), NOSPLIT, $0-48")
	emit("\tMOVD dst+0(FP), R0")
	emit("\tMOVD ldd+8(FP), R1")
	emit("\tLSL $2, R1")
	emit("\tMOVD src+16(FP), R2")
	emit("\tMOVD lds+24(FP), R3")
	emit("\tLSL $2, R3")
	emit("\tMOVD rows+32(FP), R4")
	emit("\tMOVD cols+40(FP), R5")
	emit("\tCBZ R4, trdone")
	emit("\tCBZ R5, trdone")
	emit("trrows:")       // R2: src row block, R0: dst column block
	emit("\tMOVD R2, R6") // src block
	emit("\tMOVD R0, R7") // dst block
	emit("\tMOVD R5, R8")
	emit("trcols:")
	emit("\tMOVD R6, R9")
	for i := 0; i < 4; i++ {
		ld(i, 1, "R9", false)
		if i < 3 {
			emit("\tADD R3, R9")
		}
	}
	op3("trn1", 4, 0, 1)
	op3("trn2", 5, 0, 1)
	op3("trn1", 6, 2, 3)
	op3("trn2", 7, 2, 3)
	op3("trn1d", 0, 4, 6)
	op3("trn1d", 1, 5, 7)
	op3("trn2d", 2, 4, 6)
	op3("trn2d", 3, 5, 7)
	emit("\tMOVD R7, R9")
	for i := 0; i < 4; i++ {
		st(i, 1, "R9", false)
		emit("\tADD R1, R9")
	}
	emit("\tMOVD R9, R7") // next 4 columns = 4 dst rows down
	emit("\tADD $16, R6")
	emit("\tSUBS $4, R8")
	emit("\tBNE trcols")
	emit("\tADD R3<<2, R2") // 4 src rows down
	emit("\tADD $16, R0")   // 4 dst columns right
	emit("\tSUBS $4, R4")
	emit("\tBNE trrows")
	emit("trdone:")
	emit("\tRET")
	emit("")
}

func main() {
	o := flag.String("o", "neon_arm64.s", "output file")
	flag.Parse()
	emit("// Code generated by neongen.go; DO NOT EDIT.")
	emit("")
	emit("//go:build arm64 && !purego")
	emit("")
	emit("#include \"textflag.h\"")
	emit("")
	gemm8x12()
	expKernel()
	simpleKernels()
	geluKernels()
	layernormKernels()
	transpose4()
	if err := os.WriteFile(*o, []byte(out.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
