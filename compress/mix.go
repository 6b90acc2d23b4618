package compress

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/vomc/vomc/arith"
)

// MixConfig is the configuration of the context-mixing model ("mix", model
// id 4). Its header parameters are the model variant (1 byte, MixVariant)
// and the budget in MiB (unsigned LEB128 varint), nothing else.
//
// # Model
//
// Each byte is coded as 8 binary decisions, most significant bit first,
// each with a 16-bit probability computed in integer arithmetic only:
//
//   - Context models. Order 1 indexes a direct table of counters with 22-bit
//     probabilities and a count up to 30 (after a bit the probability moves
//     towards it by ⌊2^17/(2n+3)⌋/2^16). Eight contexts are hashed: orders
//     2, 4 and 6, a word context (the letters of the current word, case
//     folded, with the previous byte), two sparse contexts (the bytes at
//     distances 2–3; the byte at distance 4 with the high nibble of the
//     previous byte) and two record contexts (the bytes one and two records
//     back; the byte one record back with the previous byte). The record
//     length is a distance at which some byte value recurred at equal
//     intervals, seen 8 times in a row. Each hashed context owns, per nibble
//     of the byte, a bucket of a 16-bit check and 15 short counters (one
//     per node of the nibble's binary tree): a 12-bit probability and a
//     4-bit count n, updated as above with rounding and n ≤ 15, through a
//     precomputed transition table.
//   - A match model: the most recent occurrence of the last 6 bytes (found
//     through a hash table of positions and verified) predicts the next
//     byte while it keeps matching; its bits are predicted by an adaptive
//     probability per (match length class, expected bit).
//   - A mixer in the logistic domain (stretch(p) = ln(p/(1−p)) in 1/256
//     units): two weight sets, one selected by the partial byte and the
//     match state (none, or the length class), one by the previous byte
//     and the bit position; each forms a dot product of the 11 stretched
//     inputs (8 hashed contexts, order 1, match, bias) with 16.16 weights
//     and is trained online by gradient descent on code length (skipped
//     when its error is below 16/4096); their outputs are averaged.
//   - An adaptive probability map (secondary estimation) keyed by the
//     partial byte with the high nibble of the previous byte interpolates
//     between 33 learnt probabilities along the mixer's output; the final
//     probability is the mean of the mixer's and the map's, clamped to
//     [32, 65503]/65536.
//
// squash comes from a 33-point integer table with linear interpolation and
// stretch is its exact inverse table, so every step is integer arithmetic
// and the coding is bit-identical on every platform.
//
// # Memory
//
// The hashed buckets (32 bytes) live in one table of 2^k buckets, 2^k the
// largest power of two within 7/8 of MemMB MiB and at most 4·(size+1)
// (size = original length; both are in the header). A context looks at
// two neighbouring buckets (one cache line) and, if neither holds its
// check, takes over the less used of the two; the low nibble's bucket lies
// in the same 4 KiB page (128 buckets) as the high nibble's. The match
// model keeps the last min(size, 16 MiB) bytes and up to 2^22 positions.
// The model's memory is fixed when the stream starts and never grows.
type MixConfig struct {
	// MemMB is the memory budget in MiB, 1..MaxMemMB.
	MemMB int
}

// MixVariant is the version of the mixing model this package writes; the
// header records it so that the model can evolve without a new model id.
const MixVariant = 1

// DefaultMix is the configuration the CLI uses by default.
func DefaultMix() MixConfig { return MixConfig{MemMB: 256} }

// Validate reports whether c is a valid configuration.
func (c MixConfig) Validate() error {
	if c.MemMB < 1 || c.MemMB > MaxMemMB {
		return fmt.Errorf("memory budget %d MiB outside 1..%d", c.MemMB, MaxMemMB)
	}
	return nil
}

// Mix returns the context-mixing model with configuration c.
func Mix(c MixConfig) (Model, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	return mixModel{c}, nil
}

func parseMix(p []byte) (Model, error) {
	if len(p) < 2 {
		return nil, fmt.Errorf("mix parameters too short")
	}
	if p[0] != MixVariant {
		return nil, fmt.Errorf("mix variant %d not supported (this build has %d)", p[0], MixVariant)
	}
	mem, n := binary.Uvarint(p[1:])
	if n <= 0 || 1+n != len(p) || mem > MaxMemMB {
		return nil, fmt.Errorf("bad mix memory parameter")
	}
	return Mix(MixConfig{MemMB: int(mem)})
}

