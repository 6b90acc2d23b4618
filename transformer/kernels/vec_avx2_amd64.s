//go:build amd64 && !purego

#include "textflag.h"

// The AVX2 + FMA vector kernels of the avx2 set (8-float ymm vectors):
// the same algorithms as the AVX-512 ones (softmax_exp_avx512_amd64.s, gelu_avx512_amd64.s,
// layernorm_avx512_amd64.s, add_avx512_amd64.s) and the portable Go versions (the AVX-512
// GELU evaluates 1/(1 + p·z) and e^−z² otherwise: gelugen.go). AVX2 has
// no mask registers: the tail of n mod 8 values is read with VMASKMOVPS
// under a lane mask from tailmask<> (masked lanes are not accessed and
// load as 0) and written with plain stores of 4, 2 and 1 lanes
// (STORETAIL). Constants are 8-lane vectors in memory.

// tailmask: 8 lanes of all ones, then 8 of zeros; the 8 lanes at byte
// 32 − 4r have ones in lanes 0..r−1.
DATA tailmask<>+0(SB)/8, $0xffffffffffffffff
DATA tailmask<>+8(SB)/8, $0xffffffffffffffff
DATA tailmask<>+16(SB)/8, $0xffffffffffffffff
DATA tailmask<>+24(SB)/8, $0xffffffffffffffff
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
GLOBL tailmask<>(SB), RODATA, $64

