//go:build amd64 && !purego

#include "textflag.h"

DATA iota32<>+0(SB)/4, $0
DATA iota32<>+4(SB)/4, $1
DATA iota32<>+8(SB)/4, $2
DATA iota32<>+12(SB)/4, $3
DATA iota32<>+16(SB)/4, $4
DATA iota32<>+20(SB)/4, $5
DATA iota32<>+24(SB)/4, $6
DATA iota32<>+28(SB)/4, $7
DATA iota32<>+32(SB)/4, $8
DATA iota32<>+36(SB)/4, $9
DATA iota32<>+40(SB)/4, $10
DATA iota32<>+44(SB)/4, $11
DATA iota32<>+48(SB)/4, $12
DATA iota32<>+52(SB)/4, $13
DATA iota32<>+56(SB)/4, $14
DATA iota32<>+60(SB)/4, $15
GLOBL iota32<>(SB), RODATA, $64

// func transposeSIMD(dst *float32, ldd int, src *float32, lds int, rows int, cols int)
// dst[j·ldd + i] = src[i·lds + j] for i < rows, j < cols (rows, cols ≥ 1;
// 16·lds·4 < 2³¹). Per 16 rows of src, one gather per column j.
TEXT ·transposeSIMD(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), AX
	SHLQ $2, AX
	MOVQ rows+32(FP), CX
	MOVQ cols+40(FP), R9
	// Z1 = byte offsets of 16 consecutive rows
	VPBROADCASTD AX, Z2
	VMOVDQU32 iota32<>(SB), Z1
	VPMULLD Z2, Z1, Z1
	// R10 = 16 rows of src in bytes
	MOVQ AX, R10
	SHLQ $4, R10
rowblock:
	// K2 = mask of the rows left in this block
	MOVQ CX, BX
	CMPQ BX, $16
	JLE masked
	MOVQ $16, BX
masked:
	MOVQ CX, R13
	MOVL $1, DX
	MOVQ BX, CX
	SHLL CX, DX
	DECL DX
	MOVQ R13, CX
	KMOVW DX, K2
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ R9, R13
col:
	KMOVW K2, K1
	VPXORD Z0, Z0, Z0
	VPGATHERDD (R11)(Z1*1), K1, Z0
	VMOVUPS Z0, K2, (R12)
	ADDQ $4, R11
	ADDQ R8, R12
	DECQ R13
	JNZ col
	ADDQ R10, SI
	ADDQ $64, DI
	SUBQ BX, CX
	JG rowblock
	VZEROUPPER
	RET