type mixModel struct{ c MixConfig }

func (m mixModel) Name() string { return fmt.Sprintf("mix(v%d,mem=%dMiB)", MixVariant, m.c.MemMB) }

func (m mixModel) spec() (byte, []byte) {
	return idMix, binary.AppendUvarint([]byte{MixVariant}, uint64(m.c.MemMB))
}

func (m mixModel) newCoder(size int64) coder { return newMixCoder(m.c, size) }

// ---- integer logistic functions ----

// sqTab[i] = round(4096/(1+e^{−(i−16)/2})): squash at multiples of 128.
var sqTab = [33]int32{1, 2, 4, 6, 10, 17, 27, 45, 74, 120, 194, 311, 488, 747, 1102, 1546,
	2048, 2550, 2994, 3349, 3608, 3785, 3902, 3976, 4022, 4051, 4069, 4079, 4086, 4090, 4092, 4094, 4095}

// squashInterp maps the logistic domain (d/256 nats, −2047 ≤ d ≤ 2047) to
// a 12-bit probability by linear interpolation in sqTab.
func squashInterp(d int32) int32 {
	w := d & 127
	i := d>>7 + 16
	return (sqTab[i]*(128-w) + sqTab[i+1]*w + 64) >> 7
}

// squashTab[d+2047] = squashInterp(d).
var squashTab = func() (t [4095]int16) {
	for d := int32(-2047); d <= 2047; d++ {
		t[d+2047] = int16(squashInterp(d))
	}
	return t
}()

// squash is squashInterp with d clamped to ±2047, by table.
func squash(d int32) int32 {
	return int32(squashTab[min(max(d, -2047), 2047)+2047])
}

// stretchTab is the inverse of squash: the smallest d with squash(d) ≥ p.
var stretchTab = func() (t [4096]int16) {
	pi := int32(0)
	for d := int32(-2047); d <= 2047; d++ {
		v := squashInterp(d)
		for j := pi; j <= v; j++ {
			t[j] = int16(d)
		}
		pi = v + 1
	}
	for j := pi; j < 4096; j++ {
		t[j] = 2047
	}
	return t
}()

func stretch(p12 uint32) int32 { return int32(stretchTab[p12]) }

// rateTab[n] = ⌊2^17/(2n+3)⌋: the adaptation rate 2/(2n+3) in 1/2^16.
var rateTab = func() (t [1024]uint32) {
	for n := range t {
		t[n] = (1 << 17) / uint32(2*n+3)
	}
	return t
}()

// A counter is a 22-bit probability of a 1 (high bits) and a 10-bit count.
const counterInit = 1 << 31

func counterUpdate(s *uint32, bit uint32, limit uint32) {
	v := *s
	n := v & 1023
	p := int64(v >> 10)
	target := int64(bit) << 22
	p += (target - p) * int64(rateTab[n]) >> 16 // stays in [0, 2^22)
	if n < limit {
		n++
	}
	*s = uint32(p)<<10 | n
}

// ---- adaptive probability map ----

type apm struct {
	t    []uint16 // 33 per context
	idx  int      // the lower of the two entries used last
	w    int32    // weight of the upper entry (0..127)
	rate uint
}

func newAPM(n int, rate uint) apm {
	a := apm{t: make([]uint16, n*33), rate: rate}
	for i := range n {
		for j := range 33 {
			a.t[i*33+j] = uint16(min(sqTab[j]*16, 65535))
		}
	}
	return a
}

// refine returns the 16-bit probability for input st (stretched) in
// context cx.
func (a *apm) refine(st int32, cx int) uint32 {
	st = min(max(st, -2047), 2047) + 2048
	a.w = st & 127
	a.idx = cx*33 + int(st>>7)
	return (uint32(a.t[a.idx])*uint32(128-a.w) + uint32(a.t[a.idx+1])*uint32(a.w)) >> 7
}

func (a *apm) update(bit uint32) {
	target := int32(bit) * 65535
	lo, hi := &a.t[a.idx], &a.t[a.idx+1]
	*lo = uint16(int32(*lo) + ((target-int32(*lo))*(128-a.w))>>(a.rate+7))
	*hi = uint16(int32(*hi) + ((target-int32(*hi))*a.w)>>(a.rate+7))
}

