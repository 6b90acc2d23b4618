package source

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteDOT(t *testing.T) {
	tr, err := PaperPrior(3).Sample(RNG(8, 0))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.WriteDOT(&buf); err != nil {
		t.Fatal(err)
	}
	dot := buf.String()
	if !strings.HasPrefix(dot, "digraph context_tree {") || !strings.HasSuffix(dot, "}\n") {
		t.Errorf("not a DOT digraph:\n%s", dot)
	}
	for _, l := range tr.Leaves() {
		label := LeafLabel(l.Suffix, l.P, tr.A)
		if !strings.Contains(dot, "label=\""+label+"\"") {
			t.Errorf("DOT lacks leaf %q", label)
		}
	}
	if got, want := strings.Count(dot, "->"), countNodes(tr.Root)-1; got != want {
		t.Errorf("%d edges, want %d", got, want)
	}
	if err := (&Tree{A: 2}).WriteDOT(&buf); err == nil {
		t.Error("invalid tree drawn")
	}
}

func countNodes(n *Node) int {
	c := 1
	for _, k := range n.Children {
		c += countNodes(k)
	}
	return c
}

func TestLeafLabel(t *testing.T) {
	if s := LeafLabel([]byte{1, 0}, []float64{0.2, 0.301, 0.499}, 3); s != "(1,0): 0.20 0.30 0.50" {
		t.Error(s)
	}
	p := make([]float64, 20)
	p[0] = 1
	if s := LeafLabel(nil, p, 20); !strings.HasSuffix(s, " …") || strings.Count(s, " ") != 17 {
		t.Error(s)
	}
}
