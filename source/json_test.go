package source

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestJSONRoundTrip(t *testing.T) {
	for i := range 20 {
		p := PaperPrior(i % 6)
		if i%2 == 1 {
			p.Leaves = Sparse
		}
		tr, err := p.Sample(RNG(3, uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := tr.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("WriteJSON output is not JSON:\n%s", buf.String())
		}
		u, err := ReadTreeJSON(&buf)
		if err != nil {
			t.Fatal(err)
		}
		a, b := tr.Leaves(), u.Leaves()
		if u.A != tr.A || u.D != tr.D || len(a) != len(b) {
			t.Fatal("round trip changed the tree")
		}
		for k := range a {
			if !bytes.Equal(a[k].Suffix, b[k].Suffix) {
				t.Fatal("suffix changed")
			}
			for s := range a[k].P {
				if a[k].P[s] != b[k].P[s] {
					t.Fatalf("probability changed: %v vs %v", a[k].P[s], b[k].P[s])
				}
			}
		}
		// json.Marshaler / Unmarshaler inside another structure.
		wrap := struct {
			T *Tree `json:"tree"`
		}{tr}
		js, err := json.Marshal(wrap)
		if err != nil {
			t.Fatal(err)
		}
		wrap.T = nil
		if err := json.Unmarshal(js, &wrap); err != nil {
			t.Fatal(err)
		}
		if wrap.T.NumLeaves() != tr.NumLeaves() {
			t.Fatal("Marshal/Unmarshal changed the tree")
		}
	}
}

func TestJSONFormat(t *testing.T) {
	tr, err := FromLeaves(2, 1, []Leaf{{[]byte{0}, []float64{0.25, 0.75}}, {[]byte{1}, []float64{1, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	want := "{\"alphabet\":2,\"max_depth\":1,\"leaves\":[\n {\"suffix\":[0],\"p\":[0.25,0.75]},\n {\"suffix\":[1],\"p\":[1,0]}\n]}\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	js, _ := json.Marshal(tr)
	if string(js) != `{"alphabet":2,"max_depth":1,"leaves":[{"suffix":[0],"p":[0.25,0.75]},{"suffix":[1],"p":[1,0]}]}` {
		t.Errorf("MarshalJSON: %s", js)
	}
	if _, err := json.Marshal(&Tree{A: 2}); err == nil {
		t.Error("marshalled an invalid tree")
	}
	if err := (&Tree{A: 2}).WriteJSON(&buf); err == nil {
		t.Error("WriteJSON wrote an invalid tree")
	}
}

func TestReadTreeJSONErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"alphabet":3,`, "unexpected EOF"},
		{`[1,2]`, "cannot unmarshal array"},
		{`{"alphabet":"3","max_depth":1,"leaves":[]}`, "alphabet"},
		{`{"alphabet":3,"max_depth":1,"leaves":[],"extra":1}`, `unknown field "extra"`},
		{`{"max_depth":1,"leaves":[]}`, `missing field "alphabet"`},
		{`{"alphabet":3,"leaves":[]}`, `missing field "max_depth"`},
		{`{"alphabet":3,"max_depth":1}`, `missing field "leaves"`},
		{`{"alphabet":1,"max_depth":1,"leaves":[]}`, `field "alphabet"`},
		{`{"alphabet":2,"max_depth":99,"leaves":[]}`, `field "max_depth"`},
		{`{"alphabet":2,"max_depth":1,"leaves":[{"p":[1,0]}]}`, `leaves[0]: missing field "suffix"`},
		{`{"alphabet":2,"max_depth":1,"leaves":[{"suffix":[0]}]}`, `leaves[0] (suffix (0)): missing field "p"`},
		{`{"alphabet":2,"max_depth":1,"leaves":[{"suffix":[0,1],"p":[1,0]}]}`, "leaves[0]: suffix [0 1] has length 2 > max_depth 1"},
		{`{"alphabet":2,"max_depth":1,"leaves":[{"suffix":[2],"p":[1,0]}]}`, "symbol 2 outside the alphabet 0..1"},
		{`{"alphabet":2,"max_depth":1,"leaves":[{"suffix":[-1],"p":[1,0]}]}`, "symbol -1 outside"},
		{`{"alphabet":2,"max_depth":1,"leaves":[{"suffix":[0],"p":[1,0]}]}`, "missing suffix (1)"},
		{`{"alphabet":2,"max_depth":2,"leaves":[{"suffix":[0],"p":[1,0]},{"suffix":[1],"p":[1,0]},{"suffix":[1,0],"p":[1,0]}]}`, "(0) is a suffix of (1,0)"},
		{`{"alphabet":2,"max_depth":1,"leaves":[{"suffix":[0],"p":[0.7,0]},{"suffix":[1],"p":[1,0]}]}`, "leaf (0): probabilities sum to 0.7"},
		{`{"alphabet":2,"max_depth":0,"leaves":[{"suffix":[],"p":[1,0]}]} {}`, "unexpected data after"},
	}
	for _, c := range cases {
		_, err := ReadTreeJSON(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadTreeJSON(%s) = %v, want error containing %q", c.in, err, c.want)
		}
		var tr Tree
		if err := json.Unmarshal([]byte(c.in), &tr); err == nil && !strings.Contains(c.want, "after") {
			t.Errorf("json.Unmarshal(%s) accepted", c.in)
		}
	}
}