// ---- the model ----

const (
	mixNH     = 8              // hashed contexts
	mixNC     = mixNH + 1      // counters per bit: hashed, order 1
	mixNIn    = mixNC + 2      // inputs: counters, match, bias
	mixLR     = 13             // mixer learning-rate shift
	mixErrMul = 6              // mixer error multiplier
	mixSkip   = 16 * mixErrMul // a weight set whose error is within this is not trained
	mixMS     = 5              // mixer weight sets per partial byte (match states)
	mixMinLen = 6              // match model: bytes hashed to find a match
	mixWInit  = 65536 * 3 / 10 // initial mixer weight (0.3)
)

// The unrolled loops of predict and update cover exactly 8 hashed contexts
// and 11 inputs: these declarations fail to compile otherwise.
var (
	_ [mixNH - 8]struct{}
	_ [8 - mixNH]struct{}
	_ [mixNIn - 11]struct{}
	_ [11 - mixNIn]struct{}
)

// mixO1Limit is the count limit of the order-1 counters.
const mixO1Limit = 30

// A bucket is a 16-bit check and the 15 short counters of a nibble tree.
type bucket [16]uint16

// A short counter is a 12-bit probability of a 1 (high bits) and a 4-bit
// count n; after a bit it moves towards it by 2/(2n+3) (rounded) and n
// grows up to 15.
const shortInit = 2048 << 4

// freshBucket is a claimed bucket before its check is set.
var freshBucket = bucket{0, shortInit, shortInit, shortInit, shortInit, shortInit, shortInit,
	shortInit, shortInit, shortInit, shortInit, shortInit, shortInit, shortInit, shortInit, shortInit}

func shortNext(v uint32, bit uint32) uint16 {
	n := v & 15
	p := int32(v >> 4)
	target := int32(bit) * 4095
	p += ((target-p)*int32(rateTab[n]) + 1<<15) >> 16 // stays in [0, 4095]
	if n < 15 {
		n++
	}
	return uint16(uint32(p)<<4 | n)
}

// shortTab[bit][s] is the short counter s after the bit (one load per
// update); built on first use.
var (
	shortTab     *[2][1 << 16]uint16
	shortTabOnce sync.Once
)

func buildShortTab() {
	t := new([2][1 << 16]uint16)
	for v := range 1 << 16 {
		t[0][v] = shortNext(uint32(v), 0)
		t[1][v] = shortNext(uint32(v), 1)
	}
	shortTab = t
}

type mixCoder struct {
	t    []bucket
	mask uint32
	o1   []uint32 // 65536

	cur  [mixNH]*bucket
	page [mixNH]uint32 // first bucket of the page of the high nibble's bucket
	sink uint16
	hx   [mixNH]uint64 // context hashes of the current byte
	o1p  *uint32

	// history
	buf    []byte
	bmask  int64
	pos    int64  // bytes seen (int64: identical on 32-bit platforms)
	c0     uint32 // partial byte with a leading 1
	j      uint32 // node in the nibble tree (1..15)
	c4     uint32 // last 4 bytes
	c8     uint32 // the 4 before
	bitPos uint   // 0..7
	word   uint64 // hash of the current word

	// record detection
	lastPos [256]int64
	lastD   [256]int64
	recLen  int64
	recCand int64
	recCnt  int

	// match model
	mt    []uint32
	mtSh  uint
	mPtr  int64
	mLen  int
	mByte uint32 // predicted byte | 256, 0 if none
	mExp  uint32 // expected bit
	mIdx  int    // counter of the current prediction, −1 if none
	mCnt  [64]uint32

	// mixer
	st  [mixNIn]int64
	w1  [][mixNIn]int64 // by partial byte and match state
	w2  [][mixNIn]int64 // by previous byte and bit position
	ws1 *[mixNIn]int64
	ws2 *[mixNIn]int64
	d2  int32
	d1  int32
	pm  int32 // the mixer's probability, 12 bits

	a2 apm
	pr uint32 // final 16-bit probability of a 1
}

