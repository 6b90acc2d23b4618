package compress

import (
	"encoding/binary"
	"fmt"

	"github.com/vomc/vomc/arith"
	"github.com/vomc/vomc/ppm"
	"github.com/vomc/vomc/predict"
)

// MaxPPMOrder is the largest PPM order PPM accepts.
const MaxPPMOrder = 32

// MaxMemMB is the largest memory budget, in MiB, a model accepts (and a
// header may ask for).
const MaxMemMB = 4096

// PPM counting constants (part of format version 1).
const (
	ppmInc      = 1       // count increment of a coded symbol
	ppmMaxTotal = 1 << 12 // a context whose total exceeds this is halved
)

// PPMConfig is the configuration of the byte PPM model. Its header
// parameters are: the order (1 byte), the escape method (1 byte, the value
// of ppm.Method: 1 = C, 2 = D) and the budget in MiB (unsigned LEB128
// varint), nothing else.
//
// # Model
//
// For the next byte, PPM visits the contexts of orders k = m, m−1, …, 0
// (m = min(D, bytes seen since the last restart)) through suffix links.
// In a context with, over the symbols not excluded, total count n and d
// distinct symbols, a symbol of count c has weight c (method C) or 2c−1
// (method D) and the escape has weight d; the coding total is n+d (C) or 2n
// (D). If the context holds every symbol not yet excluded, the escape
// weight is 0. Symbols are coded with their weight over the total; an
// escape excludes the context's symbols from all lower orders (exclusion).
// A byte never seen in any context is coded at order −1, uniformly over the
// 256 − (excluded) remaining bytes. Contexts with no symbol cost nothing.
//
// After coding, the count of the symbol is incremented (by 1) only in the
// context that coded it, and it is added with count 1 to the higher-order
// contexts that missed it (update exclusion). A context whose total exceeds
// 2^13 has all counts halved, rounding up. Symbols are kept sorted by
// decreasing count (a stable bubble step after each increment), which
// fixes the order of the cumulative frequencies. All of this is integer
// arithmetic: the coding is bit-identical on every platform.
//
// # Memory
//
// Context nodes take 16 bytes and symbol entries 8 bytes (plus the space
// left behind when a context's list outgrows its slot). When, after a
// byte's update, the model uses more than MemMB MiB, it is restarted:
// emptied to the state of a fresh stream (as PPMd's -r0), in the encoder
// and in the decoder alike at the same byte.
type PPMConfig struct {
	// Order is the maximum context length D in bytes, 0..MaxPPMOrder.
	Order int
	// Method is the escape method, ppm.MethodC or ppm.MethodD.
	Method ppm.Method
	// MemMB is the memory budget in MiB, 1..MaxMemMB.
	MemMB int
}

// DefaultPPM is the PPM configuration the CLI uses by default.
func DefaultPPM() PPMConfig { return PPMConfig{Order: 5, Method: ppm.MethodD, MemMB: 256} }

// Validate reports whether c is a valid configuration.
func (c PPMConfig) Validate() error {
	if c.Order < 0 || c.Order > MaxPPMOrder {
		return fmt.Errorf("ppm order %d outside 0..%d", c.Order, MaxPPMOrder)
	}
	if c.Method != ppm.MethodC && c.Method != ppm.MethodD {
		return fmt.Errorf("ppm escape method %v not supported (C or D)", c.Method)
	}
	if c.MemMB < 1 || c.MemMB > MaxMemMB {
		return fmt.Errorf("memory budget %d MiB outside 1..%d", c.MemMB, MaxMemMB)
	}
	return nil
}

// PPM returns the byte PPM model with configuration c.
func PPM(c PPMConfig) (Model, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	return ppmModel{c}, nil
}

func parsePPM(p []byte) (Model, error) {
	if len(p) < 3 {
		return nil, fmt.Errorf("ppm parameters too short")
	}
	mem, n := binary.Uvarint(p[2:])
	if n <= 0 || 2+n != len(p) || mem > MaxMemMB {
		return nil, fmt.Errorf("bad ppm memory parameter")
	}
	return PPM(PPMConfig{Order: int(p[0]), Method: ppm.Method(p[1]), MemMB: int(mem)})
}

type ppmModel struct{ c PPMConfig }

func (m ppmModel) Name() string {
	return fmt.Sprintf("ppm(D=%d,%v,mem=%dMiB)", m.c.Order, m.c.Method, m.c.MemMB)
}

