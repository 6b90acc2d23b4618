// Package arith is a byte-oriented range coder (an arithmetic coder with
// 32-bit range and byte-wise renormalisation) that codes one symbol at a
// time from integer cumulative frequencies.
//
// # Scheme
//
// The coder is of the "low with carry" kind (Schindler 1998; the same
// structure as the LZMA range coder): the encoder keeps a 33-bit low (held in
// a uint64, bit 32 being a pending carry) and a 32-bit range. A symbol with
// cumulative frequency cum, frequency freq and total total ≤ MaxTotal
// narrows the interval to
//
//	r     = range / total           (integer division)
//	low  += r·cum
//	range = r·freq                  (or range − r·cum for the last symbol,
//	                                 cum+freq = total, which thereby also
//	                                 receives the rounding remainder)
//
// and, while range < 2^24, shifts out the top byte of low (range <<= 8).
// Because a carry out of the 32 low bits can still change bytes already
// produced, the encoder holds back one byte (cache) plus a run of 0xFF bytes
// (pending) until it knows whether a carry reaches them; the carry is then
// added to the cached byte and turns the 0xFF run into 0x00 bytes.
//
// # Stream
//
// The stream starts with one 0x00 byte (the initial cache), has one byte per
// renormalisation shift and ends with the four bytes of the final low,
// written by Close (five shifts in all). The decoder reads exactly the bytes
// the encoder wrote: five at the start and one per shift, so it needs no
// look-ahead past the end of the stream, and after the last symbol its code
// register is exactly zero, which Finish checks.
//
// # Cost
//
// The integer division wastes at most total/range < 2^−8 of the range per
// symbol, i.e. less than 0.0057 bits per symbol, and on average about
// total/2^31 times that for small totals; the last symbol of every table
// absorbs the remainder so nothing is wasted for binary decisions coded
// with their larger probability last.
//
// # Errors
//
// Write errors of the encoder and truncated input of the decoder are sticky:
// the first one is kept and returned by Err, Close and Finish; the coder
// goes on without panicking (a truncated decoder reads zero bytes), and every
// loop of the coder is bounded, so a caller that decodes a bounded number of
// symbols and then checks Err can never hang.
package arith

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// MaxTotal is the largest total frequency Encode and Decoder.Target accept
// (2^16). Totals must be at least 1 and every coded frequency at least 1.
const MaxTotal = 1 << 16

// MaxTotalBits is log2(MaxTotal), the largest shift EncodeShift and
// Decoder.TargetShift accept.
const MaxTotalBits = 16

const top = 1 << 24

// ErrTruncated is returned (wrapped) when the decoder needs a byte past the
// end of its input.
var ErrTruncated = errors.New("arith: truncated input (stream ends early)")

// ErrCorrupt is returned (wrapped) when the stream is provably not one the
// encoder produced (bad first byte, non-zero final code).
var ErrCorrupt = errors.New("arith: corrupt stream")

// Encoder encodes symbols into a byte stream. The zero value is not usable;
// create one with NewEncoder.
type Encoder struct {
	w       io.ByteWriter
	low     uint64 // 33 bits: bit 32 is a carry into the cached bytes
	rng     uint32
	cache   byte  // the last byte shifted out, held back for carries
	pending int64 // 0xFF bytes held back after cache
	n       int64 // bytes written
	err     error
}

// NewEncoder returns an encoder writing to w. If w is not an io.ByteWriter
// it is wrapped in a bufio.Writer, which Close flushes.
func NewEncoder(w io.Writer) *Encoder {
	bw, ok := w.(io.ByteWriter)
	if !ok {
		bw = bufio.NewWriter(w)
	}
	return &Encoder{w: bw, rng: 0xFFFFFFFF, pending: 1}
}

func (e *Encoder) put(b byte) {
	if e.err == nil {
		if err := e.w.WriteByte(b); err != nil {
			e.err = err
		}
	}
	e.n++
}

