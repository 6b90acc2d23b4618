package compress

import (
	"encoding/binary"
	"fmt"

	"github.com/vomc/vomc/arith"
)

// MaxCTWDepth is the largest CTW context depth in bytes.
const MaxCTWDepth = 16

// CTW counting constants (part of format version 1).
const (
	ctwMaxCount = 1023 // a node whose n0+n1 exceeds this has its counts halved
	ctwBetaMax  = 1e15 // β is clamped to [1/ctwBetaMax, ctwBetaMax]
	ctwProbBits = 16   // the coder's binary probabilities have 16 bits
	ctwBucketSz = 16   // nodes per bucket: a tag and the 15 nodes of a nibble tree
	ctwHashSeed = 0x9E3779B97F4A7C15
)

// CTWConfig is the configuration of the binary-decomposition CTW model.
// Its header parameters are the depth (1 byte), AlphaInv (1 byte) and the
// budget in MiB (unsigned LEB128 varint), nothing else.
//
// # Model
//
// Each byte is coded as 8 binary decisions, most significant bit first.
// The decision for bit j is predicted by a binary context-tree weighting
// (Willems, Shtarkov and Tjalkens 1995) whose tree is indexed by the
// previous Depth bytes (one byte per tree level: depth d uses the last d
// bytes) together with the bits of the current byte already coded. So each
// of the 255 prefixes of a byte has its own context tree of depth Depth
// over byte contexts. A node keeps counts n0, n1 and the ratio
// β = P_e/Π P_w(children) of its estimated and weighted block probabilities;
// the estimator is the Krichevsky–Trofimov rule with α = 1/AlphaInv,
// P_e(1) = (n1 + α)/(n0 + n1 + 2α), and the prior gives each node weight
// ½ (λ = ½). The conditional probability of the next bit is computed along
// the path from the deepest node up,
//
//	q_D = P_e,D      q_d = (β_d·P_e,d + q_{d+1}) / (β_d + 1),
//
// and after coding x each β_d is multiplied by P_e,d(x)/q_{d+1}(x) and
// clamped to [10^−15, 10^15]; counts exceeding 1023 in total are halved
// (rounding up), which makes the model adaptive. q_0 is rounded to a
// 16-bit probability in [1, 2^16−1] for the range coder.
//
// # Portability
//
// The model is computed in float64 with every product explicitly rounded
// (float64(x*y)) before any addition, so no fused multiply–add can occur
// on any architecture, and uses only +, −, ×, ÷ and conversions, which IEEE
// 754 defines exactly: its output is bit-identical on every platform Go
// supports (no math.Log or math.Exp is involved).
//
// # Memory
//
// Nodes are 8 bytes, grouped per (depth, context, high nibble) into buckets
// of 16 (a tag and a 4-level nibble tree), so a byte touches two buckets
// per depth. Depths 0 and 1 have their own fixed tables (0.5 MiB); deeper
// buckets live in one direct-mapped hash table of 2^k buckets, 2^k being
// the largest power of two within MemMB MiB and at most 4·Depth·(size+1)
// (size = original length; both are in the header, so the decoder builds
// the same table). When two contexts map to the same bucket, the newer
// one replaces the older (whose statistics are lost): the model's memory
// never grows beyond the budget, identically in encoder and decoder.
type CTWConfig struct {
	// Depth is the maximum context length in bytes, 0..MaxCTWDepth.
	Depth int
	// AlphaInv is 1/α of the KT estimator, 1..255: 2 gives the classic
	// KT estimator (α = ½); larger values suit deterministic data (text).
	AlphaInv int
	// MemMB is the memory budget in MiB, 1..MaxMemMB.
	MemMB int
}

// DefaultCTW is the CTW configuration the CLI uses by default.
func DefaultCTW() CTWConfig { return CTWConfig{Depth: 6, AlphaInv: 8, MemMB: 256} }

