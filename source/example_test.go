package source_test

import (
	"fmt"
	"os"

	"github.com/vomc/vomc/source"
)

// The context tree of the paper's Fig. 1, with the symbols a, b, c written
// 0, 1, 2: suffix set {(b), (c), (a,a), (b,a), (c,a)}.
func ExampleFromLeaves() {
	tree, err := source.FromLeaves(3, 2, []source.Leaf{
		{Suffix: []byte{1}, P: []float64{0.2, 0.3, 0.5}},
		{Suffix: []byte{2}, P: []float64{0.1, 0.1, 0.8}},
		{Suffix: []byte{0, 0}, P: []float64{0.6, 0.2, 0.2}},
		{Suffix: []byte{1, 0}, P: []float64{0.3, 0.3, 0.4}},
		{Suffix: []byte{2, 0}, P: []float64{0.5, 0.25, 0.25}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// If (…, x_{n−1}, x_n) = (…, c, a), x_{n+1} is drawn from p_{c,a}.
	leaf, _ := tree.LeafFor([]byte{1, 1, 2, 0})
	fmt.Println(leaf.P, tree.NumLeaves(), tree.Depth())
	tree.WriteJSON(os.Stdout)

	// A suffix set that is not complete is rejected, naming a missing suffix.
	_, err = source.FromLeaves(3, 2, []source.Leaf{
		{Suffix: []byte{1}, P: []float64{0.2, 0.3, 0.5}},
		{Suffix: []byte{2}, P: []float64{0.1, 0.1, 0.8}},
		{Suffix: []byte{0, 0}, P: []float64{0.6, 0.2, 0.2}},
	})
	fmt.Println(err)
	// Output:
	// [0.5 0.25 0.25] 5 2
	// {"alphabet":3,"max_depth":2,"leaves":[
	//  {"suffix":[0,0],"p":[0.6,0.2,0.2]},
	//  {"suffix":[1,0],"p":[0.3,0.3,0.4]},
	//  {"suffix":[2,0],"p":[0.5,0.25,0.25]},
	//  {"suffix":[1],"p":[0.2,0.3,0.5]},
	//  {"suffix":[2],"p":[0.1,0.1,0.8]}
	// ]}
	// source: suffix set is not complete: missing suffix (1,0) (no suffix in the set matches contexts ending in it)
}

// Draw a tree from the paper's prior π_CTW (A = 3, D = 3, λ = 0.15, α = 0.5)
// and a sequence from it.
func ExamplePrior_Sample() {
	prior := source.PaperPrior(3)
	rng := source.RNG(2024, 0) // seed 2024, stream 0
	tree, err := prior.Sample(rng)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("leaves:", tree.NumLeaves(), "depth:", tree.Depth())
	x, err := tree.Generate(rng, 20, nil) // from the dummy context 0,0,0
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(x))
	// Output:
	// leaves: 9 depth: 3
	// 20
}

func ExampleTree_Generate() {
	// A deterministic order-1 source: after 0 comes 1, after 1 comes 0.
	tree, _ := source.FromLeaves(2, 1, []source.Leaf{
		{Suffix: []byte{0}, P: []float64{0, 1}},
		{Suffix: []byte{1}, P: []float64{1, 0}},
	})
	x, _ := tree.Generate(source.RNG(1, 0), 8, nil) // dummy context x_0 = 0
	fmt.Println(x)
	// Output: [1 0 1 0 1 0 1 0]
}

// The distribution of the number of leaves under π_D for A = 2, D = 2,
// λ = 1/2: one leaf (the root stops) with probability 1/2, and so on.
func ExampleLeafCountDistribution() {
	dist, _ := source.LeafCountDistribution(2, 2, 0.5)
	fmt.Println(dist)
	// Output: [0 0.5 0.125 0.25 0.125]
}

func ExampleTree_WriteDOT() {
	tree, _ := source.FromLeaves(2, 1, []source.Leaf{
		{Suffix: []byte{0}, P: []float64{0.25, 0.75}},
		{Suffix: []byte{1}, P: []float64{0.9, 0.1}},
	})
	tree.WriteDOT(os.Stdout)
	// Output:
	// digraph context_tree {
	//   // context tree, alphabet size A = 2, maximum depth D = 1, 2 leaves
	//   rankdir=LR;
	//   node [fontname="Helvetica", fontsize=10];
	//   edge [fontname="Helvetica", fontsize=10, arrowhead=none];
	//   n0 [shape=circle, label="", width=0.12, style=filled, fillcolor=black, xlabel="()"];
	//   n1 [shape=box, label="(0): 0.25 0.75"];
	//   n0 -> n1 [label="0"];
	//   n2 [shape=box, label="(1): 0.90 0.10"];
	//   n0 -> n2 [label="1"];
	// }
}