func (m ppmModel) spec() (byte, []byte) {
	p := []byte{byte(m.c.Order), byte(m.c.Method)}
	return idPPM, binary.AppendUvarint(p, uint64(m.c.MemMB))
}

func (m ppmModel) newCoder(size int64) coder { return newPPMCoder(m.c, size) }

// pnode is a context: its symbol list is arena[off : off+n] (room for cap).
type pnode struct {
	total  uint32 // Σ counts of its symbols
	off    int32  // first symbol entry in the arena
	n, cap uint16 // symbols in use, slots reserved
	suffix int32  // the context one byte shorter (root: 0)
}

// pkid is a symbol entry of a context s: the symbol a, its count c(s, a)
// and the context s·a of the next position (0 if |s| = D).
type pkid struct {
	child int32
	cnt   uint16
	sym   byte
}

type ppmCoder struct {
	order    int
	methodD  bool
	budget   int64 // bytes
	nodes    []pnode
	arena    []pkid
	top      int32 // the longest current context
	topOrder int
	path     []int32 // path[k]: the current context of order k
	mark     [256]uint32
	gen      uint32
	nexcl    int // symbols excluded at the current byte
}

func newPPMCoder(c PPMConfig, size int64) *ppmCoder {
	budget := int64(c.MemMB) << 20
	// Reserve what the budget or the data can use, whichever is less
	// (a capacity hint only; the restart rule depends on the budget).
	nodeCap := min(budget/16, int64(c.Order+1)*size+2) + int64(c.Order) + 2
	arenaCap := min(budget/8, 2*int64(c.Order+1)*size+256) + 512*int64(c.Order+2)
	p := &ppmCoder{
		order:   c.Order,
		methodD: c.Method == ppm.MethodD,
		budget:  budget,
		nodes:   make([]pnode, 1, nodeCap),
		arena:   make([]pkid, 0, arenaCap),
		path:    make([]int32, c.Order+1),
	}
	return p
}

func (p *ppmCoder) reset() {
	p.nodes = p.nodes[:1]
	p.nodes[0] = pnode{}
	p.arena = p.arena[:0]
	p.top, p.topOrder = 0, 0
}

func (p *ppmCoder) weight(c uint16) uint32 {
	if p.methodD {
		return 2*uint32(c) - 1
	}
	return uint32(c)
}

// totals returns the coding total and escape weight of a context with
// (non-excluded) count n and d distinct symbols.
func (p *ppmCoder) totals(n uint32, d int) (T, esc uint32) {
	esc = uint32(d)
	if p.methodD {
		T = 2 * n
	} else {
		T = n + esc
	}
	if d == 256-p.nexcl {
		return T - esc, 0
	}
	return T, esc
}

// begin fills path and starts a new exclusion generation.
func (p *ppmCoder) begin() {
	x := p.top
	for k := p.topOrder; k >= 0; k-- {
		p.path[k] = x
		x = p.nodes[x].suffix
	}
	p.gen++
	if p.gen == 0 {
		clear(p.mark[:])
		p.gen = 1
	}
	p.nexcl = 0
}

func (p *ppmCoder) exclude(kids []pkid) {
	gen := p.gen
	for i := range kids {
		if p.mark[kids[i].sym] != gen {
			p.mark[kids[i].sym] = gen
			p.nexcl++
		}
	}
}

// stats returns, over the non-excluded symbols of kids, the count and the
// number of symbols.
func (p *ppmCoder) stats(kids []pkid) (n uint32, d int) {
	gen := p.gen
	for i := range kids {
		if p.mark[kids[i].sym] != gen {
			n += uint32(kids[i].cnt)
			d++
		}
	}
	return n, d
}