// Validate reports whether c is a valid configuration.
func (c CTWConfig) Validate() error {
	if c.Depth < 0 || c.Depth > MaxCTWDepth {
		return fmt.Errorf("ctw depth %d outside 0..%d", c.Depth, MaxCTWDepth)
	}
	if c.AlphaInv < 1 || c.AlphaInv > 255 {
		return fmt.Errorf("ctw 1/α = %d outside 1..255", c.AlphaInv)
	}
	if c.MemMB < 1 || c.MemMB > MaxMemMB {
		return fmt.Errorf("memory budget %d MiB outside 1..%d", c.MemMB, MaxMemMB)
	}
	return nil
}

// CTW returns the binary-decomposition CTW model with configuration c.
func CTW(c CTWConfig) (Model, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	return ctwModel{c}, nil
}

func parseCTW(p []byte) (Model, error) {
	if len(p) < 3 {
		return nil, fmt.Errorf("ctw parameters too short")
	}
	mem, n := binary.Uvarint(p[2:])
	if n <= 0 || 2+n != len(p) || mem > MaxMemMB {
		return nil, fmt.Errorf("bad ctw memory parameter")
	}
	return CTW(CTWConfig{Depth: int(p[0]), AlphaInv: int(p[1]), MemMB: int(mem)})
}

type ctwModel struct{ c CTWConfig }

func (m ctwModel) Name() string {
	return fmt.Sprintf("ctw(D=%d,alpha=1/%d,mem=%dMiB)", m.c.Depth, m.c.AlphaInv, m.c.MemMB)
}

func (m ctwModel) spec() (byte, []byte) {
	p := []byte{byte(m.c.Depth), byte(m.c.AlphaInv)}
	return idCTW, binary.AppendUvarint(p, uint64(m.c.MemMB))
}

func (m ctwModel) newCoder(size int64) coder { return newCTWCoder(m.c, size) }

// cnode is one binary CTW node.
type cnode struct {
	n0, n1 uint16
	beta   float32
}

// cbucket holds the nibble tree of one (depth, context, high nibble): node
// 1 is the first bit of the nibble, nodes 2–3 the second, 4–7 the third,
// 8–15 the fourth; slot 0 holds the tag of hashed buckets.
type cbucket [ctwBucketSz]cnode

func (b *cbucket) init(tag uint32) {
	b[0] = cnode{n0: uint16(tag), n1: uint16(tag >> 16)}
	for i := 1; i < ctwBucketSz; i++ {
		b[i] = cnode{beta: 1}
	}
}

type ctwCoder struct {
	depth int
	k     uint32    // 1/α
	d0    []cbucket // 17 buckets: high nibble, then low nibble after each high
	d1    []cbucket // 256·17 buckets for depth 1
	tab   []cbucket // hashed buckets for depths ≥ 2
	shift uint      // 64 − log2(len(tab))
	sink  uint16    // keeps the loads of buckets alive
	hist  [MaxCTWDepth]byte
	hash  [MaxCTWDepth + 1]uint64 // hash of the last d bytes
	cur   [MaxCTWDepth + 1]*cbucket
	pe1   [MaxCTWDepth + 1]float64 // P_e(1) per depth at the current bit
	q1    [MaxCTWDepth + 2]float64 // q_d(1)
}

func newCTWCoder(c CTWConfig, size int64) *ctwCoder {
	x := &ctwCoder{depth: c.Depth, k: uint32(c.AlphaInv)}
	x.d0 = make([]cbucket, 17)
	for i := range x.d0 {
		x.d0[i].init(0)
	}
	if c.Depth >= 1 {
		x.d1 = make([]cbucket, 256*17)
		for i := range x.d1 {
			x.d1[i].init(0)
		}
	}
	if c.Depth >= 2 {
		maxB := (int64(c.MemMB) << 20) / (8 * ctwBucketSz)
		want := 4 * int64(c.Depth) * (size + 1)
		bits := uint(10)
		for bits < 40 && int64(1)<<(bits+1) <= maxB && int64(1)<<bits < want {
			bits++
		}
		x.tab = make([]cbucket, 1<<bits)
		x.shift = 64 - bits
	}
	return x
}

// contexts computes the hashes of the byte contexts for the next byte.
func (x *ctwCoder) contexts() {
	h := uint64(ctwHashSeed)
	for d := 1; d <= x.depth; d++ {
		h = (h ^ uint64(x.hist[d-1])) * 0x100000001B3
		h ^= h >> 29
		h *= 0xBF58476D1CE4E5B9
		x.hash[d] = h
	}
}