// shiftLow moves the top byte of the 32-bit low into the cache, resolving
// the carry for the bytes held back.
func (e *Encoder) shiftLow() {
	if uint32(e.low) < 0xFF000000 || e.low >= 1<<32 {
		carry := byte(e.low >> 32)
		b := e.cache
		for ; e.pending > 0; e.pending-- {
			e.put(b + carry)
			b = 0xFF
		}
		e.cache = byte(e.low >> 24)
	}
	e.pending++
	e.low = (e.low & 0x00FFFFFF) << 8
}

// Encode codes the symbol occupying [cum, cum+freq) of a table with the
// given total: 1 ≤ freq, cum+freq ≤ total ≤ MaxTotal. Arguments outside
// these bounds are a programming error and make Encode panic.
func (e *Encoder) Encode(cum, freq, total uint32) {
	if freq == 0 || cum+freq > total || total > MaxTotal || cum+freq < cum {
		panic(fmt.Sprintf("arith: Encode(cum=%d, freq=%d, total=%d) out of range", cum, freq, total))
	}
	r := e.rng / total
	e.low += uint64(r * cum)
	if cum+freq == total {
		e.rng -= r * cum
	} else {
		e.rng = r * freq
	}
	for e.rng < top {
		e.rng <<= 8
		e.shiftLow()
	}
}

// EncodeShift is Encode with total = 2^bits (1 ≤ bits ≤ MaxTotalBits); it
// avoids the division.
func (e *Encoder) EncodeShift(cum, freq uint32, bits uint) {
	total := uint32(1) << bits
	if freq == 0 || cum+freq > total || bits < 1 || bits > MaxTotalBits {
		panic(fmt.Sprintf("arith: EncodeShift(cum=%d, freq=%d, bits=%d) out of range", cum, freq, bits))
	}
	r := e.rng >> bits
	e.low += uint64(r * cum)
	if cum+freq == total {
		e.rng -= r * cum
	} else {
		e.rng = r * freq
	}
	for e.rng < top {
		e.rng <<= 8
		e.shiftLow()
	}
}

// EncodeBit codes one binary decision with P(bit = 1) = p1/2^16
// (1 ≤ p1 < 2^16); bit is 0 or 1. It produces exactly the stream of
// EncodeShift(0, p1, 16) for a 1 and EncodeShift(p1, 2^16−p1, 16) for a 0,
// in fewer steps. p1 outside its range is a programming error and makes
// EncodeBit panic.
func (e *Encoder) EncodeBit(bit uint32, p1 uint32) {
	if p1-1 >= 1<<16-1 {
		panic(fmt.Sprintf("arith: EncodeBit(p1=%d) out of range", p1))
	}
	bound := (e.rng >> 16) * p1
	if bit != 0 {
		e.rng = bound
	} else {
		e.low += uint64(bound)
		e.rng -= bound
	}
	for e.rng < top {
		e.rng <<= 8
		e.shiftLow()
	}
}

// Close writes the final bytes of the stream (and flushes the bufio.Writer
// NewEncoder created, if any). It does not close the underlying writer. It
// returns the first write error, if any. The encoder must not be used
// afterwards.
func (e *Encoder) Close() error {
	for range 5 {
		e.shiftLow()
	}
	if f, ok := e.w.(*bufio.Writer); ok && e.err == nil {
		e.err = f.Flush()
	}
	return e.err
}

// Err returns the first write error, or nil.
func (e *Encoder) Err() error { return e.err }

// BytesWritten returns the number of bytes of the stream produced so far
// (including the ones still to be flushed by Close once it has run).
func (e *Encoder) BytesWritten() int64 { return e.n }

// Decoder decodes a stream written by Encoder. Decoding a symbol takes two
// calls: Target (or TargetShift) returns a value v in [0, total); the caller
// finds the symbol whose interval [cum, cum+freq) contains v and passes that
// interval to Update (UpdateShift) with the same total.
type Decoder struct {
	r    io.ByteReader
	code uint32
	rng  uint32
	q    uint32 // range/total of the last Target call
	n    int64  // bytes read
	err  error
}