func (p *ppmCoder) encode(e *arith.Encoder, a byte) error {
	p.begin()
	coded, at := -1, int32(-1)
	gen := p.gen
	for k := p.topOrder; k >= 0; k-- {
		nd := &p.nodes[p.path[k]]
		if nd.n == 0 {
			continue
		}
		kids := p.arena[nd.off : nd.off+int32(nd.n)]
		n, d := nd.total, int(nd.n)
		if p.nexcl > 0 {
			if n, d = p.stats(kids); d == 0 {
				continue
			}
		}
		T, esc := p.totals(n, d)
		var cum uint32
		i := 0
		for ; i < len(kids); i++ {
			s := kids[i].sym
			if s == a {
				break
			}
			if p.mark[s] != gen {
				cum += p.weight(kids[i].cnt)
			}
		}
		if i < len(kids) {
			e.Encode(cum, p.weight(kids[i].cnt), T)
			coded, at = k, nd.off+int32(i)
			break
		}
		e.Encode(T-esc, esc, T)
		p.exclude(kids)
	}
	if coded < 0 {
		idx := 0
		for s := range int(a) {
			if p.mark[s] != gen {
				idx++
			}
		}
		e.Encode(uint32(idx), 1, uint32(256-p.nexcl))
	}
	p.update(a, coded, at)
	return nil
}

func (p *ppmCoder) decode(dc *arith.Decoder) byte {
	p.begin()
	coded, at := -1, int32(-1)
	gen := p.gen
	var a byte
	for k := p.topOrder; k >= 0; k-- {
		nd := &p.nodes[p.path[k]]
		if nd.n == 0 {
			continue
		}
		kids := p.arena[nd.off : nd.off+int32(nd.n)]
		n, d := nd.total, int(nd.n)
		if p.nexcl > 0 {
			if n, d = p.stats(kids); d == 0 {
				continue
			}
		}
		T, esc := p.totals(n, d)
		v := dc.Target(T)
		if v >= T-esc {
			dc.Update(T-esc, esc, T)
			p.exclude(kids)
			continue
		}
		var cum uint32
		i := 0
		for ; i < len(kids)-1; i++ {
			if p.mark[kids[i].sym] == gen {
				continue
			}
			w := p.weight(kids[i].cnt)
			if cum+w > v {
				break
			}
			cum += w
		}
		// i is the symbol containing v: the loop stops there, or at the
		// last entry, which then is not excluded (v < T−esc).
		dc.Update(cum, p.weight(kids[i].cnt), T)
		a = kids[i].sym
		coded, at = k, nd.off+int32(i)
		break
	}
	if coded < 0 {
		R := uint32(256 - p.nexcl)
		v := dc.Target(R)
		idx := uint32(0)
		s := 0
		for ; s < 255; s++ {
			if p.mark[s] != gen {
				if idx == v {
					break
				}
				idx++
			}
		}
		dc.Update(idx, 1, R)
		a = byte(s)
	}
	p.update(a, coded, at)
	return a
}

// addKid appends the symbol a with count 1 to node x and returns its arena
// index.
func (p *ppmCoder) addKid(x int32, a byte) int32 {
	nd := &p.nodes[x]
	if nd.n == nd.cap {
		c := min(max(1, 2*int(nd.cap)), 256)
		off := int32(len(p.arena))
		p.arena = append(p.arena, p.arena[nd.off:nd.off+int32(nd.n)]...)
		for range c - int(nd.n) {
			p.arena = append(p.arena, pkid{})
		}
		nd.off, nd.cap = off, uint16(c)
	}
	i := nd.off + int32(nd.n)
	p.arena[i] = pkid{cnt: 1, sym: a}
	nd.n++
	nd.total++
	return i
}

func (p *ppmCoder) newNode(suffix int32) int32 {
	p.nodes = append(p.nodes, pnode{suffix: suffix})
	return int32(len(p.nodes) - 1)
}

// update records a after it was coded at order coded (−1: order −1), where
// at is its entry in that context.
func (p *ppmCoder) update(a byte, coded int, at int32) {
	D := p.order
	prev := int32(0) // c_{k−1}: the context of order k that is (path[k−1])·a
	cD1 := int32(-1) // c_{D−1}
	if coded >= 0 {
		x := p.path[coded]
		nd := &p.nodes[x]
		prev = p.arena[at].child
		if coded == D-1 {
			cD1 = prev
		}
		p.arena[at].cnt += ppmInc
		nd.total += ppmInc
		for at > nd.off && p.arena[at-1].cnt < p.arena[at].cnt {
			p.arena[at-1], p.arena[at] = p.arena[at], p.arena[at-1]
			at--
		}
		if nd.total > ppmMaxTotal {
			t := uint32(0)
			for i := nd.off; i < nd.off+int32(nd.n); i++ {
				p.arena[i].cnt = (p.arena[i].cnt + 1) / 2
				t += uint32(p.arena[i].cnt)
			}
			nd.total = t
		}
	}
	for k := coded + 1; k <= p.topOrder; k++ {
		i := p.addKid(p.path[k], a)
		if k < D {
			c := p.newNode(prev)
			p.arena[i].child = c
			prev = c
			if k == D-1 {
				cD1 = c
			}
		}
	}
	switch {
	case D == 0:
		p.top, p.topOrder = 0, 0
	case p.topOrder < D:
		p.top, p.topOrder = prev, p.topOrder+1
	default:
		if cD1 < 0 { // coded at order D: find a at order D−1
			nd := p.nodes[p.path[D-1]]
			for i := nd.off; i < nd.off+int32(nd.n); i++ {
				if p.arena[i].sym == a {
					cD1 = p.arena[i].child
					break
				}
			}
		}
		if cD1 <= 0 { // cannot happen: lower contexts hold a
			p.top, p.topOrder = 0, 0
		} else {
			p.top = cD1
		}
	}
	if int64(len(p.nodes))*16+int64(len(p.arena))*8 > p.budget {
		p.reset()
	}
}