func newMixCoder(c MixConfig, size int64) *mixCoder {
	shortTabOnce.Do(buildShortTab)
	budget := int64(c.MemMB) << 20
	hbudget := budget - budget/8
	bits := uint(12) // ≥ 128 buckets: the low nibble's page
	want := 4 * (size + 1)
	for bits < 34 && int64(32)<<(bits+1) <= hbudget && int64(1)<<bits < want {
		bits++
	}
	m := &mixCoder{
		t:    make([]bucket, 1<<bits),
		mask: uint32(1)<<bits - 1,
		o1:   make([]uint32, 65536),
	}
	for i := range m.o1 {
		m.o1[i] = counterInit
	}
	bsz := 1 << 10
	for bsz < 1<<24 && int64(bsz) < size {
		bsz <<= 1
	}
	m.buf = make([]byte, bsz)
	m.bmask = int64(bsz - 1)
	mbits := uint(10)
	for mbits < 22 && 1<<mbits < size && int64(4)<<(mbits+1) <= budget/16 {
		mbits++
	}
	m.mt = make([]uint32, 1<<mbits)
	m.mtSh = 64 - mbits
	for i := range m.mCnt {
		m.mCnt[i] = counterInit
	}
	m.w1 = make([][mixNIn]int64, 256*mixMS)
	m.w2 = make([][mixNIn]int64, 2048)
	for i := range m.w2 {
		for k := range m.w2[i] {
			m.w2[i][k] = mixWInit
		}
	}
	for i := range m.w1 {
		for k := range m.w1[i] {
			m.w1[i][k] = mixWInit
		}
	}
	m.a2 = newAPM(4096, 7)
	m.c0 = 1
	m.mIdx = -1
	m.byteContexts()
	m.nibble()
	m.predict()
	return m
}

func hash64(x uint64) uint64 {
	x *= 0x9E3779B97F4A7C15
	x ^= x >> 29
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 32
	return x
}

// byteContexts computes the hashes of the contexts of the next byte.
func (m *mixCoder) byteContexts() {
	c4, c8 := uint64(m.c4), uint64(m.c8)
	m.hx[0] = c4&0xFFFF | 1<<56
	m.hx[1] = c4 | 3<<56
	m.hx[2] = hash64(c4|(c8&0xFFFF)<<32) + 4<<56
	m.hx[3] = hash64(m.word+c4&0xFF) + 5<<56
	m.hx[4] = c4&0xFFFF00 | 6<<56
	m.hx[5] = (c4>>24)&0xFF | (c4&0xF0)<<4 | 7<<56
	if r := m.recLen; r > 0 {
		a := uint64(m.buf[(m.pos-r)&m.bmask])
		b := uint64(m.buf[(m.pos-2*r)&m.bmask])
		m.hx[6] = a | b<<8 | uint64(r)<<16 | 8<<56
		m.hx[7] = a | (c4&0xFF)<<8 | uint64(r)<<16 | 9<<56
	} else {
		m.hx[6] = 8 << 56
		m.hx[7] = c4&0xFF | 9<<56
	}
}

// nibble selects the buckets at the start of a nibble: for each context,
// one of two neighbouring buckets that holds its check, or else the less
// used of the two, which it then takes over.
func (m *mixCoder) nibble() {
	add := uint64(m.c0) * 0xD6E8FEB86659FD93
	var ks [mixNH]uint32
	var chks [mixNH]uint16
	var sink uint16
	t, mask := m.t, m.mask
	second := m.c0 > 1
	for i := range mixNH {
		x := hash64(m.hx[i] + add)
		k := uint32(x) & mask
		if second {
			// The low nibble's bucket lies in the same 4 KiB page as the
			// high nibble's: fewer TLB misses.
			k = m.page[i] | uint32(x)&127
		}
		ks[i], chks[i] = k, uint16(x>>32)|1
		// Load every bucket first: independent loads overlap their
		// cache misses.
		sink += t[k][0]
	}
	m.sink ^= sink // keeps the loads alive
	m.j = 1
	for i := range mixNH {
		k, chk := ks[i], chks[i]
		b := &t[k]
		if b[0] != chk {
			b2 := &t[k^1]
			if b2[0] == chk {
				b = b2
			} else {
				if b2[1]&15 < b[1]&15 {
					b = b2
				}
				*b = freshBucket
				b[0] = chk
			}
		}
		m.cur[i] = b
		if !second {
			m.page[i] = k &^ 127 & mask
		}
	}
}

