//go:build ignore

// attngen writes the AVX-512 block kernels of the fused causal attention
// for head size 16 (attention16.go):
//
//	go run attngen.go -o attention16_avx512_amd64.s
//
// (without -o it writes to standard output; TestGeneratedAsmCurrent checks
// that the file is what the generator writes now).
//
// Both kernels take one query block of up to 16 queries (lane i = query
// r0+i) against keys 0..n−1 and read their arguments from an attn16Args
// (attention16.go; the offsets below are checked by TestAttn16ArgsLayout).
// Lanes at or past nq, and lanes i < j−r0 of key j (the causal mask),
// get weight exactly 0. Register plan: Z0–Z15 hold 16 vectors of the
// block (Qᵀ, dOᵀ, rows of dO or Q, or 16 accumulators), Z16–Z18 are
// temporaries, Z19–Z25 the constants of 2^x (exp2Consts), Z26 log₂e, Z30
// and Z31 the per-lane max or log-sum-exp and the scale; where a pass
// works on two keys at once (pairLoop) the second key's temporaries are
// registers that pass leaves free.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

var out strings.Builder

func emit(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

// Offsets of attn16Args's fields (bytes).
const (
	offQt    = 0
	offLdt   = 8
	offK     = 16
	offV     = 24
	offLd    = 32
	offN     = 40
	offR0    = 48
	offNq    = 56
	offP     = 64
	offDs    = 72
	offOut   = 80
	offLdo   = 88
	offMl    = 96
	offDot   = 104
	offQ     = 112
	offDo    = 120
	offDk    = 128
	offDv    = 136
	offScale = 144
	offAcc   = 152
)

// header loads R15 = a and R10 = the mask of the valid lanes,
// (1 << nq) − 1 (CX is clobbered).
func header(name, doc string) {
	emit("// func %s(a *attn16Args)", name)
	emit("// %s", doc)
	emit("TEXT ·%s(SB), NOSPLIT, $0-8", name)
	emit("\tMOVQ a+0(FP), R15")
	emit("\tMOVQ %d(R15), CX", offNq)
	emit("\tMOVL $1, R10")
	emit("\tSHLL CX, R10")
	emit("\tDECL R10")
}

// loadCols loads Z0..Z15 from 16 vectors ld bytes apart (a transposed
// block: vector d is column d of the block's rows); SI is clobbered.
func loadCols(ptrOff, ldOff int) {
	emit("\tMOVQ %d(R15), SI", ptrOff)
	emit("\tMOVQ %d(R15), R11", ldOff)
	for d := 0; d < 16; d++ {
		emit("\tVMOVUPS (SI), Z%d", d)
		if d < 15 {
			emit("\tADDQ R11, SI")
		}
	}
}

// validRows emits body(i) for rows i = 0..15 of the block, stepping ptr
// by stride between rows and jumping to label after row nq−1 (R13 = nq),
// so that rows past the block's queries are never touched.
func validRows(ptr, stride, label string, body func(i int)) {
	for i := 0; i < 16; i++ {
		body(i)
		if i < 15 {
			emit("\tCMPQ R13, $%d", i+1)
			emit("\tJLE %s", label)
			emit("\tADDQ %s, %s", stride, ptr)
		}
	}
	emit("%s:", label)
}

// loadRows sets Z0..Z15 to the rows at ptrOff (ldOff bytes apart) of the
// nq valid lanes and to zero past them (no access to those rows).
func loadRows(ptrOff, ldOff int, label string) {
	zero16()
	emit("\tMOVQ %d(R15), SI", ptrOff)
	emit("\tMOVQ %d(R15), R11", ldOff)
	emit("\tMOVQ %d(R15), R13", offNq)
	validRows("SI", "R11", label, func(i int) { emit("\tVMOVUPS (SI), Z%d", i) })
}

// keyLoop opens a loop over keys j = 0..n−1 (BX = j, CX = n, DX = r0):
// R14 walks the n×16 scratch at scrOff (64 bytes a key) and SI the rows
// at rowOff (R9 = ld bytes apart), when rowOff ≥ 0.
func keyLoop(label string, scrOff, rowOff int) {
	emit("\tMOVQ %d(R15), R14", scrOff)
	if rowOff >= 0 {
		emit("\tMOVQ %d(R15), SI", rowOff)
	}
	emit("\tXORQ BX, BX")
	emit("\tMOVL $0xffff, R12")
	emit("%s:", label)
}

// causalMask sets the mask register k to key j's lanes: the valid lanes
// (R10) that are at or past j−r0 (R12 = 0xffff << max(0, j−r0), advanced
// by endKeyLoop or pairLoop).
func causalMask(k string) {
	emit("\tMOVL R12, AX")
	emit("\tANDL R10, AX")
	emit("\tKMOVW AX, %s", k)
}

// endKeyLoop advances the loop of keyLoop (and the causal mask).
func endKeyLoop(label string, rows bool) {
	emit("\tCMPQ BX, DX")
	emit("\tJLT %s_pre", label)
	emit("\tSHLL $1, R12")
	emit("%s_pre:", label)
	if rows {
		emit("\tADDQ R9, SI")
	}
	emit("\tADDQ $64, R14")
	emit("\tINCQ BX")
	emit("\tCMPQ BX, CX")
	emit("\tJLT %s", label)
}

// dot16 sets acc[0] = Σ_d Z_d · row[d] (the row at address row, e.g.
// "(SI)", broadcast element by element) as len(acc) sums, sum c over the
// d ≡ c (mod len(acc)) in the order of d, then added pairwise ((s0 + s1)
// + (s2 + s3) for four): short chains of FMAs instead of one of 16.
func dot16(row string, acc ...string) {
	c := len(acc)
	for d := 0; d < c; d++ {
		emit("\tVMULPS.BCST %s, Z%d, %s", at(row, 4*d), d, acc[d])
	}
	for d := c; d < 16; d++ {
		emit("\tVFMADD231PS.BCST %s, Z%d, %s", at(row, 4*d), d, acc[d%c])
	}
	for w := 1; w < c; w *= 2 {
		for k := 0; k+w < c; k += 2 * w {
			emit("\tVADDPS %s, %s, %s", acc[k+w], acc[k], acc[k])
		}
	}
}

// at returns the address addr ("(SI)", "64(R14)", "(SI)(R9*1)") moved by
// off bytes.
func at(addr string, off int) string {
	if i := strings.IndexByte(addr, '('); i > 0 {
		var base int
		fmt.Sscanf(addr[:i], "%d", &base)
		off += base
		addr = addr[i:]
	}
	if off == 0 {
		return addr
	}
	return fmt.Sprintf("%d%s", off, addr)
}

// exp2Poly are c1..c6 of the polynomial 1 + c1·r + … + c6·r⁶ ≈ 2^r on
// [−½, ½] (float32 bit patterns; TestAttn16Exp2Poly checks their accuracy
// and that the assembly holds them): fitted for the least largest
// relative error (≈ 2e-9 before the coefficients are rounded to float32,
// 1.6e-8 after, ≈ 1.3 ulp with the float32 Horner evaluation of the
// kernels).
var exp2Poly = [6]uint32{0x3f317218, 0x3e75fdee, 0x3d635774, 0x3c1d96a7, 0x3aaf9f24, 0x3920fdc7}

// exp2Consts sets Z19 = 1 and Z20..Z25 = c1..c6 of exp2Poly (AX is
// clobbered).
func exp2Consts() {
	emit("\tMOVL $0x3f800000, AX")
	emit("\tVPBROADCASTD AX, Z19")
	for i, c := range exp2Poly {
		emit("\tMOVL $0x%08x, AX", c)
		emit("\tVPBROADCASTD AX, Z%d", 20+i)
	}
}

// log2e sets reg = log₂ e (AX is clobbered).
func log2e(reg string) {
	emit("\tMOVL $0x3fb8aa3b, AX")
	emit("\tVPBROADCASTD AX, %s", reg)
}

// exp2Masked sets x = 2^x on the lanes of mask and 0 on the others, with t
// and p as temporaries (constants of exp2Consts): n = round(x), r = x − n
// (exact, |r| ≤ ½), 2^r by exp2Poly, then VSCALEFPS multiplies by 2^n,
// underflowing to 0 for very negative x. Lanes off the mask may hold
// anything, ±Inf and NaN included: they are zeroed by the last
// instruction.
func exp2Masked(x, t, p, mask string) {
	emit("\tVRNDSCALEPS $0, %s, %s", x, t)
	emit("\tVSUBPS %s, %s, %s", t, x, x)
	emit("\tVMOVAPS Z25, %s", p)
	for c := 24; c >= 19; c-- {
		emit("\tVFMADD213PS Z%d, %s, %s", c, x, p)
	}
	emit("\tVSCALEFPS.Z %s, %s, %s, %s", t, p, mask, x)
}

// outer16 adds to Z_i the broadcast lane i of the scratch vector at R14
// times the vector x, for i = 0..15.
func outer16(x string) {
	for i := 0; i < 16; i++ {
		emit("\tVFMADD231PS.BCST %d(R14), %s, Z%d", 4*i, x, i)
	}
}

// reduce16 adds to acc Σ_i lane i of the scratch vector at scr times Z_i:
// the even i into acc and the odd i into odd, each in the order of i, then
// odd to acc (two chains of 8 FMAs).
func reduce16(scr, acc, odd string) {
	emit("\tVMULPS.BCST %s, Z1, %s", at(scr, 4), odd)
	for i := 0; i < 16; i++ {
		if i == 1 {
			continue
		}
		a := acc
		if i%2 == 1 {
			a = odd
		}
		emit("\tVFMADD231PS.BCST %s, Z%d, %s", at(scr, 4*i), i, a)
	}
	emit("\tVADDPS %s, %s, %s", odd, acc, acc)
}

// capture returns the lines that f emits, without emitting them.
func capture(f func()) []string {
	saved := out.String()
	out.Reset()
	f()
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	out.Reset()
	out.WriteString(saved)
	return got
}

// What pairLoop sets in mask registers for the keys of a turn.
const (
	causalMasks = 1 << iota // K1, K2: the keys' causal lanes
	oldKeys                 // K3: whether the keys are below r0
)

// oldKeysMask sets K3 to all lanes when key j (BX) is below r0 (DX), else
// to none (AX is clobbered).
func oldKeysMask(label string) {
	emit("\tXORL AX, AX")
	emit("\tCMPQ BX, DX")
	emit("\tJGE %s", label)
	emit("\tMOVL $0xffff, AX")
	emit("%s:", label)
	emit("\tKMOVW AX, K3")
}

// pairLoop writes a loop over keys j = 0..n−1 two at a time (BX = j, CX =
// n, DX = r0), then one last key when n is odd. R14 walks the n×16
// scratch at scrOff (64 bytes a key) and SI the rows at rowOff (R9 = ld
// bytes apart), when rowOff ≥ 0. body(u, row, scr, mask) writes key j+u's
// work, its row at row, its scratch vector at scr and, with causalMasks in
// regs, its causal lanes in the mask register (K1, K2; see causalMask);
// with oldKeys, K3 is all lanes for keys below r0 (rows that earlier
// blocks wrote) and none for the block's own keys. The two
// keys' instructions are interleaved line by line, so the two chains of
// dependent operations overlap (the results are those of one key at a
// time: each key's operations, and the order of what two keys add to one
// register, are unchanged). flush, when non-nil, runs after the pair
// whose second key ends a block of 16 (blockEnd). step, when non-nil,
// advances other pointers by the given number of keys.
func pairLoop(label string, scrOff, rowOff int, regs int, body func(u int, row, scr, mask string), flush func(), step func(keys int)) {
	masks := regs&causalMasks != 0
	keyLoop(label, scrOff, rowOff)
	emit("\tLEAQ 1(BX), AX")
	emit("\tCMPQ AX, CX")
	emit("\tJGE %s_tail", label)
	if masks {
		// j is even and so is r0: j and j+1 are both below r0 or both not.
		for u, k := range []string{"K1", "K2"} {
			causalMask(k)
			emit("\tCMPQ BX, DX")
			emit("\tJLT %s_m%d", label, u)
			emit("\tSHLL $1, R12")
			emit("%s_m%d:", label, u)
		}
	}
	if regs&oldKeys != 0 {
		oldKeysMask(label + "_o2")
	}
	a := capture(func() { body(0, "(SI)", "(R14)", "K1") })
	b := capture(func() { body(1, "(SI)(R9*1)", "64(R14)", "K2") })
	for i := 0; i < max(len(a), len(b)); i++ {
		if i < len(a) {
			out.WriteString(a[i] + "\n")
		}
		if i < len(b) {
			out.WriteString(b[i] + "\n")
		}
	}
	if flush != nil {
		blockEnd(label, 14, flush) // the pair's second key, j+1, ends the block
	}
	if rowOff >= 0 {
		emit("\tLEAQ (SI)(R9*2), SI")
	}
	if step != nil {
		step(2)
	}
	emit("\tADDQ $128, R14")
	emit("\tADDQ $2, BX")
	emit("\tJMP %s", label)
	emit("%s_tail:", label)
	emit("\tCMPQ BX, CX")
	emit("\tJGE %s_end", label)
	if masks {
		causalMask("K1")
	}
	if regs&oldKeys != 0 {
		oldKeysMask(label + "_o1")
	}
	body(0, "(SI)", "(R14)", "K1") // an even key: it never ends a block
	emit("%s_end:", label)
}

// blockEnd runs flush when key BX + (15 − last) is the last key of a block
// of 16, that is when BX mod 16 = last (15 after one key, 14 after a pair
// whose second key ends the block): sums over keys are kept per block of 16 keys and
// the block sums added in order (less rounding than one running sum over
// up to T keys; the blocks start at multiples of 16 whatever T, so the
// result does not depend on T). AX is clobbered.
func blockEnd(label string, last int, flush func()) {
	emit("\tMOVL BX, AX")
	emit("\tANDL $15, AX")
	emit("\tCMPL AX, $%d", last)
	emit("\tJNE %s_nb", label)
	flush()
	emit("%s_nb:", label)
}

// reduceRowsPass writes a backward pass that adds to each key's row at
// dstOff (ld apart) the 16 block rows at rowsOff (rowsLd apart, loaded
// once into Z0..Z15) weighted by the key's 16 lanes of the scratch at
// scrOff (reduce16): dv from p and dO, dk from dS and Q. The rows of the
// block's own keys (j ≥ r0) are new: their sums start at 0, not at what
// the row held (the kernel sets dk and dv).
func reduceRowsPass(rowsOff, rowsLd, scrOff, dstOff int, rowsLabel, loop string) {
	loadRows(rowsOff, rowsLd, rowsLabel)
	pairLoop(loop, scrOff, dstOff, oldKeys, func(u int, row, scr, _ string) {
		acc, odd := "Z16", "Z17"
		if u == 1 {
			acc, odd = "Z18", "Z19"
		}
		emit("\tVMOVUPS.Z %s, K3, %s", row, acc)
		reduce16(scr, acc, odd)
		emit("\tVMOVUPS %s, %s", acc, row)
	}, nil, nil)
}

// zero16 sets Z0..Z15 to 0.
func zero16() {
	for i := 0; i < 16; i++ {
		emit("\tVPXORD Z%d, Z%d, Z%d", i, i, i)
	}
}

// prefetch16 asks for the 16 rows first, first+1, … (first a register or
// an immediate "$16") of the rows at ptrOff, stride bytes apart (a
// register), to be brought into the cache: the rows the next query block
// adds to the work, so that they arrive from memory while this block runs.
// A prefetch does not fault, so rows past the last (the last block) are
// harmless. AX and SI are clobbered.
func prefetch16(ptrOff int, first, stride string) {
	emit("\tMOVQ %s, AX", first)
	emit("\tIMULQ %s, AX", stride)
	emit("\tMOVQ %d(R15), SI", ptrOff)
	emit("\tADDQ AX, SI")
	for i := 0; i < 16; i++ {
		emit("\tPREFETCHT0 (SI)")
		if i < 15 {
			emit("\tADDQ %s, SI", stride)
		}
	}
}

func loopRegs() {
	emit("\tMOVQ %d(R15), R9", offLd)
	emit("\tMOVQ %d(R15), CX", offN)
	emit("\tMOVQ %d(R15), DX", offR0)
}

func forward() {
	header("attn16FwdAVX512", "Forward of one query block (attention16.go, attn16Args).")
	loadCols(offQt, offLdt)
	loopRegs()
	emit("\t// the keys and values of the next block")
	prefetch16(offK, "CX", "R9")
	prefetch16(offV, "CX", "R9")
	emit("\tVBROADCASTSS %d(R15), Z31", offScale)
	emit("\t// pass 1: scores s_j = Qᵀ·k_j to p[j], their per-lane max (valid keys) in Z30")
	emit("\tMOVL $0xff800000, AX")
	emit("\tVPBROADCASTD AX, Z30")
	pairLoop("fscore", offP, offK, causalMasks, func(u int, row, scr, mask string) {
		acc := []string{"Z16", "Z17"}
		if u == 1 {
			acc = []string{"Z18", "Z19"}
		}
		dot16(row, acc...)
		emit("\tVMOVUPS %s, %s", acc[0], scr)
		emit("\tVMAXPS %s, Z30, %s, Z30", acc[0], mask)
	}, nil, nil)
	emit("\t// pass 2: p[j] ← 2^((s_j − max)·scale·log₂e) on the key's lanes, else 0; Z0 = Σ_j p[j]")
	emit("\t// (each block of 16 keys summed in Z1, then added to Z0)")
	log2e("Z26")
	emit("\tVMULPS Z26, Z31, Z31")
	exp2Consts()
	emit("\tVPXORD Z0, Z0, Z0")
	emit("\tVPXORD Z1, Z1, Z1")
	pairLoop("fexp", offP, -1, causalMasks, func(u int, _, scr, mask string) {
		x, t, p := "Z16", "Z17", "Z18"
		if u == 1 {
			x, t, p = "Z2", "Z3", "Z4"
		}
		emit("\tVMOVUPS %s, %s", scr, x)
		emit("\tVSUBPS Z30, %s, %s", x, x)
		emit("\tVMULPS Z31, %s, %s", x, x)
		exp2Masked(x, t, p, mask)
		emit("\tVMOVUPS %s, %s", x, scr)
		emit("\tVADDPS %s, Z1, Z1", x)
	}, func() {
		emit("\tVADDPS Z1, Z0, Z0")
		emit("\tVPXORD Z1, Z1, Z1")
	}, nil)
	emit("\tVADDPS Z1, Z0, Z0")
	emit("\t// ml: max, sum, 1/sum")
	emit("\tMOVQ %d(R15), AX", offMl)
	emit("\tVMOVUPS Z30, (AX)")
	emit("\tVMOVUPS Z0, 64(AX)")
	emit("\tVDIVPS Z0, Z19, Z1")
	emit("\tVMOVUPS Z1, 128(AX)")
	emit("\t// pass 3: row i of the output, Σ_j p[j][i]·v_j, in Z_i")
	zero16()
	keyLoop("fpv", offP, offV)
	emit("\tVMOVUPS (SI), Z16")
	outer16("Z16")
	emit("\tADDQ R9, SI")
	emit("\tADDQ $64, R14")
	emit("\tINCQ BX")
	emit("\tCMPQ BX, CX")
	emit("\tJLT fpv")
	emit("\t// out row i ← Z_i / sum_i for the nq valid rows")
	emit("\tMOVQ %d(R15), DI", offOut)
	emit("\tMOVQ %d(R15), R11", offLdo)
	emit("\tMOVQ %d(R15), R13", offNq)
	validRows("DI", "R11", "fdone", func(i int) {
		emit("\tVMULPS.BCST %d(AX), Z%d, Z%d", 128+4*i, i, i)
		emit("\tVMOVUPS Z%d, (DI)", i)
	})
	emit("\tVZEROUPPER")
	emit("\tRET")
}

func backward() {
	header("attn16BwdAVX512", "Backward of one query block (attention16.go, attn16Args).")
	loadCols(offQt, offLdt)
	loopRegs()
	emit("\t// what the next block adds: keys, values and their gradients, its queries, dO and dq")
	for _, off := range []int{offK, offV, offDk, offDv} {
		prefetch16(off, "CX", "R9")
	}
	prefetch16(offQ, "$16", "R9")
	prefetch16(offOut, "$16", "R9")
	emit("\tMOVQ %d(R15), R11", offLdo)
	prefetch16(offDo, "$16", "R11")
	emit("\tVBROADCASTSS %d(R15), Z31", offScale)
	emit("\tMOVQ %d(R15), AX", offMl)
	emit("\tVMOVUPS (AX), Z30")
	emit("\t// pass 1: p[j] ← scale·Qᵀ·k_j − lse, then 2^(log₂e·that) on the key's lanes, else 0")
	pairLoop("bs", offP, offK, 0, func(u int, row, scr, _ string) {
		acc := []string{"Z16", "Z17"}
		if u == 1 {
			acc = []string{"Z18", "Z19"}
		}
		dot16(row, acc...)
		emit("\tVFMSUB213PS Z30, Z31, %s", acc[0])
		emit("\tVMOVUPS %s, %s", acc[0], scr)
	}, nil, nil)
	exp2Consts()
	log2e("Z26")
	pairLoop("bp", offP, -1, causalMasks, func(u int, _, scr, mask string) {
		x, t, p := "Z16", "Z17", "Z18"
		if u == 1 {
			x, t, p = "Z0", "Z1", "Z2"
		}
		emit("\tVMOVUPS %s, %s", scr, x)
		emit("\tVMULPS Z26, %s, %s", x, x)
		exp2Masked(x, t, p, mask)
		emit("\tVMOVUPS %s, %s", x, scr)
	}, nil, nil)
	emit("\t// pass 2: ds[j] ← dp_j = dOᵀ·v_j; Z17 = Σ_j p[j]·dp_j (by blocks of 16 keys in Z19)")
	loadCols(offDot, offLdt)
	emit("\tVPXORD Z17, Z17, Z17")
	emit("\tVPXORD Z19, Z19, Z19")
	emit("\tMOVQ %d(R15), DI", offP)
	pairLoop("bdp", offDs, offV, 0, func(u int, row, scr, _ string) {
		acc, p := []string{"Z16", "Z18"}, "(DI)"
		if u == 1 {
			acc, p = []string{"Z20", "Z21"}, "64(DI)"
		}
		dot16(row, acc...)
		emit("\tVMOVUPS %s, %s", acc[0], scr)
		emit("\tVFMADD231PS %s, %s, Z19", p, acc[0])
	}, func() {
		emit("\tVADDPS Z19, Z17, Z17")
		emit("\tVPXORD Z19, Z19, Z19")
	}, func(keys int) { emit("\tADDQ $%d, DI", 64*keys) })
	emit("\tVADDPS Z19, Z17, Z17")
	emit("\t// pass 3: ds[j] ← scale·p[j]·(dp_j − Σ)")
	emit("\tMOVQ %d(R15), DI", offP)
	keyLoop("bds", offDs, -1)
	emit("\tVMOVUPS (R14), Z16")
	emit("\tVSUBPS Z17, Z16, Z16")
	emit("\tVMULPS (DI), Z16, Z16")
	emit("\tVMULPS Z31, Z16, Z16")
	emit("\tVMOVUPS Z16, (R14)")
	emit("\tADDQ $64, DI")
	endKeyLoop("bds", false)
	emit("\t// pass 4: dv_j += Σ_i p[j][i]·dO_i (rows of dO in Z_i; dv_j = … for j ≥ r0)")
	reduceRowsPass(offDo, offLdo, offP, offDv, "bdorows", "bdv")
	emit("\t// pass 5: dk_j += Σ_i ds[j][i]·q_i (rows of Q in Z_i; dk_j = … for j ≥ r0)")
	reduceRowsPass(offQ, offLd, offDs, offDk, "bqrows", "bdk")
	emit("\t// pass 6: dq_i = Σ_j ds[j][i]·k_j (each block of 16 keys in Z_i, the")
	emit("\t// block sums added in order into the 16 rows at acc)")
	emit("\tMOVQ %d(R15), DI", offAcc)
	zero16()
	for i := 0; i < 16; i++ {
		emit("\tVMOVUPS Z0, %d(DI)", 64*i)
	}
	keyLoop("bdq", offDs, offK)
	emit("\tVMOVUPS (SI), Z16")
	outer16("Z16")
	blockEnd("bdq", 15, func() {
		for i := 0; i < 16; i++ {
			emit("\tVADDPS %d(DI), Z%d, Z%d", 64*i, i, i)
			emit("\tVMOVUPS Z%d, %d(DI)", i, 64*i)
			emit("\tVPXORD Z%d, Z%d, Z%d", i, i, i)
		}
	})
	endKeyLoop("bdq", true)
	for i := 0; i < 16; i++ {
		emit("\tVADDPS %d(DI), Z%d, Z%d", 64*i, i, i)
	}
	emit("\tMOVQ %d(R15), DI", offOut)
	emit("\tMOVQ %d(R15), R13", offNq)
	validRows("DI", "R9", "bdone", func(i int) {
		emit("\tVMOVUPS Z%d, (DI)", i)
	})
	emit("\tVZEROUPPER")
	emit("\tRET")
}

func main() {
	o := flag.String("o", "", "output file (default: standard output)")
	flag.Parse()
	emit("// Code generated by attngen.go; DO NOT EDIT.")
	emit("")
	emit("//go:build amd64 && !purego")
	emit("")
	emit("#include \"textflag.h\"")
	emit("")
	forward()
	emit("")
	backward()
	if *o == "" {
		fmt.Print(out.String())
		return
	}
	if err := os.WriteFile(*o, []byte(out.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