// PPMPredictor returns the byte PPM model of c as a predict.Predictor
// (A = 256) whose probabilities are exactly the coding frequencies of the
// compressor turned into float64 (products of escape and symbol
// frequencies over their totals). Its States implement Freezer. The
// memory budget and restart rule apply as in the compressor.
func PPMPredictor(c PPMConfig) (predict.Predictor, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	return ppmPredictor{c}, nil
}

type ppmPredictor struct{ c PPMConfig }

// Name returns the model name, e.g. "ppm(D=5,D,mem=256MiB)".
func (m ppmPredictor) Name() string { return ppmModel(m).Name() }

// AlphabetSize returns 256.
func (m ppmPredictor) AlphabetSize() int { return 256 }

// NewState returns a fresh model.
func (m ppmPredictor) NewState() predict.State {
	return &ppmState{c: newPPMCoder(m.c, 1<<20)}
}

// ppmState adapts ppmCoder to predict.State.
type ppmState struct {
	c      *ppmCoder
	frozen bool
}

// Freeze stops all learning: later Observe calls only move the context.
func (s *ppmState) Freeze() { s.frozen = true }

// Predict writes the coding probability of every byte.
func (s *ppmState) Predict(p []float64) {
	x := s.c
	x.begin()
	gen := x.gen
	esc := 1.0
	for k := x.topOrder; k >= 0; k-- {
		nd := &x.nodes[x.path[k]]
		if nd.n == 0 {
			continue
		}
		kids := x.arena[nd.off : nd.off+int32(nd.n)]
		n, d := nd.total, int(nd.n)
		if x.nexcl > 0 {
			if n, d = x.stats(kids); d == 0 {
				continue
			}
		}
		T, e := x.totals(n, d)
		f := esc / float64(T)
		for i := range kids {
			if x.mark[kids[i].sym] != gen {
				p[kids[i].sym] = float64(f * float64(x.weight(kids[i].cnt)))
			}
		}
		x.exclude(kids)
		esc = float64(esc*float64(e)) / float64(T)
		if e == 0 {
			return
		}
	}
	u := esc / float64(256-x.nexcl)
	for a := range 256 {
		if x.mark[a] != gen {
			p[a] = u
		}
	}
}

// Observe appends a: it updates the model (unless frozen) and moves to the
// next context.
func (s *ppmState) Observe(a byte) {
	x := s.c
	x.begin()
	// Find the highest order whose context holds a.
	coded, at := -1, int32(-1)
	for k := x.topOrder; k >= 0 && coded < 0; k-- {
		nd := x.nodes[x.path[k]]
		for i := nd.off; i < nd.off+int32(nd.n); i++ {
			if x.arena[i].sym == a {
				coded, at = k, i
				break
			}
		}
	}
	if !s.frozen {
		x.update(a, coded, at)
		return
	}
	// Frozen: the next context is the longest existing one, the child of a
	// in the highest context below order D that holds a.
	old := x.topOrder
	x.top, x.topOrder = 0, 0
	for k := min(old, x.order-1, coded); k >= 0; k-- {
		nd := x.nodes[x.path[k]]
		for i := nd.off; i < nd.off+int32(nd.n); i++ {
			if x.arena[i].sym == a {
				x.top, x.topOrder = x.arena[i].child, k+1
				return
			}
		}
	}
}