// NewDecoder returns a decoder reading from r (wrapped in a bufio.Reader
// unless it is an io.ByteReader: a Decoder may then read ahead of the end of
// the stream in r, so give it an io.ByteReader when bytes follow the
// stream). It reads the first five bytes of the stream; the error is
// non-nil (and also returned by Err) if they are missing or the first is
// not 0x00.
func NewDecoder(r io.Reader) (*Decoder, error) {
	br, ok := r.(io.ByteReader)
	if !ok {
		br = bufio.NewReader(r)
	}
	d := &Decoder{r: br, rng: 0xFFFFFFFF}
	if b := d.next(); b != 0 && d.err == nil {
		d.err = fmt.Errorf("%w: first byte is 0x%02x, want 0x00", ErrCorrupt, b)
	}
	for range 4 {
		d.code = d.code<<8 | uint32(d.next())
	}
	return d, d.err
}

func (d *Decoder) next() byte {
	if d.err != nil {
		return 0
	}
	b, err := d.r.ReadByte()
	if err != nil {
		if err == io.EOF {
			d.err = fmt.Errorf("%w after %d bytes", ErrTruncated, d.n)
		} else {
			d.err = err
		}
		return 0
	}
	d.n++
	return b
}

// Target returns the value v in [0, total) that identifies the next symbol
// of a table with this total (1 ≤ total ≤ MaxTotal).
func (d *Decoder) Target(total uint32) uint32 {
	if total == 0 || total > MaxTotal {
		panic(fmt.Sprintf("arith: Target(total=%d) out of range", total))
	}
	d.q = d.rng / total
	return min(d.code/d.q, total-1)
}

// Update removes the symbol [cum, cum+freq) of the table passed to the
// preceding Target call (same total) from the stream.
func (d *Decoder) Update(cum, freq, total uint32) {
	if freq == 0 || cum+freq > total || cum+freq < cum {
		panic(fmt.Sprintf("arith: Update(cum=%d, freq=%d, total=%d) out of range", cum, freq, total))
	}
	d.code -= d.q * cum
	if cum+freq == total {
		d.rng -= d.q * cum
	} else {
		d.rng = d.q * freq
	}
	for d.rng < top {
		d.rng <<= 8
		d.code = d.code<<8 | uint32(d.next())
	}
}

// TargetShift is Target with total = 2^bits (1 ≤ bits ≤ MaxTotalBits).
func (d *Decoder) TargetShift(bits uint) uint32 {
	if bits < 1 || bits > MaxTotalBits {
		panic(fmt.Sprintf("arith: TargetShift(bits=%d) out of range", bits))
	}
	d.q = d.rng >> bits
	return min(d.code/d.q, 1<<bits-1)
}

// UpdateShift is Update with total = 2^bits, after TargetShift(bits).
func (d *Decoder) UpdateShift(cum, freq uint32, bits uint) {
	d.Update(cum, freq, 1<<bits)
}

// DecodeBit decodes a decision coded by EncodeBit with the same p1
// (1 ≤ p1 < 2^16). It equals TargetShift(16) < p1 followed by the matching
// UpdateShift, without a division.
func (d *Decoder) DecodeBit(p1 uint32) uint32 {
	if p1-1 >= 1<<16-1 {
		panic(fmt.Sprintf("arith: DecodeBit(p1=%d) out of range", p1))
	}
	bound := (d.rng >> 16) * p1
	var bit uint32
	if d.code < bound {
		d.rng = bound
		bit = 1
	} else {
		d.code -= bound
		d.rng -= bound
	}
	for d.rng < top {
		d.rng <<= 8
		d.code = d.code<<8 | uint32(d.next())
	}
	return bit
}

// Err returns the first error met (truncated input, a read error, a corrupt
// first byte), or nil.
func (d *Decoder) Err() error { return d.err }

// BytesRead returns the number of stream bytes consumed so far.
func (d *Decoder) BytesRead() int64 { return d.n }

// Finish checks that the stream ended where the encoder ended it: it
// returns Err if set, and otherwise an error wrapping ErrCorrupt unless the
// code register is zero, as it is after the last symbol of a genuine stream.
// It reads nothing.
func (d *Decoder) Finish() error {
	if d.err != nil {
		return d.err
	}
	if d.code != 0 {
		return fmt.Errorf("%w: final code 0x%08x is not zero", ErrCorrupt, d.code)
	}
	return nil
}