// predict computes m.pr, the probability that the next bit is 1.
func (m *mixCoder) predict() {
	c0, j := m.c0, m.j&15
	st := &m.st
	// The loops over the 8 hashed contexts and the 11 inputs are unrolled
	// (see the declarations after mixNIn).
	c := &m.cur
	st[0] = int64(stretch(uint32(c[0][j]) >> 4))
	st[1] = int64(stretch(uint32(c[1][j]) >> 4))
	st[2] = int64(stretch(uint32(c[2][j]) >> 4))
	st[3] = int64(stretch(uint32(c[3][j]) >> 4))
	st[4] = int64(stretch(uint32(c[4][j]) >> 4))
	st[5] = int64(stretch(uint32(c[5][j]) >> 4))
	st[6] = int64(stretch(uint32(c[6][j]) >> 4))
	st[7] = int64(stretch(uint32(c[7][j]) >> 4))
	p := &m.o1[(m.c4&0xFF)<<8|c0&255]
	m.o1p = p
	st[mixNH] = int64(stretch(*p >> 20))
	// match model
	st[mixNC] = 0
	mcls := 0
	m.mIdx = -1
	if m.mByte != 0 {
		if m.mByte>>(8-m.bitPos) == c0 {
			m.mExp = (m.mByte >> (7 - m.bitPos)) & 1
			l := m.mLen
			if l < 16 {
				mcls = l
			} else {
				mcls = 16 + min((l-16)>>2, 15)
			}
			m.mIdx = mcls*2 + int(m.mExp)
			st[mixNC] = int64(stretch(m.mCnt[m.mIdx&63] >> 20))
		} else {
			m.mByte = 0
		}
	}
	st[mixNC+1] = 256
	ms := 0
	if mcls > 0 {
		ms = 1 + min(mcls>>3, mixMS-2)
	}
	w1 := &m.w1[int(c0&255)|ms<<8]
	w2 := &m.w2[int(m.c4&0xFF)<<3|int(m.bitPos&7)]
	m.ws1, m.ws2 = w1, w2
	d1 := st[0]*w1[0] + st[1]*w1[1] + st[2]*w1[2] + st[3]*w1[3] + st[4]*w1[4] +
		st[5]*w1[5] + st[6]*w1[6] + st[7]*w1[7] + st[8]*w1[8] + st[9]*w1[9] + st[10]*w1[10]
	d2 := st[0]*w2[0] + st[1]*w2[1] + st[2]*w2[2] + st[3]*w2[3] + st[4]*w2[4] +
		st[5]*w2[5] + st[6]*w2[6] + st[7]*w2[7] + st[8]*w2[8] + st[9]*w2[9] + st[10]*w2[10]
	m.d1 = int32(min(max(d1>>16, -2047), 2047))
	m.d2 = int32(min(max(d2>>16, -2047), 2047))
	d := (m.d1 + m.d2) >> 1
	m.pm = squash(d)
	pm := uint32(m.pm) << 4
	p2 := m.a2.refine(d, int(c0|(m.c4&0xF0)<<4))
	pr := (pm + p2) >> 1
	m.pr = min(max(pr, 32), 65535-32)
}

