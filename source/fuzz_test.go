package source

import (
	"bytes"
	"testing"
)

// FuzzReadTreeJSON feeds arbitrary bytes to ReadTreeJSON: it must return an
// error or a valid tree that round-trips through WriteJSON, never panic.
func FuzzReadTreeJSON(f *testing.F) {
	f.Add([]byte(`{"alphabet":2,"max_depth":0,"leaves":[{"suffix":[],"p":[0.5,0.5]}]}`))
	f.Add([]byte(`{"alphabet":2,"max_depth":1,"leaves":[{"suffix":[0],"p":[0.25,0.75]},{"suffix":[1],"p":[1,0]}]}`))
	f.Add([]byte(`{"alphabet":3,"max_depth":2,"leaves":[{"suffix":[1,0],"p":[0.2,0.3,0.5]},{"suffix":[0,0],"p":[0.2,0.3,0.5]},{"suffix":[2,0],"p":[0.2,0.3,0.5]},{"suffix":[1],"p":[1,0,0]},{"suffix":[2],"p":[0,0,1]}]}`))
	f.Add([]byte(`{"alphabet":256,"max_depth":64,"leaves":[]}`))
	f.Add([]byte(`{"alphabet":2,"max_depth":1,"leaves":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadTreeJSON(bytes.NewReader(data))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := tr.WriteJSON(&b); err != nil {
			t.Fatalf("accepted tree does not write: %v", err)
		}
		tr2, err := ReadTreeJSON(&b)
		if err != nil {
			t.Fatalf("accepted tree does not round-trip: %v", err)
		}
		if tr2.A != tr.A || tr2.NumLeaves() != tr.NumLeaves() {
			t.Fatalf("round trip changed the tree")
		}
	})
}
