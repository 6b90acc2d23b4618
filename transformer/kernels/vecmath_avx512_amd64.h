// Macros shared by the AVX-512 vector-math kernels (softmax_exp_avx512_amd64.s,
// layernorm_avx512_amd64.s; gelu_avx512_amd64.s is written by gelugen.go).

// Vector exp for AVX-512, the same algorithm as exp32 in softmax.go:
// n = round(x·log2 e), r = x − n·ln2hi − n·ln2lo (|r| ≤ ln2/2), e^r by its
// degree-7 Taylor polynomial, then VSCALEFPS multiplies by 2^n (which
// underflows to 0 correctly). x is first clamped to ≥ −104.
//
// Constant registers (set by EXPCONSTS):
//   Z19 = 1, Z20..Z25 = 1/2!, …, 1/7!, Z26 = −104, Z27 = ln2lo,
//   Z28 = ln2hi, Z29 = log2 e.
#define EXPCONSTS \
	MOVL $0x3f800000, AX \
	VPBROADCASTD AX, Z19 \
	MOVL $0x3f000000, AX \
	VPBROADCASTD AX, Z20 \
	MOVL $0x3e2aaaab, AX \
	VPBROADCASTD AX, Z21 \
	MOVL $0x3d2aaaab, AX \
	VPBROADCASTD AX, Z22 \
	MOVL $0x3c088889, AX \
	VPBROADCASTD AX, Z23 \
	MOVL $0x3ab60b61, AX \
	VPBROADCASTD AX, Z24 \
	MOVL $0x39500d01, AX \
	VPBROADCASTD AX, Z25 \
	MOVL $0xc2d00000, AX \
	VPBROADCASTD AX, Z26 \
	MOVL $0xb95e8083, AX \
	VPBROADCASTD AX, Z27 \
	MOVL $0x3f318000, AX \
	VPBROADCASTD AX, Z28 \
	MOVL $0x3fb8aa3b, AX \
	VPBROADCASTD AX, Z29

// EXP sets X = e^X using T as a temporary.
#define EXP(X, T) \
	VMAXPS Z26, X, X \
	VMULPS Z29, X, T \
	VRNDSCALEPS $0, T, T \
	VFNMADD231PS Z28, T, X \
	VFNMADD231PS Z27, T, X \
	VMOVAPS Z25, Z18 \
	VFMADD213PS Z24, X, Z18 \
	VFMADD213PS Z23, X, Z18 \
	VFMADD213PS Z22, X, Z18 \
	VFMADD213PS Z21, X, Z18 \
	VFMADD213PS Z20, X, Z18 \
	VFMADD213PS Z19, X, Z18 \
	VFMADD213PS Z19, X, Z18 \
	VSCALEFPS T, Z18, X

// HREDUCE reduces Z0 to its lanes' max (OP = VMAXPS) or sum (VADDPS) and
// broadcasts the result to all lanes of Z0.
#define HREDUCE(OP) \
	VEXTRACTF64X4 $1, Z0, Y1 \
	OP Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	OP X1, X0, X0 \
	VPERMILPS $0x4e, X0, X1 \
	OP X1, X0, X0 \
	VPERMILPS $0xb1, X0, X1 \
	OP X1, X0, X0 \
	VBROADCASTSS X0, Z0
