package source

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// treeJSON is the on-disk form of a Tree; see WriteJSON.
type treeJSON struct {
	Alphabet *int       `json:"alphabet"`
	MaxDepth *int       `json:"max_depth"`
	Leaves   []leafJSON `json:"leaves"`
}

// leafJSON is one leaf: the suffix in time order and p_s. The suffix is a
// list of ints (a []byte would be written as base64 by encoding/json).
type leafJSON struct {
	Suffix []int     `json:"suffix"`
	P      []float64 `json:"p"`
}

func (t *Tree) toJSON() (treeJSON, error) {
	if err := t.Validate(); err != nil {
		return treeJSON{}, err
	}
	A, D := t.A, t.D
	out := treeJSON{Alphabet: &A, MaxDepth: &D}
	for _, l := range t.Leaves() {
		s := make([]int, len(l.Suffix))
		for i, a := range l.Suffix {
			s[i] = int(a)
		}
		out.Leaves = append(out.Leaves, leafJSON{Suffix: s, P: l.P})
	}
	return out, nil
}

// MarshalJSON implements json.Marshaler with the compact form of the format
// described at WriteJSON. It fails on an invalid tree.
func (t *Tree) MarshalJSON() ([]byte, error) {
	j, err := t.toJSON()
	if err != nil {
		return nil, err
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler; it validates like ReadTreeJSON.
func (t *Tree) UnmarshalJSON(data []byte) error {
	u, err := ReadTreeJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	*t = *u
	return nil
}

// WriteJSON writes the tree as JSON, one leaf per line:
//
//	{"alphabet":3,"max_depth":2,"leaves":[
//	 {"suffix":[1,0],"p":[0.2,0.3,0.5]},
//	 …
//	]}
//
// "alphabet" is A, "max_depth" the declared D, and each leaf has its suffix
// in time order (oldest symbol first, as in the paper) and its next-symbol
// distribution p_s (probabilities, summing to 1). Floats are written in the
// shortest form that reads back to the same float64, so a round trip is
// exact. Leaves are in depth-first order (children in symbol order).
func (t *Tree) WriteJSON(w io.Writer) error {
	j, err := t.toJSON()
	if err != nil {
		return err
	}
	// Streamed through a small buffer: the file of a wide tree is many
	// megabytes (≈ 20 bytes per probability), and holding it whole would
	// be most of the memory of sampling one.
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "{\"alphabet\":%d,\"max_depth\":%d,\"leaves\":[\n", *j.Alphabet, *j.MaxDepth)
	for i, l := range j.Leaves {
		line, err := json.Marshal(l)
		if err != nil {
			return err
		}
		b.WriteByte(' ')
		b.Write(line)
		if i < len(j.Leaves)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	return b.Flush()
}

// ReadTreeJSON reads one tree in the format of WriteJSON and validates it
// fully (see FromLeaves): unknown or missing fields, symbols outside 0..A−1,
// suffixes longer than max_depth, bad distributions, and suffix sets that are
// not proper or complete are errors, naming the offending suffix.
func ReadTreeJSON(r io.Reader) (*Tree, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var j treeJSON
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("source: tree JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("source: tree JSON: unexpected data after the tree object")
	}
	if j.Alphabet == nil {
		return nil, errors.New("source: tree JSON: missing field \"alphabet\"")
	}
	if j.MaxDepth == nil {
		return nil, errors.New("source: tree JSON: missing field \"max_depth\"")
	}
	A, D := *j.Alphabet, *j.MaxDepth
	if err := checkAlphabet(A); err != nil {
		return nil, fmt.Errorf("source: tree JSON: field \"alphabet\": %w", err)
	}
	if err := checkDepth(D); err != nil {
		return nil, fmt.Errorf("source: tree JSON: field \"max_depth\": %w", err)
	}
	if j.Leaves == nil {
		return nil, errors.New("source: tree JSON: missing field \"leaves\"")
	}
	leaves := make([]Leaf, len(j.Leaves))
	for i, l := range j.Leaves {
		if l.Suffix == nil {
			return nil, fmt.Errorf("source: tree JSON: leaves[%d]: missing field \"suffix\" (use [] for the root)", i)
		}
		if len(l.Suffix) > D {
			return nil, fmt.Errorf("source: tree JSON: leaves[%d]: suffix %v has length %d > max_depth %d", i, l.Suffix, len(l.Suffix), D)
		}
		s := make([]byte, len(l.Suffix))
		for k, v := range l.Suffix {
			if v < 0 || v >= A {
				return nil, fmt.Errorf("source: tree JSON: leaves[%d]: suffix %v: symbol %d outside the alphabet 0..%d", i, l.Suffix, v, A-1)
			}
			s[k] = byte(v)
		}
		if l.P == nil {
			return nil, fmt.Errorf("source: tree JSON: leaves[%d] (suffix %s): missing field \"p\"", i, FormatSuffix(s, A))
		}
		leaves[i] = Leaf{Suffix: s, P: l.P}
	}
	t, err := FromLeaves(A, D, leaves)
	if err != nil {
		return nil, fmt.Errorf("source: tree JSON: %s", strings.TrimPrefix(err.Error(), "source: "))
	}
	return t, nil
}
