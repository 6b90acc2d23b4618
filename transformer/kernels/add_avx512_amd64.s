//go:build amd64 && !purego

#include "textflag.h"

// func addSIMD(dst *float32, a *float32, b *float32, n int)
// dst[i] = a[i] + b[i] for n ≥ 1 values (dst may be a or b).
TEXT ·addSIMD(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ CX, DX
	SHRQ $6, DX
	JZ vec
loop4:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	VADDPS (R8), Z0, Z0
	VADDPS 64(R8), Z1, Z1
	VADDPS 128(R8), Z2, Z2
	VADDPS 192(R8), Z3, Z3
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ $256, SI
	ADDQ $256, R8
	ADDQ $256, DI
	DECQ DX
	JNZ loop4
vec:
	ANDQ $63, CX
	JZ done
loop1:
	MOVQ CX, DX
	CMPQ DX, $16
	JLE last
	MOVQ $16, DX
last:
	MOVQ CX, R9
	MOVL $1, AX
	MOVQ DX, CX
	SHLL CX, AX
	DECL AX
	MOVQ R9, CX
	KMOVW AX, K1
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (R8), K1, Z1
	VADDPS Z1, Z0, Z0
	VMOVUPS Z0, K1, (DI)
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, DI
	SUBQ DX, CX
	JG loop1
done:
	VZEROUPPER
	RET
