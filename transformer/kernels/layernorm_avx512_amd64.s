//go:build amd64 && !purego

#include "textflag.h"
#include "vecmath_avx512_amd64.h"

// func layernormSIMD(out *float32, mean *float32, rstd *float32, inp *float32, w *float32, b *float32, rows int, c int, invC float32, eps float32)
// Per row x of inp (c ≥ 1 values): mean = Σx/c, rstd = 1/√(Σ(x−mean)²/c + eps),
// out = (x − mean)·rstd·w + b.
TEXT ·layernormSIMD(SB), NOSPLIT, $0-72
	MOVQ out+0(FP), DI
	MOVQ mean+8(FP), R10
	MOVQ rstd+16(FP), R11
	MOVQ inp+24(FP), SI
	MOVQ w+32(FP), R8
	MOVQ b+40(FP), R9
	MOVQ rows+48(FP), CX
	MOVQ c+56(FP), BX
	VBROADCASTSS invC+64(FP), Z31
	VBROADCASTSS eps+68(FP), Z30
	MOVL $0x3f800000, AX
	VPBROADCASTD AX, Z29
	// DX = full vectors per row, K1 = tail mask, BX = row bytes
	MOVQ BX, DX
	SHRQ $4, DX
	MOVQ CX, R12
	MOVQ BX, CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	MOVQ R12, CX
	SHLQ $2, BX
	TESTQ CX, CX
	JZ fdone
frow:
	// mean
	VPXORD Z0, Z0, Z0
	XORQ AX, AX
	MOVQ DX, R12
	TESTQ R12, R12
	JZ fsumtail
fsum:
	VADDPS (SI)(AX*1), Z0, Z0
	ADDQ $64, AX
	DECQ R12
	JNZ fsum
fsumtail:
	VMOVUPS.Z (SI)(AX*1), K1, Z2
	VADDPS Z2, Z0, Z0
	HREDUCE(VADDPS)
	VMULPS Z31, Z0, Z4
	// variance
	VPXORD Z0, Z0, Z0
	XORQ AX, AX
	MOVQ DX, R12
	TESTQ R12, R12
	JZ fvartail
fvar:
	VMOVUPS (SI)(AX*1), Z2
	VSUBPS Z4, Z2, Z2
	VFMADD231PS Z2, Z2, Z0
	ADDQ $64, AX
	DECQ R12
	JNZ fvar
fvartail:
	VMOVUPS.Z (SI)(AX*1), K1, Z2
	VSUBPS.Z Z4, Z2, K1, Z2
	VFMADD231PS Z2, Z2, Z0
	HREDUCE(VADDPS)
	VMULPS Z31, Z0, Z0
	VADDPS Z30, Z0, Z0
	VSQRTPS Z0, Z0
	VDIVPS Z0, Z29, Z5
	VMOVSS X4, (R10)
	VMOVSS X5, (R11)
	// normalise
	XORQ AX, AX
	MOVQ DX, R12
	TESTQ R12, R12
	JZ fnormtail
fnorm:
	VMOVUPS (SI)(AX*1), Z2
	VSUBPS Z4, Z2, Z2
	VMULPS Z5, Z2, Z2
	VMOVUPS (R9)(AX*1), Z3
	VFMADD231PS (R8)(AX*1), Z2, Z3
	VMOVUPS Z3, (DI)(AX*1)
	ADDQ $64, AX
	DECQ R12
	JNZ fnorm
fnormtail:
	VMOVUPS.Z (SI)(AX*1), K1, Z2
	VSUBPS Z4, Z2, Z2
	VMULPS Z5, Z2, Z2
	VMOVUPS.Z (R9)(AX*1), K1, Z3
	VMOVUPS.Z (R8)(AX*1), K1, Z6
	VFMADD231PS Z6, Z2, Z3
	VMOVUPS Z3, K1, (DI)(AX*1)
	ADDQ BX, SI
	ADDQ BX, DI
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ frow
fdone:
	VZEROUPPER
	RET

