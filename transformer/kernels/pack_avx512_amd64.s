//go:build amd64 && !purego

#include "textflag.h"

// func packRows16(dst *float32, src *float32, sstride int, dstride int, rows int, lmask int, smask int)
// For each of rows rows: load the 16 floats at src under lmask (masked
// lanes read as 0 and are not accessed), store them at dst under smask;
// src and dst advance by sstride and dstride bytes.
TEXT ·packRows16(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ sstride+16(FP), DX
	MOVQ dstride+24(FP), R8
	MOVQ rows+32(FP), CX
	MOVQ lmask+40(FP), AX
	KMOVW AX, K1
	MOVQ smask+48(FP), AX
	KMOVW AX, K2
	TESTQ CX, CX
	JZ done16
loop16:
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS Z0, K2, (DI)
	ADDQ DX, SI
	ADDQ R8, DI
	DECQ CX
	JNZ loop16
done16:
	VZEROUPPER
	RET

// func packRows32(dst *float32, src *float32, sstride int, rows int, lmask int)
// For each of rows rows: copy 16 floats and then 16 more loaded under
// lmask (masked lanes stored as 0) from src to dst; src advances by
// sstride bytes, dst by 128.
TEXT ·packRows32(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ sstride+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ lmask+32(FP), AX
	KMOVW AX, K1
	TESTQ CX, CX
	JZ done32
loop32:
	VMOVUPS (SI), Z0
	VMOVUPS.Z 64(SI), K1, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ DX, SI
	ADDQ $128, DI
	DECQ CX
	JNZ loop32
done32:
	VZEROUPPER
	RET