// update trains the model with the coded bit and moves to the next bit.
func (m *mixCoder) update(bit uint32) {
	next := &shortTab[bit&1]
	j := m.j & 15
	c := &m.cur
	c[0][j] = next[c[0][j]]
	c[1][j] = next[c[1][j]]
	c[2][j] = next[c[2][j]]
	c[3][j] = next[c[3][j]]
	c[4][j] = next[c[4][j]]
	c[5][j] = next[c[5][j]]
	c[6][j] = next[c[6][j]]
	c[7][j] = next[c[7][j]]
	counterUpdate(m.o1p, bit, mixO1Limit)
	if m.mIdx >= 0 {
		counterUpdate(&m.mCnt[m.mIdx&63], bit, 1023)
	}
	// Train each weight set along its error (bit − p in 1/4096, times
	// mixErrMul) unless the error is small.
	st := &m.st
	if e1 := (int32(bit)<<12 - squash(m.d1)) * mixErrMul; e1 > mixSkip || e1 < -mixSkip {
		w, e := m.ws1, int64(e1)
		w[0] += st[0] * e >> mixLR
		w[1] += st[1] * e >> mixLR
		w[2] += st[2] * e >> mixLR
		w[3] += st[3] * e >> mixLR
		w[4] += st[4] * e >> mixLR
		w[5] += st[5] * e >> mixLR
		w[6] += st[6] * e >> mixLR
		w[7] += st[7] * e >> mixLR
		w[8] += st[8] * e >> mixLR
		w[9] += st[9] * e >> mixLR
		w[10] += st[10] * e >> mixLR
	}
	if e2 := (int32(bit)<<12 - squash(m.d2)) * mixErrMul; e2 > mixSkip || e2 < -mixSkip {
		w, e := m.ws2, int64(e2)
		w[0] += st[0] * e >> mixLR
		w[1] += st[1] * e >> mixLR
		w[2] += st[2] * e >> mixLR
		w[3] += st[3] * e >> mixLR
		w[4] += st[4] * e >> mixLR
		w[5] += st[5] * e >> mixLR
		w[6] += st[6] * e >> mixLR
		w[7] += st[7] * e >> mixLR
		w[8] += st[8] * e >> mixLR
		w[9] += st[9] * e >> mixLR
		w[10] += st[10] * e >> mixLR
	}
	m.a2.update(bit)

	m.c0 = m.c0<<1 | bit
	m.j = m.j<<1 | bit
	m.bitPos++
	if m.bitPos == 8 {
		m.endByte(byte(m.c0))
		m.c0 = 1
		m.bitPos = 0
		m.byteContexts()
		m.nibble()
	} else if m.bitPos == 4 {
		m.nibble()
	}
}

func (m *mixCoder) endByte(c byte) {
	m.buf[m.pos&m.bmask] = c
	m.pos++
	m.c8 = m.c8<<8 | m.c4>>24
	m.c4 = m.c4<<8 | uint32(c)
	// word
	lc := c
	if lc >= 'A' && lc <= 'Z' {
		lc += 'a' - 'A'
	}
	if lc >= 'a' && lc <= 'z' {
		m.word = (m.word + uint64(lc) + 1) * 0x2F0F3F4F5F6F7F1
	} else {
		m.word = 0
	}
	// record length: the distance between occurrences of a byte value,
	// when it repeats for two consecutive pairs, seen 8 times in a row.
	d := m.pos - m.lastPos[c]
	if m.lastPos[c] > 0 && d == m.lastD[c] && d > 1 && d <= 4096 {
		if d == m.recCand {
			m.recCnt++
			if m.recCnt >= 8 {
				m.recLen = d
			}
		} else {
			m.recCand, m.recCnt = d, 1
		}
	}
	m.lastD[c] = d
	m.lastPos[c] = m.pos
	// match model
	if m.mLen > 0 && m.mByte != 0 {
		m.mLen = min(m.mLen+1, 65535)
		m.mPtr++
	} else {
		m.mLen = 0
	}
	if m.pos >= mixMinLen {
		h := hash64(uint64(m.c4)|uint64(m.c8&0xFFFF)<<32) >> m.mtSh
		slot := &m.mt[h]
		if m.mLen == 0 && *slot > 0 {
			// The table keeps positions modulo 2^32.
			p := m.pos - int64(uint32(m.pos)-*slot)
			l := int64(0)
			for l < 32 && l < p && m.pos-p+l < int64(len(m.buf)) &&
				m.buf[(p-1-l)&m.bmask] == m.buf[(m.pos-1-l)&m.bmask] {
				l++
			}
			if l >= mixMinLen {
				m.mLen, m.mPtr = int(l), p
			}
		}
		*slot = uint32(m.pos)
	}
	m.mByte = 0
	if m.mLen > 0 {
		m.mByte = uint32(m.buf[m.mPtr&m.bmask]) | 256
	}
}

func (m *mixCoder) encode(e *arith.Encoder, b byte) error {
	for i := 7; i >= 0; i-- {
		bit := uint32(b>>uint(i)) & 1
		e.EncodeBit(bit, m.pr)
		m.update(bit)
		m.predict()
	}
	return nil
}

func (m *mixCoder) decode(d *arith.Decoder) byte {
	for range 8 {
		m.update(d.DecodeBit(m.pr))
		m.predict()
	}
	return byte(m.c4)
}
