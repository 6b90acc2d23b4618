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

// func addRowsBlockSIMD(dst *float32, m *float32, rows int, ld int, mask uint64)
// dst[j] += m[r·ld + j] for r = 0..rows−1 in order, for the columns j < 64
// whose bit is set in mask (a prefix: bit j = column j; rows ≥ 1, ld in
// floats). dst stays in four registers; no access to the masked columns.
TEXT ·addRowsBlockSIMD(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ ld+24(FP), R9
	SHLQ $2, R9
	MOVQ mask+32(FP), AX
	KMOVW AX, K1
	SHRQ $16, AX
	KMOVW AX, K2
	SHRQ $16, AX
	KMOVW AX, K3
	SHRQ $16, AX
	KMOVW AX, K4
	VMOVUPS.Z (DI), K1, Z0
	VMOVUPS.Z 64(DI), K2, Z1
	VMOVUPS.Z 128(DI), K3, Z2
	VMOVUPS.Z 192(DI), K4, Z3
rows:
	VMOVUPS.Z (SI), K1, Z4
	VMOVUPS.Z 64(SI), K2, Z5
	VMOVUPS.Z 128(SI), K3, Z6
	VMOVUPS.Z 192(SI), K4, Z7
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	ADDQ R9, SI
	DECQ CX
	JNZ rows
	VMOVUPS Z0, K1, (DI)
	VMOVUPS Z1, K2, 64(DI)
	VMOVUPS Z2, K3, 128(DI)
	VMOVUPS Z3, K4, 192(DI)
	VZEROUPPER
	RET