// func layernormBackwardSIMD(dinp *float32, dw *float32, db *float32, dout *float32, inp *float32, w *float32, mean *float32, rstd *float32, rows int, c int, invC float32)
// Per row, with x̂ = (x − mean)·rstd, d = dout, g = d·w:
// db += d, dw += d·x̂, dinp += rstd·(g − mean(g) − x̂·mean(g·x̂)).
TEXT ·layernormBackwardSIMD(SB), NOSPLIT, $0-84
	MOVQ dinp+0(FP), DI
	MOVQ dw+8(FP), R10
	MOVQ db+16(FP), R11
	MOVQ dout+24(FP), R8
	MOVQ inp+32(FP), SI
	MOVQ w+40(FP), R9
	MOVQ mean+48(FP), R12
	MOVQ rstd+56(FP), R13
	MOVQ rows+64(FP), CX
	MOVQ c+72(FP), BX
	VBROADCASTSS invC+80(FP), Z31
	MOVQ BX, DX
	SHRQ $4, DX
	MOVQ CX, R14
	MOVQ BX, CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	MOVQ R14, CX
	SHLQ $2, BX
	TESTQ CX, CX
	JZ bdone
brow:
	VBROADCASTSS (R12), Z4
	VBROADCASTSS (R13), Z5
	// gm = mean(g), gxm = mean(g·x̂)
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	XORQ AX, AX
	MOVQ DX, R14
	TESTQ R14, R14
	JZ bsumtail
bsum:
	VMOVUPS (SI)(AX*1), Z2
	VSUBPS Z4, Z2, Z2
	VMULPS Z5, Z2, Z2
	VMOVUPS (R8)(AX*1), Z3
	VMULPS (R9)(AX*1), Z3, Z3
	VADDPS Z3, Z6, Z6
	VFMADD231PS Z3, Z2, Z7
	ADDQ $64, AX
	DECQ R14
	JNZ bsum
bsumtail:
	VMOVUPS.Z (SI)(AX*1), K1, Z2
	VSUBPS Z4, Z2, Z2
	VMULPS Z5, Z2, Z2
	VMOVUPS.Z (R8)(AX*1), K1, Z3
	VMOVUPS.Z (R9)(AX*1), K1, Z8
	VMULPS Z8, Z3, Z3
	VADDPS Z3, Z6, Z6
	VFMADD231PS Z3, Z2, Z7
	VMOVAPS Z6, Z0
	HREDUCE(VADDPS)
	VMULPS Z31, Z0, Z6
	VMOVAPS Z7, Z0
	HREDUCE(VADDPS)
	VMULPS Z31, Z0, Z7
	// gradients
	XORQ AX, AX
	MOVQ DX, R14
	TESTQ R14, R14
	JZ bgradtail
bgrad:
	VMOVUPS (SI)(AX*1), Z2
	VSUBPS Z4, Z2, Z2
	VMULPS Z5, Z2, Z2
	VMOVUPS (R8)(AX*1), Z3
	VMOVUPS (R11)(AX*1), Z9
	VADDPS Z3, Z9, Z9
	VMOVUPS Z9, (R11)(AX*1)
	VMOVUPS (R10)(AX*1), Z9
	VFMADD231PS Z3, Z2, Z9
	VMOVUPS Z9, (R10)(AX*1)
	VMULPS (R9)(AX*1), Z3, Z3
	VSUBPS Z6, Z3, Z3
	VFNMADD231PS Z7, Z2, Z3
	VMOVUPS (DI)(AX*1), Z9
	VFMADD231PS Z5, Z3, Z9
	VMOVUPS Z9, (DI)(AX*1)
	ADDQ $64, AX
	DECQ R14
	JNZ bgrad
bgradtail:
	VMOVUPS.Z (SI)(AX*1), K1, Z2
	VSUBPS Z4, Z2, Z2
	VMULPS Z5, Z2, Z2
	VMOVUPS.Z (R8)(AX*1), K1, Z3
	VMOVUPS.Z (R11)(AX*1), K1, Z9
	VADDPS Z3, Z9, Z9
	VMOVUPS Z9, K1, (R11)(AX*1)
	VMOVUPS.Z (R10)(AX*1), K1, Z9
	VFMADD231PS Z3, Z2, Z9
	VMOVUPS Z9, K1, (R10)(AX*1)
	VMOVUPS.Z (R9)(AX*1), K1, Z8
	VMULPS Z8, Z3, Z3
	VSUBPS Z6, Z3, Z3
	VFNMADD231PS Z7, Z2, Z3
	VMOVUPS.Z (DI)(AX*1), K1, Z9
	VFMADD231PS Z5, Z3, Z9
	VMOVUPS Z9, K1, (DI)(AX*1)
	ADDQ BX, SI
	ADDQ BX, R8
	ADDQ BX, DI
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ CX
	JNZ brow
bdone:
	VZEROUPPER
	RET
