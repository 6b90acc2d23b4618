package construct

import (
	"fmt"
	"strings"
)

// Block is a named block of the embedding (residual stream) vector, as the
// paper names them in eqs. (finite-memory), (statistics) and
// (h-ell-induction): s, g, g←, p, ℓ^e, ℓ^w, δ, pos, plus the blocks this
// implementation adds (see the package documentation). A block holds Parts
// sub-blocks of Width entries each (e.g. s has D+1 parts of width A: the
// one-hot symbols x_i, x_{i−1}, …, x_{i−D}).
type Block struct {
	Name   string // ASCII name used by the CLI and in safetensors metadata
	Symbol string // the paper's symbol, for printing
	Offset int    // first index in the embedding vector
	Parts  int    // number of sub-blocks
	Width  int    // entries per sub-block
	Doc    string // what the block holds
}

// Size is Parts·Width.
func (b Block) Size() int { return b.Parts * b.Width }

// Part returns the index of entry j of sub-block k.
func (b Block) Part(k, j int) int { return b.Offset + k*b.Width + j }

// Layout is the table of embedding blocks of a construction; E is the
// embedding dimension.
type Layout struct {
	Blocks []Block
	E      int
	index  map[string]int
}

func (l *Layout) add(name, symbol string, parts, width int, doc string) {
	if l.index == nil {
		l.index = map[string]int{}
	}
	l.index[name] = len(l.Blocks)
	l.Blocks = append(l.Blocks, Block{Name: name, Symbol: symbol, Offset: l.E, Parts: parts, Width: width, Doc: doc})
	l.E += parts * width
}

// Block returns the block called name; it panics on an unknown name (the
// names are fixed by the construction).
func (l *Layout) Block(name string) Block {
	i, ok := l.index[name]
	if !ok {
		panic("construct: no embedding block " + name)
	}
	return l.Blocks[i]
}

// Has reports whether the layout has a block called name.
func (l *Layout) Has(name string) bool { _, ok := l.index[name]; return ok }

// Get returns the entries of block name in h (a sub-slice, not a copy).
func (l *Layout) Get(h []float64, name string) []float64 {
	b := l.Block(name)
	return h[b.Offset : b.Offset+b.Size()]
}

// Sub returns sub-block k of block name in h.
func (l *Layout) Sub(h []float64, name string, k int) []float64 {
	b := l.Block(name)
	return h[b.Part(k, 0):b.Part(k+1, 0)]
}

// String is the layout table, one block per line.
func (l *Layout) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-12s %-10s %6s %6s  %s\n", "block", "paper", "offset", "size", "contents")
	for _, b := range l.Blocks {
		size := fmt.Sprint(b.Size())
		if b.Parts > 1 {
			size = fmt.Sprintf("%d×%d", b.Parts, b.Width)
		}
		fmt.Fprintf(&sb, "%-12s %-10s %6d %6s  %s\n", b.Name, b.Symbol, b.Offset, size, b.Doc)
	}
	fmt.Fprintf(&sb, "E = %d\n", l.E)
	return sb.String()
}
