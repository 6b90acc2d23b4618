//go:build amd64 && !purego

#include "textflag.h"

#include "vecmath_avx512_amd64.h"

// func softmaxSIMD(x *float32, n int, scale float32) (mx float32, sum float32)
// x[i] ← exp(scale·(x[i] − max x)) / Σ, for n ≥ 1 values; returns max x
// and Σ = Σ_i exp(scale·(x[i] − max x)).
TEXT ·softmaxSIMD(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS scale+16(FP), Z31
	// K1 = mask of the n mod 16 tail values, DX = number of full vectors
	MOVQ CX, DX
	SHRQ $4, DX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1

	// pass 1: maximum
	MOVL $0xff800000, AX
	VPBROADCASTD AX, Z0
	MOVQ SI, DI
	MOVQ DX, R8
	TESTQ R8, R8
	JZ maxtail
maxloop:
	VMAXPS (DI), Z0, Z0
	ADDQ $64, DI
	DECQ R8
	JNZ maxloop
maxtail:
	VMOVAPS Z0, Z2
	VMOVUPS (DI), K1, Z2
	VMAXPS Z2, Z0, Z0
	HREDUCE(VMAXPS)
	VMOVAPS Z0, Z30
	VMOVSS X0, mx+24(FP)

	// pass 2: x ← exp(scale·(x − max)), sum
	EXPCONSTS
	VPXORD Z0, Z0, Z0
	MOVQ SI, DI
	MOVQ DX, R8
	TESTQ R8, R8
	JZ exptail
exploop:
	VMOVUPS (DI), Z2
	VSUBPS Z30, Z2, Z2
	VMULPS Z31, Z2, Z2
	EXP(Z2, Z3)
	VMOVUPS Z2, (DI)
	VADDPS Z2, Z0, Z0
	ADDQ $64, DI
	DECQ R8
	JNZ exploop
exptail:
	VMOVUPS.Z (DI), K1, Z2
	VSUBPS Z30, Z2, Z2
	VMULPS Z31, Z2, Z2
	EXP(Z2, Z3)
	VMOVUPS Z2, K1, (DI)
	VADDPS Z2, Z0, K1, Z0
	HREDUCE(VADDPS)
	VMOVSS X0, sum+28(FP)
	VDIVPS Z0, Z19, Z4

	// pass 3: x ← x / sum
	MOVQ SI, DI
	MOVQ DX, R8
	TESTQ R8, R8
	JZ normtail
normloop:
	VMULPS (DI), Z4, Z2
	VMOVUPS Z2, (DI)
	ADDQ $64, DI
	DECQ R8
	JNZ normloop
normtail:
	VMOVUPS.Z (DI), K1, Z2
	VMULPS Z2, Z4, Z2
	VMOVUPS Z2, K1, (DI)
	VZEROUPPER
	RET

// func softmaxBackwardSIMD(p *float32, dp *float32, n int, scale float32)
// dp[i] ← scale·p[i]·(dp[i] − Σ_j p[j]·dp[j]).
TEXT ·softmaxBackwardSIMD(SB), NOSPLIT, $0-28
	MOVQ p+0(FP), SI
	MOVQ dp+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Z31
	MOVQ CX, DX
	SHRQ $4, DX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1

	// pass 1: dot = Σ p·dp
	VPXORD Z0, Z0, Z0
	MOVQ SI, R9
	MOVQ DI, R10
	MOVQ DX, R8
	TESTQ R8, R8
	JZ dottail
dotloop:
	VMOVUPS (R9), Z2
	VFMADD231PS (R10), Z2, Z0
	ADDQ $64, R9
	ADDQ $64, R10
	DECQ R8
	JNZ dotloop
dottail:
	VMOVUPS.Z (R9), K1, Z2
	VMOVUPS.Z (R10), K1, Z3
	VFMADD231PS Z3, Z2, Z0
	HREDUCE(VADDPS)

	// pass 2: dp ← scale·p·(dp − dot)
	MOVQ SI, R9
	MOVQ DI, R10
	MOVQ DX, R8
	TESTQ R8, R8
	JZ gradtail
gradloop:
	VMOVUPS (R10), Z3
	VSUBPS Z0, Z3, Z3
	VMULPS (R9), Z3, Z3
	VMULPS Z31, Z3, Z3
	VMOVUPS Z3, (R10)
	ADDQ $64, R9
	ADDQ $64, R10
	DECQ R8
	JNZ gradloop
gradtail:
	VMOVUPS.Z (R9), K1, Z2
	VMOVUPS.Z (R10), K1, Z3
	VSUBPS Z0, Z3, Z3
	VMULPS Z2, Z3, Z3
	VMULPS Z31, Z3, Z3
	VMOVUPS Z3, K1, (R10)
	VZEROUPPER
	RET

// func expSIMD(x *float32, n int)
// x[i] ← e^x[i] for n ≥ 1 values.
TEXT ·expSIMD(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ CX, DX
	SHRQ $4, DX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	EXPCONSTS
	TESTQ DX, DX
	JZ tail
loop:
	VMOVUPS (DI), Z2
	EXP(Z2, Z3)
	VMOVUPS Z2, (DI)
	ADDQ $64, DI
	DECQ DX
	JNZ loop
tail:
	VMOVUPS.Z (DI), K1, Z2
	EXP(Z2, Z3)
	VMOVUPS Z2, K1, (DI)
	VZEROUPPER
	RET

// func scaledExpSIMD(x *float32, n int, scale float32, shift float32)
// x[i] ← exp(scale·x[i] − shift) for n ≥ 1 values.
TEXT ·scaledExpSIMD(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS scale+16(FP), Z31
	VBROADCASTSS shift+20(FP), Z30
	MOVQ CX, DX
	SHRQ $4, DX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	EXPCONSTS
	TESTQ DX, DX
	JZ stail
sloop:
	VMOVUPS (DI), Z2
	VFMSUB213PS Z30, Z31, Z2
	EXP(Z2, Z3)
	VMOVUPS Z2, (DI)
	ADDQ $64, DI
	DECQ DX
	JNZ sloop
stail:
	VMOVUPS.Z (DI), K1, Z2
	VFMSUB213PS Z30, Z31, Z2
	EXP(Z2, Z3)
	VMOVUPS Z2, K1, (DI)
	VZEROUPPER
	RET