// buckets selects the buckets of every depth for the high (nib = 0) or
// the low nibble (nib = 1 + high nibble).
func (x *ctwCoder) buckets(nib int) {
	x.cur[0] = &x.d0[nib]
	if x.depth >= 1 {
		x.cur[1] = &x.d1[int(x.hist[0])*17+nib]
	}
	var hs [MaxCTWDepth + 1]uint64
	var sink uint16
	for d := 2; d <= x.depth; d++ {
		h := (x.hash[d] + uint64(nib)*0xD6E8FEB86659FD93) * 0x94D049BB133111EB
		h ^= h >> 31
		hs[d] = h
		// Load every bucket first: the independent loads overlap their
		// cache misses.
		sink += x.tab[h>>x.shift][0].n0
	}
	x.sink ^= sink
	for d := 2; d <= x.depth; d++ {
		h := hs[d]
		b := &x.tab[h>>x.shift]
		tag := uint32(h) | 1
		if b[0].n0 != uint16(tag) || b[0].n1 != uint16(tag>>16) {
			b.init(tag)
		}
		x.cur[d] = b
	}
}

// predict returns the 16-bit probability that the bit at node is 1.
func (x *ctwCoder) predict(node int) uint32 {
	k := float64(x.k)
	D := x.depth
	for d := D; d >= 0; d-- {
		nd := &x.cur[d][node]
		num := float64(float64(k*float64(nd.n1)) + 1)
		den := float64(float64(k*float64(nd.n0+nd.n1)) + 2)
		x.pe1[d] = num / den
	}
	q := x.pe1[D]
	x.q1[D] = q
	for d := D - 1; d >= 0; d-- {
		beta := float64(x.cur[d][node].beta)
		q = (float64(beta*x.pe1[d]) + q) / (beta + 1)
		x.q1[d] = q
	}
	p := uint32(float64(q * (1 << ctwProbBits)))
	return min(max(p, 1), 1<<ctwProbBits-1)
}

// update records bit at node in every depth.
func (x *ctwCoder) update(node int, bit int) {
	D := x.depth
	for d := 0; d <= D; d++ {
		nd := &x.cur[d][node]
		if d < D {
			var r float64
			if bit == 1 {
				r = x.pe1[d] / x.q1[d+1]
			} else {
				r = (1 - x.pe1[d]) / (1 - x.q1[d+1])
			}
			b := float64(float64(nd.beta) * r)
			b = min(max(b, 1/ctwBetaMax), ctwBetaMax)
			nd.beta = float32(b)
		}
		if bit == 1 {
			nd.n1++
		} else {
			nd.n0++
		}
		if nd.n0+nd.n1 > ctwMaxCount {
			nd.n0 = (nd.n0 + 1) / 2
			nd.n1 = (nd.n1 + 1) / 2
		}
	}
}

func (x *ctwCoder) push(b byte) {
	copy(x.hist[1:], x.hist[:MaxCTWDepth-1])
	x.hist[0] = b
}

func (x *ctwCoder) encode(e *arith.Encoder, b byte) error {
	x.contexts()
	for half := 0; half < 2; half++ {
		nib := 0
		if half == 1 {
			nib = 1 + int(b>>4)
		}
		x.buckets(nib)
		node := 1
		for j := 3; j >= 0; j-- {
			bit := int(b>>(uint(j)+4*uint(1-half))) & 1
			e.EncodeBit(uint32(bit), x.predict(node))
			x.update(node, bit)
			node = 2*node + bit
		}
	}
	x.push(b)
	return nil
}

func (x *ctwCoder) decode(dc *arith.Decoder) byte {
	x.contexts()
	var b int
	for half := 0; half < 2; half++ {
		nib := 0
		if half == 1 {
			nib = 1 + b
		}
		x.buckets(nib)
		node := 1
		for range 4 {
			bit := int(dc.DecodeBit(x.predict(node)))
			x.update(node, bit)
			node = 2*node + bit
		}
		b = node - 16
		if half == 1 {
			b = (nib-1)<<4 | b
		}
	}
	x.push(byte(b))
	return byte(b)
}
