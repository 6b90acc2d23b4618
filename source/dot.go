package source

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxLabelProbs is how many probabilities a leaf label shows before "…".
const maxLabelProbs = 16

// LeafLabel is the text that drawings attach to a leaf: its suffix in time
// order and p_s rounded to 2 decimals, e.g. "(1,0): 0.20 0.30 0.50". For
// A > 16 only the first 16 probabilities are shown, followed by "…".
func LeafLabel(suffix []byte, p []float64, A int) string {
	var b strings.Builder
	b.WriteString(FormatSuffix(suffix, A))
	b.WriteString(":")
	for a, v := range p {
		if a == maxLabelProbs {
			b.WriteString(" …")
			break
		}
		b.WriteByte(' ')
		b.WriteString(strconv.FormatFloat(v, 'f', 2, 64))
	}
	return b.String()
}

// WriteDOT writes the tree in Graphviz DOT, laid out like the paper's
// Fig. 1: the root "()" on the left, each edge labelled with the symbol q
// that extends the context into the past, and each leaf a box labelled by
// LeafLabel. Render with e.g. `dot -Tsvg`.
func (t *Tree) WriteDOT(w io.Writer) error {
	if err := t.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph context_tree {\n")
	fmt.Fprintf(bw, "  // context tree, alphabet size A = %d, maximum depth D = %d, %d leaves\n", t.A, t.D, t.NumLeaves())
	fmt.Fprintf(bw, "  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=10, arrowhead=none];\n")
	id := 0
	var path []byte
	var walk func(n *Node) int
	walk = func(n *Node) int {
		me := id
		id++
		if n.Children == nil {
			fmt.Fprintf(bw, "  n%d [shape=box, label=%q];\n", me, LeafLabel(reversed(path), n.P, t.A))
			return me
		}
		fmt.Fprintf(bw, "  n%d [shape=circle, label=\"\", width=0.12, style=filled, fillcolor=black, xlabel=%q];\n", me, formatPath(path, t.A))
		for q, c := range n.Children {
			path = append(path, byte(q))
			child := walk(c)
			path = path[:len(path)-1]
			fmt.Fprintf(bw, "  n%d -> n%d [label=%q];\n", me, child, SymbolName(byte(q), t.A))
		}
		return me
	}
	walk(t.Root)
	fmt.Fprintf(bw, "}\n")
	return bw.Flush()
}
