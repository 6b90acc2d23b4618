//go:build amd64 && !purego

#include "textflag.h"
#include "vecmath_avx512_amd64.h"

// GELU with Φ(x) = ½(1 + erf(x/√2)) from Abramowitz & Stegun 7.1.26: for
// z = |x|/√2 ≥ 0, t = 1/(1 + p·z), erfc(z) ≈ t·(a1 + t·(a2 + … + t·a5))·e^−z²
// (|error| ≤ 1.4e-7), so q = Φ(−|x|) = ½·erfc(z) and Φ(x) = 1 − q for
// x ≥ 0, q for x < 0; φ(x) = e^−z²/√(2π) reuses the exponential. Same
// algorithm as erfcHalf in gelu.go.
//
// GELUCONSTS sets Z9 = sign bit, Z11 = 1/√(2π), Z12 = ½, Z13..Z17 = a1..a5,
// Z30 = 1/√2, Z31 = p (after EXPCONSTS: Z19 = 1).
#define GELUCONSTS \
	MOVL $0x80000000, AX \
	VPBROADCASTD AX, Z9 \
	MOVL $0x3ecc422a, AX \
	VPBROADCASTD AX, Z11 \
	MOVL $0x3f000000, AX \
	VPBROADCASTD AX, Z12 \
	MOVL $0x3e827906, AX \
	VPBROADCASTD AX, Z13 \
	MOVL $0xbe91a98e, AX \
	VPBROADCASTD AX, Z14 \
	MOVL $0x3fb5f0e3, AX \
	VPBROADCASTD AX, Z15 \
	MOVL $0xbfba00e3, AX \
	VPBROADCASTD AX, Z16 \
	MOVL $0x3f87dc22, AX \
	VPBROADCASTD AX, Z17 \
	MOVL $0x3f3504f3, AX \
	VPBROADCASTD AX, Z30 \
	MOVL $0x3ea7ba05, AX \
	VPBROADCASTD AX, Z31

// PHI sets Z7 = Φ(Z0) and Z6 = e^(−Z0²/2), using Z1..Z5, K2.
#define PHI \
	VPANDND Z0, Z9, Z1 \
	VMULPS Z30, Z1, Z1 \
	VMOVAPS Z1, Z2 \
	VFMADD213PS Z19, Z31, Z2 \
	VDIVPS Z2, Z19, Z3 \
	VMOVAPS Z17, Z5 \
	VFMADD213PS Z16, Z3, Z5 \
	VFMADD213PS Z15, Z3, Z5 \
	VFMADD213PS Z14, Z3, Z5 \
	VFMADD213PS Z13, Z3, Z5 \
	VMULPS Z3, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VFNMADD231PS Z1, Z1, Z6 \
	EXP(Z6, Z4) \
	VMULPS Z6, Z5, Z5 \
	VMULPS Z12, Z5, Z5 \
	VSUBPS Z5, Z19, Z7 \
	VPTESTMD Z9, Z0, K2 \
	VMOVAPS Z5, K2, Z7

// func geluForwardSIMD(out *float32, inp *float32, n int)
// out[i] = x·Φ(x), x = inp[i], for n ≥ 1 values.
TEXT ·geluForwardSIMD(SB), NOSPLIT, $0-24
	MOVQ out+0(FP), DI
	MOVQ inp+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ CX, DX
	SHRQ $4, DX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	EXPCONSTS
	GELUCONSTS
	TESTQ DX, DX
	JZ fwdtail
fwdloop:
	VMOVUPS (SI), Z0
	PHI
	VMULPS Z7, Z0, Z7
	VMOVUPS Z7, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ DX
	JNZ fwdloop
fwdtail:
	VMOVUPS.Z (SI), K1, Z0
	PHI
	VMULPS Z7, Z0, Z7
	VMOVUPS Z7, K1, (DI)
	VZEROUPPER
	RET

// GELUBWDSPLIT splits the GELU backward kernels' n (CX) into DX full
// vectors and the mask K1 of the n mod 16 tail values, and sets the
// constants of EXP and PHI.
#define GELUBWDSPLIT \
	MOVQ CX, DX \
	SHRQ $4, DX \
	ANDQ $15, CX \
	MOVL $1, AX \
	SHLL CX, AX \
	DECL AX \
	KMOVW AX, K1 \
	EXPCONSTS \
	GELUCONSTS

// GELUDERIV sets Z7 = Φ(x) + x·φ(x), the derivative of x·Φ(x), for x = Z0.
#define GELUDERIV \
	PHI \
	VMULPS Z11, Z6, Z6 \
	VFMADD231PS Z6, Z0, Z7

// func geluBackwardSIMD(dinp *float32, inp *float32, dout *float32, n int)
// dinp[i] += dout[i]·(Φ(x) + x·φ(x)), x = inp[i], for n ≥ 1 values.
TEXT ·geluBackwardSIMD(SB), NOSPLIT, $0-32
	MOVQ dinp+0(FP), DI
	MOVQ inp+8(FP), SI
	MOVQ dout+16(FP), R8
	MOVQ n+24(FP), CX
	GELUBWDSPLIT
	TESTQ DX, DX
	JZ bwdtail
bwdloop:
	VMOVUPS (SI), Z0
	GELUDERIV
	VMOVUPS (DI), Z4
	VFMADD231PS (R8), Z7, Z4
	VMOVUPS Z4, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, R8
	DECQ DX
	JNZ bwdloop
bwdtail:
	VMOVUPS.Z (SI), K1, Z0
	GELUDERIV
	VMOVUPS.Z (DI), K1, Z4
	VMOVUPS.Z (R8), K1, Z8
	VFMADD231PS Z8, Z7, Z4
	VMOVUPS Z4, K1, (DI)
	VZEROUPPER
	RET

// func geluBackwardSetSIMD(dinp *float32, inp *float32, dout *float32, n int)
// dinp[i] = dout[i]·(Φ(x) + x·φ(x)), x = inp[i], for n ≥ 1 values.
TEXT ·geluBackwardSetSIMD(SB), NOSPLIT, $0-32
	MOVQ dinp+0(FP), DI
	MOVQ inp+8(FP), SI
	MOVQ dout+16(FP), R8
	MOVQ n+24(FP), CX
	GELUBWDSPLIT
	TESTQ DX, DX
	JZ settail
setloop:
	VMOVUPS (SI), Z0
	GELUDERIV
	VMULPS (R8), Z7, Z4
	VMOVUPS Z4, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, R8
	DECQ DX
	JNZ setloop
settail:
	VMOVUPS.Z (SI), K1, Z0
	GELUDERIV
	VMOVUPS.Z (R8), K1, Z8
	VMULPS Z8, Z7, Z4
	VMOVUPS Z4, K1, (DI)
	VZEROUPPER
	RET
