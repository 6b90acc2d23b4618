package arith

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// table is a frequency table with its cumulative frequencies.
type table struct {
	freq, cum []uint32
	total     uint32
}

func newTable(freq []uint32) table {
	t := table{freq: freq, cum: make([]uint32, len(freq)+1)}
	for i, f := range freq {
		t.cum[i+1] = t.cum[i] + f
	}
	t.total = t.cum[len(freq)]
	return t
}

func (t table) find(v uint32) int {
	lo, hi := 0, len(t.freq)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if t.cum[mid] <= v {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// sample draws a symbol from the table's own distribution.
func (t table) sample(r *rand.Rand) int {
	return t.find(uint32(r.IntN(int(t.total))))
}

func roundTrip(t *testing.T, tabs []table, syms []int, which []int) {
	t.Helper()
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	ideal := 0.0
	for i, s := range syms {
		tb := tabs[which[i]]
		e.Encode(tb.cum[s], tb.freq[s], tb.total)
		ideal += math.Log2(float64(tb.total) / float64(tb.freq[s]))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if int64(buf.Len()) != e.BytesWritten() {
		t.Fatalf("BytesWritten %d, buffer %d", e.BytesWritten(), buf.Len())
	}
	bits := float64(8 * buf.Len())
	if len(syms) > 1000 && bits > ideal*1.003+64 {
		t.Errorf("%d bits for ideal %.0f", buf.Len()*8, ideal)
	}
	d, err := NewDecoder(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range syms {
		tb := tabs[which[i]]
		v := d.Target(tb.total)
		got := tb.find(v)
		if got != s {
			t.Fatalf("symbol %d: got %d, want %d", i, got, s)
		}
		d.Update(tb.cum[got], tb.freq[got], tb.total)
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	if d.BytesRead() != int64(buf.Len()) {
		t.Fatalf("decoder read %d of %d bytes", d.BytesRead(), buf.Len())
	}
}

func TestRandomTables(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	var tabs []table
	for range 50 {
		k := 1 + r.IntN(300)
		total := k + r.IntN(MaxTotal-k+1)
		freq := make([]uint32, k)
		for i := range freq {
			freq[i] = 1
		}
		for left := total - k; left > 0; {
			x := 1 + r.IntN(left)
			freq[r.IntN(k)] += uint32(x)
			left -= x
		}
		tabs = append(tabs, newTable(freq))
	}
	syms := make([]int, n)
	which := make([]int, n)
	for i := range syms {
		which[i] = r.IntN(len(tabs))
		syms[i] = tabs[which[i]].sample(r)
	}
	roundTrip(t, tabs, syms, which)
	// Uniformly random symbols (not following the tables): rare symbols
	// get coded often.
	for i := range syms[:n/4] {
		syms[i] = r.IntN(len(tabs[which[i]].freq))
	}
	roundTrip(t, tabs, syms[:n/4], which[:n/4])
}

func TestExtremeTables(t *testing.T) {
	for _, k := range []int{2, 3, 256} {
		for _, total := range []int{k, k + 1, 4096, MaxTotal} {
			freq := make([]uint32, k)
			for i := range freq {
				freq[i] = 1
			}
			for _, big := range []int{0, k / 2, k - 1} {
				f := append([]uint32(nil), freq...)
				f[big] = uint32(total - (k - 1))
				tb := newTable(f)
				r := rand.New(rand.NewPCG(uint64(k), uint64(total)))
				n := 100_000
				syms := make([]int, n)
				which := make([]int, n)
				for i := range syms {
					switch i % 3 {
					case 0:
						syms[i] = big
					case 1:
						syms[i] = tb.sample(r)
					default:
						syms[i] = r.IntN(k)
					}
				}
				// Long runs of the likely symbol (carry chains) and of
				// the unlikely ones.
				for i := 10_000; i < 60_000; i++ {
					syms[i] = big
				}
				for i := 60_000; i < 70_000; i++ {
					syms[i] = (big + 1) % k
				}
				roundTrip(t, []table{tb}, syms, which)
			}
		}
	}
}

func TestShift(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	type op struct {
		bit   int
		p1    uint32
		shift uint
	}
	ops := make([]op, 500_000)
	for i := range ops {
		sh := uint(1 + r.IntN(MaxTotalBits))
		p1 := uint32(1 + r.IntN(1<<sh-1))
		if sh == 1 {
			p1 = 1
		}
		bit := 0
		if r.Uint32()&(1<<sh-1) < p1 {
			bit = 1
		}
		ops[i] = op{bit, p1, sh}
		if bit == 1 {
			e.EncodeShift(0, p1, sh)
		} else {
			e.EncodeShift(p1, 1<<sh-p1, sh)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := NewDecoder(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range ops {
		v := d.TargetShift(o.shift)
		bit := 0
		if v < o.p1 {
			bit = 1
			d.UpdateShift(0, o.p1, o.shift)
		} else {
			d.UpdateShift(o.p1, 1<<o.shift-o.p1, o.shift)
		}
		if bit != o.bit {
			t.Fatalf("bit %d: got %d want %d", i, bit, o.bit)
		}
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
}

// EncodeBit/DecodeBit produce and read exactly the stream of the
// EncodeShift/TargetShift pair with 16 bits, and interoperate with it.
func TestBit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	type op struct{ bit, p1 uint32 }
	ops := make([]op, 300_000)
	for i := range ops {
		p1 := uint32(1 + r.IntN(1<<16-1))
		switch i % 7 {
		case 0:
			p1 = 1
		case 1:
			p1 = 1<<16 - 1
		}
		var bit uint32
		if r.Uint32()&0xFFFF < p1 {
			bit = 1
		}
		if i%1000 == 999 {
			bit ^= 1 // an unlikely outcome now and then
		}
		ops[i] = op{bit, p1}
	}
	var a, b bytes.Buffer
	ea, eb := NewEncoder(&a), NewEncoder(&b)
	for _, o := range ops {
		ea.EncodeBit(o.bit, o.p1)
		if o.bit == 1 {
			eb.EncodeShift(0, o.p1, 16)
		} else {
			eb.EncodeShift(o.p1, 1<<16-o.p1, 16)
		}
	}
	if err := ea.Close(); err != nil {
		t.Fatal(err)
	}
	if err := eb.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("EncodeBit and EncodeShift streams differ")
	}
	d, err := NewDecoder(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range ops {
		var bit uint32
		if i%2 == 0 {
			bit = d.DecodeBit(o.p1)
		} else if d.TargetShift(16) < o.p1 {
			bit = 1
			d.UpdateShift(0, o.p1, 16)
		} else {
			d.UpdateShift(o.p1, 1<<16-o.p1, 16)
		}
		if bit != o.bit {
			t.Fatalf("bit %d: got %d want %d", i, bit, o.bit)
		}
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	for _, p1 := range []uint32{0, 1 << 16} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("EncodeBit(p1=%d) did not panic", p1)
				}
			}()
			NewEncoder(&a).EncodeBit(1, p1)
		}()
	}
}

func TestEmpty(t *testing.T) {
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 5 {
		t.Fatalf("empty stream has %d bytes, want 5", buf.Len())
	}
	d, err := NewDecoder(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	// No input at all.
	if _, err := NewDecoder(bytes.NewReader(nil)); !errors.Is(err, ErrTruncated) {
		t.Fatalf("empty input: %v, want ErrTruncated", err)
	}
	if _, err := NewDecoder(bytes.NewReader([]byte{1, 0, 0, 0, 0})); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("bad first byte: %v, want ErrCorrupt", err)
	}
}

func TestTruncated(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	tb := newTable([]uint32{1, 5, 100, 30, 7})
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	syms := make([]int, 20_000)
	for i := range syms {
		syms[i] = tb.sample(r)
		e.Encode(tb.cum[syms[i]], tb.freq[syms[i]], tb.total)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	full := buf.Bytes()
	for _, cut := range []int{0, 1, 4, 5, 6, len(full) / 2, len(full) - 1} {
		d, err := NewDecoder(bytes.NewReader(full[:cut]))
		if err == nil {
			for range syms {
				v := d.Target(tb.total)
				s := tb.find(v)
				d.Update(tb.cum[s], tb.freq[s], tb.total)
			}
			err = d.Finish()
		}
		if !errors.Is(err, ErrTruncated) {
			t.Errorf("cut at %d of %d: %v, want ErrTruncated", cut, len(full), err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	tb := newTable([]uint32{1000, 20000, 300, 44000, 236})
	var buf bytes.Buffer
	b.SetBytes(1)
	e := NewEncoder(&buf)
	for i := 0; b.Loop(); i++ {
		s := i % 5
		e.Encode(tb.cum[s], tb.freq[s], tb.total)
		if buf.Len() > 1<<20 {
			buf.Reset()
		}
	}
	e.Close()
}