// Vector constants: exp (1, 1/2!, …, 1/7!, the clamps −104 and 89, ln2lo,
// ln2hi, log₂e, the exponent bias 127) and GELU (|·| mask, 1/√(2π), ½,
// a1..a5, 1/√2, p of Abramowitz & Stegun 7.1.26).
DATA one<>+0(SB)/8, $0x3f8000003f800000
DATA one<>+8(SB)/8, $0x3f8000003f800000
DATA one<>+16(SB)/8, $0x3f8000003f800000
DATA one<>+24(SB)/8, $0x3f8000003f800000
GLOBL one<>(SB), RODATA, $32
DATA c2<>+0(SB)/8, $0x3f0000003f000000
DATA c2<>+8(SB)/8, $0x3f0000003f000000
DATA c2<>+16(SB)/8, $0x3f0000003f000000
DATA c2<>+24(SB)/8, $0x3f0000003f000000
GLOBL c2<>(SB), RODATA, $32
DATA c3<>+0(SB)/8, $0x3e2aaaab3e2aaaab
DATA c3<>+8(SB)/8, $0x3e2aaaab3e2aaaab
DATA c3<>+16(SB)/8, $0x3e2aaaab3e2aaaab
DATA c3<>+24(SB)/8, $0x3e2aaaab3e2aaaab
GLOBL c3<>(SB), RODATA, $32
DATA c4<>+0(SB)/8, $0x3d2aaaab3d2aaaab
DATA c4<>+8(SB)/8, $0x3d2aaaab3d2aaaab
DATA c4<>+16(SB)/8, $0x3d2aaaab3d2aaaab
DATA c4<>+24(SB)/8, $0x3d2aaaab3d2aaaab
GLOBL c4<>(SB), RODATA, $32
DATA c5<>+0(SB)/8, $0x3c0888893c088889
DATA c5<>+8(SB)/8, $0x3c0888893c088889
DATA c5<>+16(SB)/8, $0x3c0888893c088889
DATA c5<>+24(SB)/8, $0x3c0888893c088889
GLOBL c5<>(SB), RODATA, $32
DATA c6<>+0(SB)/8, $0x3ab60b613ab60b61
DATA c6<>+8(SB)/8, $0x3ab60b613ab60b61
DATA c6<>+16(SB)/8, $0x3ab60b613ab60b61
DATA c6<>+24(SB)/8, $0x3ab60b613ab60b61
GLOBL c6<>(SB), RODATA, $32
DATA c7<>+0(SB)/8, $0x39500d0139500d01
DATA c7<>+8(SB)/8, $0x39500d0139500d01
DATA c7<>+16(SB)/8, $0x39500d0139500d01
DATA c7<>+24(SB)/8, $0x39500d0139500d01
GLOBL c7<>(SB), RODATA, $32
DATA expmin<>+0(SB)/8, $0xc2d00000c2d00000
DATA expmin<>+8(SB)/8, $0xc2d00000c2d00000
DATA expmin<>+16(SB)/8, $0xc2d00000c2d00000
DATA expmin<>+24(SB)/8, $0xc2d00000c2d00000
GLOBL expmin<>(SB), RODATA, $32
DATA expmax<>+0(SB)/8, $0x42b2000042b20000
DATA expmax<>+8(SB)/8, $0x42b2000042b20000
DATA expmax<>+16(SB)/8, $0x42b2000042b20000
DATA expmax<>+24(SB)/8, $0x42b2000042b20000
GLOBL expmax<>(SB), RODATA, $32
DATA ln2lo<>+0(SB)/8, $0xb95e8083b95e8083
DATA ln2lo<>+8(SB)/8, $0xb95e8083b95e8083
DATA ln2lo<>+16(SB)/8, $0xb95e8083b95e8083
DATA ln2lo<>+24(SB)/8, $0xb95e8083b95e8083
GLOBL ln2lo<>(SB), RODATA, $32
DATA ln2hi<>+0(SB)/8, $0x3f3180003f318000
DATA ln2hi<>+8(SB)/8, $0x3f3180003f318000
DATA ln2hi<>+16(SB)/8, $0x3f3180003f318000
DATA ln2hi<>+24(SB)/8, $0x3f3180003f318000
GLOBL ln2hi<>(SB), RODATA, $32
DATA log2e<>+0(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA log2e<>+8(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA log2e<>+16(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA log2e<>+24(SB)/8, $0x3fb8aa3b3fb8aa3b
GLOBL log2e<>(SB), RODATA, $32
DATA bias127<>+0(SB)/8, $0x0000007f0000007f
DATA bias127<>+8(SB)/8, $0x0000007f0000007f
DATA bias127<>+16(SB)/8, $0x0000007f0000007f
DATA bias127<>+24(SB)/8, $0x0000007f0000007f
GLOBL bias127<>(SB), RODATA, $32
DATA absmask<>+0(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+8(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+16(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL absmask<>(SB), RODATA, $32
DATA invsqrt2pi<>+0(SB)/8, $0x3ecc422a3ecc422a
DATA invsqrt2pi<>+8(SB)/8, $0x3ecc422a3ecc422a
DATA invsqrt2pi<>+16(SB)/8, $0x3ecc422a3ecc422a
DATA invsqrt2pi<>+24(SB)/8, $0x3ecc422a3ecc422a
GLOBL invsqrt2pi<>(SB), RODATA, $32
DATA half<>+0(SB)/8, $0x3f0000003f000000
DATA half<>+8(SB)/8, $0x3f0000003f000000
DATA half<>+16(SB)/8, $0x3f0000003f000000
DATA half<>+24(SB)/8, $0x3f0000003f000000
GLOBL half<>(SB), RODATA, $32
DATA erfa1<>+0(SB)/8, $0x3e8279063e827906
DATA erfa1<>+8(SB)/8, $0x3e8279063e827906
DATA erfa1<>+16(SB)/8, $0x3e8279063e827906
DATA erfa1<>+24(SB)/8, $0x3e8279063e827906
GLOBL erfa1<>(SB), RODATA, $32
DATA erfa2<>+0(SB)/8, $0xbe91a98ebe91a98e
DATA erfa2<>+8(SB)/8, $0xbe91a98ebe91a98e
DATA erfa2<>+16(SB)/8, $0xbe91a98ebe91a98e
DATA erfa2<>+24(SB)/8, $0xbe91a98ebe91a98e
GLOBL erfa2<>(SB), RODATA, $32
DATA erfa3<>+0(SB)/8, $0x3fb5f0e33fb5f0e3
DATA erfa3<>+8(SB)/8, $0x3fb5f0e33fb5f0e3
DATA erfa3<>+16(SB)/8, $0x3fb5f0e33fb5f0e3
DATA erfa3<>+24(SB)/8, $0x3fb5f0e33fb5f0e3
GLOBL erfa3<>(SB), RODATA, $32
DATA erfa4<>+0(SB)/8, $0xbfba00e3bfba00e3
DATA erfa4<>+8(SB)/8, $0xbfba00e3bfba00e3
DATA erfa4<>+16(SB)/8, $0xbfba00e3bfba00e3
DATA erfa4<>+24(SB)/8, $0xbfba00e3bfba00e3
GLOBL erfa4<>(SB), RODATA, $32
DATA erfa5<>+0(SB)/8, $0x3f87dc223f87dc22
DATA erfa5<>+8(SB)/8, $0x3f87dc223f87dc22
DATA erfa5<>+16(SB)/8, $0x3f87dc223f87dc22
DATA erfa5<>+24(SB)/8, $0x3f87dc223f87dc22
GLOBL erfa5<>(SB), RODATA, $32
DATA invsqrt2<>+0(SB)/8, $0x3f3504f33f3504f3
DATA invsqrt2<>+8(SB)/8, $0x3f3504f33f3504f3
DATA invsqrt2<>+16(SB)/8, $0x3f3504f33f3504f3
DATA invsqrt2<>+24(SB)/8, $0x3f3504f33f3504f3
GLOBL invsqrt2<>(SB), RODATA, $32
DATA erfp<>+0(SB)/8, $0x3ea7ba053ea7ba05
DATA erfp<>+8(SB)/8, $0x3ea7ba053ea7ba05
DATA erfp<>+16(SB)/8, $0x3ea7ba053ea7ba05
DATA erfp<>+24(SB)/8, $0x3ea7ba053ea7ba05
GLOBL erfp<>(SB), RODATA, $32

// TAILMASK sets Y to the lane mask of the first R (0..7) lanes; clobbers
// R and AX.
#define TAILMASK(R, Y) \
	LEAQ tailmask<>+32(SB), AX \
	SHLQ $2, R \
	SUBQ R, AX \
	VMOVDQU (AX), Y

// EXP sets X = e^X (the algorithm of Exp32 in softmax.go) using T and U:
// X clamped to [−104, 89]; n = round(x·log₂e); r = x − n·ln2hi − n·ln2lo;
// p = e^r by its degree-7 Taylor polynomial (Horner, FMA); then
// p·2^n1·2^n2 with n1 = n>>1, n2 = n − n1 (both powers normal, so the
// product is rounded once, as Exp32's, and underflows gradually to 0).
#define EXP(X, T, U) \
	VMAXPS expmin<>(SB), X, X \
	VMINPS expmax<>(SB), X, X \
	VMULPS log2e<>(SB), X, T \
	VROUNDPS $0, T, T \
	VFNMADD231PS ln2hi<>(SB), T, X \
	VFNMADD231PS ln2lo<>(SB), T, X \
	VMOVUPS c7<>(SB), U \
	VFMADD213PS c6<>(SB), X, U \
	VFMADD213PS c5<>(SB), X, U \
	VFMADD213PS c4<>(SB), X, U \
	VFMADD213PS c3<>(SB), X, U \
	VFMADD213PS c2<>(SB), X, U \
	VFMADD213PS one<>(SB), X, U \
	VFMADD213PS one<>(SB), X, U \
	VCVTPS2DQ T, T \
	VPSRAD $1, T, X \
	VPSUBD X, T, T \
	VPADDD bias127<>(SB), X, X \
	VPSLLD $23, X, X \
	VMULPS X, U, U \
	VPADDD bias127<>(SB), T, T \
	VPSLLD $23, T, T \
	VMULPS T, U, X

// HREDUCE reduces Y0 to its lanes' max (OP = VMAXPS) or sum (VADDPS),
// broadcast to all lanes of Y0; clobbers Y1.
#define HREDUCE(OP) \
	VPERM2F128 $1, Y0, Y0, Y1 \
	OP Y1, Y0, Y0 \
	VPERMILPS $0x4e, Y0, Y1 \
	OP Y1, Y0, Y0 \
	VPERMILPS $0xb1, Y0, Y1 \
	OP Y1, Y0, Y0

// STORETAIL(Y, X, D, T) stores lanes 0..CX/4−1 (CX = 0, 4, …, 28 bytes)
// of Y at D with plain stores: 4 lanes, then 2, then 1, as CX's bits say
// (VMASKMOVPS stores are slow on AMD CPUs, microcoded even under an empty
// mask: 3 of them made a 256-float softmax 1.4× slower). Clobbers Y, T.
#define STORETAIL(Y, X, D, T) \
	LEAQ D, T \
	TESTQ $16, CX \
	JZ 4(PC) \
	VMOVUPS X, (T) \
	VEXTRACTF128 $1, Y, X \
	ADDQ $16, T \
	TESTQ $8, CX \
	JZ 4(PC) \
	VMOVQ X, (T) \
	VPSRLDQ $8, X, X \
	ADDQ $8, T \
	TESTQ $4, CX \
	JZ 2(PC) \
	VMOVSS X, (T)

// SPLIT sets DX = CX/8 (full vectors) and Y15 = the mask of the CX mod 8
// tail lanes; clobbers CX, AX.
#define SPLIT \
	MOVQ CX, DX \
	SHRQ $3, DX \
	ANDQ $7, CX \
	TAILMASK(CX, Y15)

// func softmaxAVX2(x *float32, n int, scale float32) (mx float32, sum float32)
// x[i] ← exp(scale·(x[i] − max x)) / Σ, for n ≥ 1 values; returns max x
// and Σ = Σ_i exp(scale·(x[i] − max x)).
TEXT ·softmaxAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y13
	SPLIT

	// pass 1: maximum
	MOVL $0xff800000, AX
	VMOVD AX, X0
	VPBROADCASTD X0, Y0
	MOVQ SI, DI
	MOVQ DX, R8
	TESTQ R8, R8
	JZ maxtail
maxloop:
	VMAXPS (DI), Y0, Y0
	ADDQ $32, DI
	DECQ R8
	JNZ maxloop
maxtail:
	VMASKMOVPS (DI), Y15, Y2
	VBLENDVPS Y15, Y2, Y0, Y2
	VMAXPS Y2, Y0, Y0
	HREDUCE(VMAXPS)
	VMOVAPS Y0, Y14
	VMOVSS X0, mx+24(FP)

	// pass 2: x ← exp(scale·(x − max)), sum
	VXORPS Y12, Y12, Y12
	MOVQ SI, DI
	MOVQ DX, R8
	TESTQ R8, R8
	JZ exptail
exploop:
	VMOVUPS (DI), Y2
	VSUBPS Y14, Y2, Y2
	VMULPS Y13, Y2, Y2
	EXP(Y2, Y3, Y4)
	VMOVUPS Y2, (DI)
	VADDPS Y2, Y12, Y12
	ADDQ $32, DI
	DECQ R8
	JNZ exploop
exptail:
	VMOVAPS Y12, Y0
	TESTQ CX, CX
	JZ expdone
	VMASKMOVPS (DI), Y15, Y2
	VSUBPS Y14, Y2, Y2
	VMULPS Y13, Y2, Y2
	EXP(Y2, Y3, Y4)
	VANDPS Y15, Y2, Y2
	VADDPS Y2, Y12, Y0
	STORETAIL(Y2, X2, (DI), R8)
expdone:
	HREDUCE(VADDPS)
	VMOVSS X0, sum+28(FP)
	VMOVUPS one<>(SB), Y4
	VDIVPS Y0, Y4, Y4

	// pass 3: x ← x / sum
	MOVQ SI, DI
	MOVQ DX, R8
	TESTQ R8, R8
	JZ normtail
normloop:
	VMULPS (DI), Y4, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, DI
	DECQ R8
	JNZ normloop
normtail:
	TESTQ CX, CX
	JZ normdone
	VMASKMOVPS (DI), Y15, Y2
	VMULPS Y2, Y4, Y2
	STORETAIL(Y2, X2, (DI), R8)
normdone:
	VZEROUPPER
	RET

// func softmaxBackwardAVX2(p *float32, dp *float32, n int, scale float32)
// dp[i] ← scale·p[i]·(dp[i] − Σ_j p[j]·dp[j]).
TEXT ·softmaxBackwardAVX2(SB), NOSPLIT, $0-28
	MOVQ p+0(FP), SI
	MOVQ dp+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y13
	SPLIT

	// pass 1: dot = Σ p·dp
	VXORPS Y0, Y0, Y0
	MOVQ SI, R9
	MOVQ DI, R10
	MOVQ DX, R8
	TESTQ R8, R8
	JZ dottail
dotloop:
	VMOVUPS (R9), Y2
	VFMADD231PS (R10), Y2, Y0
	ADDQ $32, R9
	ADDQ $32, R10
	DECQ R8
	JNZ dotloop
dottail:
	VMASKMOVPS (R9), Y15, Y2
	VMASKMOVPS (R10), Y15, Y3
	VFMADD231PS Y3, Y2, Y0
	HREDUCE(VADDPS)

	// pass 2: dp ← scale·p·(dp − dot)
	MOVQ SI, R9
	MOVQ DI, R10
	MOVQ DX, R8
	TESTQ R8, R8
	JZ gradtail
gradloop:
	VMOVUPS (R10), Y3
	VSUBPS Y0, Y3, Y3
	VMULPS (R9), Y3, Y3
	VMULPS Y13, Y3, Y3
	VMOVUPS Y3, (R10)
	ADDQ $32, R9
	ADDQ $32, R10
	DECQ R8
	JNZ gradloop
gradtail:
	VMASKMOVPS (R9), Y15, Y2
	VMASKMOVPS (R10), Y15, Y3
	VSUBPS Y0, Y3, Y3
	VMULPS Y2, Y3, Y3
	VMULPS Y13, Y3, Y3
	STORETAIL(Y3, X3, (R10), R8)
	VZEROUPPER
	RET

// func expAVX2(x *float32, n int)
// x[i] ← e^x[i] for n ≥ 1 values.
TEXT ·expAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	SPLIT
	TESTQ DX, DX
	JZ tail
loop:
	VMOVUPS (DI), Y2
	EXP(Y2, Y3, Y4)
	VMOVUPS Y2, (DI)
	ADDQ $32, DI
	DECQ DX
	JNZ loop
tail:
	VMASKMOVPS (DI), Y15, Y2
	EXP(Y2, Y3, Y4)
	STORETAIL(Y2, X2, (DI), AX)
	VZEROUPPER
	RET

// func scaledExpAVX2(x *float32, n int, scale float32, shift float32)
// x[i] ← exp(scale·x[i] − shift) for n ≥ 1 values.
TEXT ·scaledExpAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y13
	VBROADCASTSS shift+20(FP), Y12
	SPLIT
	TESTQ DX, DX
	JZ stail
sloop:
	VMOVUPS (DI), Y2
	VFMSUB213PS Y12, Y13, Y2
	EXP(Y2, Y3, Y4)
	VMOVUPS Y2, (DI)
	ADDQ $32, DI
	DECQ DX
	JNZ sloop
stail:
	VMASKMOVPS (DI), Y15, Y2
	VFMSUB213PS Y12, Y13, Y2
	EXP(Y2, Y3, Y4)
	STORETAIL(Y2, X2, (DI), AX)
	VZEROUPPER
	RET

// PHI sets Y7 = Φ(Y0) and Y6 = e^(−Y0²/2), using Y1..Y5 (the algorithm of
// phi32 in gelu.go): z = |x|/√2, t = 1/(1 + p·z), q = ½·t·(a1 + t·(a2 +
// … + t·a5))·e^−z² = Φ(−|x|); Φ(x) = q where x's sign bit is set, else 1 − q.
#define PHI \
	VANDPS absmask<>(SB), Y0, Y1 \
	VMULPS invsqrt2<>(SB), Y1, Y1 \
	VMOVUPS erfp<>(SB), Y2 \
	VFMADD213PS one<>(SB), Y1, Y2 \
	VMOVUPS one<>(SB), Y3 \
	VDIVPS Y2, Y3, Y3 \
	VMOVUPS erfa5<>(SB), Y5 \
	VFMADD213PS erfa4<>(SB), Y3, Y5 \
	VFMADD213PS erfa3<>(SB), Y3, Y5 \
	VFMADD213PS erfa2<>(SB), Y3, Y5 \
	VFMADD213PS erfa1<>(SB), Y3, Y5 \
	VMULPS Y3, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VFNMADD231PS Y1, Y1, Y6 \
	EXP(Y6, Y4, Y2) \
	VMULPS Y6, Y5, Y5 \
	VMULPS half<>(SB), Y5, Y5 \
	VMOVUPS one<>(SB), Y7 \
	VSUBPS Y5, Y7, Y7 \
	VBLENDVPS Y0, Y5, Y7, Y7

// func geluForwardAVX2(out *float32, inp *float32, n int)
// out[i] = x·Φ(x), x = inp[i], for n ≥ 1 values.
TEXT ·geluForwardAVX2(SB), NOSPLIT, $0-24
	MOVQ out+0(FP), DI
	MOVQ inp+8(FP), SI
	MOVQ n+16(FP), CX
	SPLIT
	TESTQ DX, DX
	JZ fwdtail
fwdloop:
	VMOVUPS (SI), Y0
	PHI
	VMULPS Y7, Y0, Y7
	VMOVUPS Y7, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ DX
	JNZ fwdloop
fwdtail:
	VMASKMOVPS (SI), Y15, Y0
	PHI
	VMULPS Y7, Y0, Y7
	STORETAIL(Y7, X7, (DI), AX)
	VZEROUPPER
	RET

// GELUDERIV sets Y7 = Φ(x) + x·φ(x), the derivative of x·Φ(x), for x = Y0.
#define GELUDERIV \
	PHI \
	VMULPS invsqrt2pi<>(SB), Y6, Y6 \
	VFMADD231PS Y6, Y0, Y7

// func geluBackwardAVX2(dinp *float32, inp *float32, dout *float32, n int)
// dinp[i] += dout[i]·(Φ(x) + x·φ(x)), x = inp[i], for n ≥ 1 values.
TEXT ·geluBackwardAVX2(SB), NOSPLIT, $0-32
	MOVQ dinp+0(FP), DI
	MOVQ inp+8(FP), SI
	MOVQ dout+16(FP), R8
	MOVQ n+24(FP), CX
	SPLIT
	TESTQ DX, DX
	JZ bwdtail
bwdloop:
	VMOVUPS (SI), Y0
	GELUDERIV
	VMOVUPS (DI), Y4
	VFMADD231PS (R8), Y7, Y4
	VMOVUPS Y4, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	DECQ DX
	JNZ bwdloop
bwdtail:
	VMASKMOVPS (SI), Y15, Y0
	GELUDERIV
	VMASKMOVPS (DI), Y15, Y4
	VMASKMOVPS (R8), Y15, Y8
	VFMADD231PS Y8, Y7, Y4
	STORETAIL(Y4, X4, (DI), AX)
	VZEROUPPER
	RET

// func geluBackwardSetAVX2(dinp *float32, inp *float32, dout *float32, n int)
// dinp[i] = dout[i]·(Φ(x) + x·φ(x)), x = inp[i], for n ≥ 1 values.
TEXT ·geluBackwardSetAVX2(SB), NOSPLIT, $0-32
	MOVQ dinp+0(FP), DI
	MOVQ inp+8(FP), SI
	MOVQ dout+16(FP), R8
	MOVQ n+24(FP), CX
	SPLIT
	TESTQ DX, DX
	JZ settail
setloop:
	VMOVUPS (SI), Y0
	GELUDERIV
	VMULPS (R8), Y7, Y4
	VMOVUPS Y4, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	DECQ DX
	JNZ setloop
settail:
	VMASKMOVPS (SI), Y15, Y0
	GELUDERIV
	VMASKMOVPS (R8), Y15, Y8
	VMULPS Y8, Y7, Y4
	STORETAIL(Y4, X4, (DI), AX)
	VZEROUPPER
	RET

// func addAVX2(dst *float32, a *float32, b *float32, n int)
// dst[i] = a[i] + b[i] for n ≥ 1 values (dst may be a or b).
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ CX, DX
	SHRQ $5, DX
	JZ add1
add4:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VADDPS (R8), Y0, Y0
	VADDPS 32(R8), Y1, Y1
	VADDPS 64(R8), Y2, Y2
	VADDPS 96(R8), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, R8
	ADDQ $128, DI
	DECQ DX
	JNZ add4
add1:
	ANDQ $31, CX
	SPLIT
	TESTQ DX, DX
	JZ addtail
addloop:
	VMOVUPS (SI), Y0
	VADDPS (R8), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, DI
	DECQ DX
	JNZ addloop
addtail:
	VMASKMOVPS (SI), Y15, Y0
	VMASKMOVPS (R8), Y15, Y1
	VADDPS Y1, Y0, Y0
	STORETAIL(Y0, X0, (DI), AX)
	VZEROUPPER
	RET

// func transposeBlocksAVX2(dst *float32, ldd int, src *float32, lds int, rows int, cols int)
// dst[j·ldd + i] = src[i·lds + j] for i < rows, j < cols, rows and cols
// positive multiples of 8: 8×8 blocks transposed in registers (unpack,
// shuffle, 128-bit lane permute).
TEXT ·transposeBlocksAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R9
	SHLQ $2, R9
	MOVQ rows+32(FP), CX
	SHRQ $3, CX
	LEAQ (R9)(R9*2), R10
	LEAQ (R8)(R8*2), R11
trow:
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ cols+40(FP), DX
	SHRQ $3, DX
tcol:
	LEAQ (AX)(R9*4), R12
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(R9*1), Y1
	VMOVUPS (AX)(R9*2), Y2
	VMOVUPS (AX)(R10*1), Y3
	VMOVUPS (R12), Y4
	VMOVUPS (R12)(R9*1), Y5
	VMOVUPS (R12)(R9*2), Y6
	VMOVUPS (R12)(R10*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xee, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xee, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xee, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xee, Y15, Y13, Y7
	LEAQ (BX)(R8*4), R12
	VPERM2F128 $0x20, Y4, Y0, Y8
	VMOVUPS Y8, (BX)
	VPERM2F128 $0x20, Y5, Y1, Y8
	VMOVUPS Y8, (BX)(R8*1)
	VPERM2F128 $0x20, Y6, Y2, Y8
	VMOVUPS Y8, (BX)(R8*2)
	VPERM2F128 $0x20, Y7, Y3, Y8
	VMOVUPS Y8, (BX)(R11*1)
	VPERM2F128 $0x31, Y4, Y0, Y8
	VMOVUPS Y8, (R12)
	VPERM2F128 $0x31, Y5, Y1, Y8
	VMOVUPS Y8, (R12)(R8*1)
	VPERM2F128 $0x31, Y6, Y2, Y8
	VMOVUPS Y8, (R12)(R8*2)
	VPERM2F128 $0x31, Y7, Y3, Y8
	VMOVUPS Y8, (R12)(R11*1)
	ADDQ $32, AX
	LEAQ (R12)(R8*4), BX
	DECQ DX
	JNZ tcol
	LEAQ (SI)(R9*8), SI
	ADDQ $32, DI
	DECQ CX
	JNZ trow
	VZEROUPPER
	RET

// func layernormAVX2(out *float32, mean *float32, rstd *float32, inp *float32, w *float32, b *float32, rows int, c int, invC float32, eps float32)
// Per row x of inp (c ≥ 1 values): mean = Σx/c, rstd = 1/√(Σ(x−mean)²/c + eps),
// out = (x − mean)·rstd·w + b.
TEXT ·layernormAVX2(SB), NOSPLIT, $0-72
	MOVQ out+0(FP), DI
	MOVQ mean+8(FP), R10
	MOVQ rstd+16(FP), R11
	MOVQ inp+24(FP), SI
	MOVQ w+32(FP), R8
	MOVQ b+40(FP), R9
	MOVQ rows+48(FP), BX
	MOVQ c+56(FP), CX
	VBROADCASTSS invC+64(FP), Y14
	VBROADCASTSS eps+68(FP), Y13
	// DX = full vectors per row, Y15 = tail mask, R13 = row bytes
	MOVQ CX, R13
	SHLQ $2, R13
	SPLIT
	TESTQ BX, BX
	JZ fdone
frow:
	// mean
	VXORPS Y0, Y0, Y0
	XORQ AX, AX
	MOVQ DX, R12
	TESTQ R12, R12
	JZ fsumtail
fsum:
	VADDPS (SI)(AX*1), Y0, Y0
	ADDQ $32, AX
	DECQ R12
	JNZ fsum
fsumtail:
	VMASKMOVPS (SI)(AX*1), Y15, Y2
	VADDPS Y2, Y0, Y0
	HREDUCE(VADDPS)
	VMULPS Y14, Y0, Y4
	// variance
	VXORPS Y0, Y0, Y0
	XORQ AX, AX
	MOVQ DX, R12
	TESTQ R12, R12
	JZ fvartail
fvar:
	VMOVUPS (SI)(AX*1), Y2
	VSUBPS Y4, Y2, Y2
	VFMADD231PS Y2, Y2, Y0
	ADDQ $32, AX
	DECQ R12
	JNZ fvar
fvartail:
	VMASKMOVPS (SI)(AX*1), Y15, Y2
	VSUBPS Y4, Y2, Y2
	VANDPS Y15, Y2, Y2
	VFMADD231PS Y2, Y2, Y0
	HREDUCE(VADDPS)
	VMULPS Y14, Y0, Y0
	VADDPS Y13, Y0, Y0
	VSQRTPS Y0, Y0
	VMOVUPS one<>(SB), Y5
	VDIVPS Y0, Y5, Y5
	VMOVSS X4, (R10)
	VMOVSS X5, (R11)
	// normalise
	XORQ AX, AX
	MOVQ DX, R12
	TESTQ R12, R12
	JZ fnormtail
fnorm:
	VMOVUPS (SI)(AX*1), Y2
	VSUBPS Y4, Y2, Y2
	VMULPS Y5, Y2, Y2
	VMOVUPS (R9)(AX*1), Y3
	VFMADD231PS (R8)(AX*1), Y2, Y3
	VMOVUPS Y3, (DI)(AX*1)
	ADDQ $32, AX
	DECQ R12
	JNZ fnorm
fnormtail:
	VMASKMOVPS (SI)(AX*1), Y15, Y2
	VSUBPS Y4, Y2, Y2
	VMULPS Y5, Y2, Y2
	VMASKMOVPS (R9)(AX*1), Y15, Y3
	VMASKMOVPS (R8)(AX*1), Y15, Y6
	VFMADD231PS Y6, Y2, Y3
	STORETAIL(Y3, X3, (DI)(AX*1), R12)
	ADDQ R13, SI
	ADDQ R13, DI
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ BX
	JNZ frow
fdone:
	VZEROUPPER
	RET

// func layernormBackwardAVX2(dinp *float32, dw *float32, db *float32, dout *float32, inp *float32, w *float32, mean *float32, rstd *float32, rows int, c int, invC float32)
// Per row, with x̂ = (x − mean)·rstd, d = dout, g = d·w:
// db += d, dw += d·x̂, dinp += rstd·(g − mean(g) − x̂·mean(g·x̂)).
TEXT ·layernormBackwardAVX2(SB), NOSPLIT, $0-84
	MOVQ dinp+0(FP), DI
	MOVQ dw+8(FP), R10
	MOVQ db+16(FP), R11
	MOVQ dout+24(FP), R8
	MOVQ inp+32(FP), SI
	MOVQ w+40(FP), R9
	MOVQ mean+48(FP), R12
	MOVQ rstd+56(FP), R13
	MOVQ rows+64(FP), BX
	MOVQ c+72(FP), CX
	VBROADCASTSS invC+80(FP), Y14
	SPLIT
	MOVQ c+72(FP), R15
	SHLQ $2, R15
	TESTQ BX, BX
	JZ bdone
brow:
	VBROADCASTSS (R12), Y4
	VBROADCASTSS (R13), Y5
	// gm = mean(g), gxm = mean(g·x̂)
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ AX, AX
	MOVQ DX, R14
	TESTQ R14, R14
	JZ bsumtail
bsum:
	VMOVUPS (SI)(AX*1), Y2
	VSUBPS Y4, Y2, Y2
	VMULPS Y5, Y2, Y2
	VMOVUPS (R8)(AX*1), Y3
	VMULPS (R9)(AX*1), Y3, Y3
	VADDPS Y3, Y6, Y6
	VFMADD231PS Y3, Y2, Y7
	ADDQ $32, AX
	DECQ R14
	JNZ bsum
bsumtail:
	VMASKMOVPS (SI)(AX*1), Y15, Y2
	VSUBPS Y4, Y2, Y2
	VMULPS Y5, Y2, Y2
	VMASKMOVPS (R8)(AX*1), Y15, Y3
	VMASKMOVPS (R9)(AX*1), Y15, Y8
	VMULPS Y8, Y3, Y3
	VADDPS Y3, Y6, Y6
	VFMADD231PS Y3, Y2, Y7
	VMOVAPS Y6, Y0
	HREDUCE(VADDPS)
	VMULPS Y14, Y0, Y6
	VMOVAPS Y7, Y0
	HREDUCE(VADDPS)
	VMULPS Y14, Y0, Y7
	// gradients
	XORQ AX, AX
	MOVQ DX, R14
	TESTQ R14, R14
	JZ bgradtail
bgrad:
	VMOVUPS (SI)(AX*1), Y2
	VSUBPS Y4, Y2, Y2
	VMULPS Y5, Y2, Y2
	VMOVUPS (R8)(AX*1), Y3
	VMOVUPS (R11)(AX*1), Y9
	VADDPS Y3, Y9, Y9
	VMOVUPS Y9, (R11)(AX*1)
	VMOVUPS (R10)(AX*1), Y9
	VFMADD231PS Y3, Y2, Y9
	VMOVUPS Y9, (R10)(AX*1)
	VMULPS (R9)(AX*1), Y3, Y3
	VSUBPS Y6, Y3, Y3
	VFNMADD231PS Y7, Y2, Y3
	VMOVUPS (DI)(AX*1), Y9
	VFMADD231PS Y5, Y3, Y9
	VMOVUPS Y9, (DI)(AX*1)
	ADDQ $32, AX
	DECQ R14
	JNZ bgrad
bgradtail:
	VMASKMOVPS (SI)(AX*1), Y15, Y2
	VSUBPS Y4, Y2, Y2
	VMULPS Y5, Y2, Y2
	VMASKMOVPS (R8)(AX*1), Y15, Y3
	VMASKMOVPS (R11)(AX*1), Y15, Y9
	VADDPS Y3, Y9, Y9
	STORETAIL(Y9, X9, (R11)(AX*1), R14)
	VMASKMOVPS (R10)(AX*1), Y15, Y9
	VFMADD231PS Y3, Y2, Y9
	STORETAIL(Y9, X9, (R10)(AX*1), R14)
	VMASKMOVPS (R9)(AX*1), Y15, Y8
	VMULPS Y8, Y3, Y3
	VSUBPS Y6, Y3, Y3
	VFNMADD231PS Y7, Y2, Y3
	VMASKMOVPS (DI)(AX*1), Y15, Y9
	VFMADD231PS Y5, Y3, Y9
	STORETAIL(Y9, X9, (DI)(AX*1), R14)
	ADDQ R15, SI
	ADDQ R15, R8
	ADDQ R15, DI
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ BX
	JNZ brow
bdone:
	VZEROUPPER
	RET
