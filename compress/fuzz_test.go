package compress

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the container reader and decoder:
// they must return an error or the original of a valid file, never panic
// or hang. `go test` runs the seeds only; `go test -fuzz FuzzDecode`
// explores.
func FuzzDecode(f *testing.F) {
	for _, m := range testModels(f) {
		for _, x := range [][]byte{nil, []byte("a"), []byte("hello, hello, hello world"), bytes.Repeat([]byte{0, 1, 2, 255}, 50)} {
			z, err := EncodeBytes(x, m)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(z)
			if len(z) > 25 {
				f.Add(z[:len(z)-3])
				y := append([]byte(nil), z...)
				y[22] ^= 0x40
				f.Add(y)
			}
		}
	}
	f.Add([]byte("VMCZ"))
	f.Add([]byte("not a compressed file"))
	f.Fuzz(func(t *testing.T, z []byte) {
		x, err := DecodeBytes(z)
		if err != nil {
			return
		}
		// A successful decode must have a valid header whose model
		// round-trips the output.
		h, err := ReadHeader(bytes.NewReader(z))
		if err != nil {
			t.Fatalf("decoded but header fails: %v", err)
		}
		if int64(len(x)) != h.Size {
			t.Fatalf("decoded %d bytes, header says %d", len(x), h.Size)
		}
		y, err := EncodeBytes(x, h.Model)
		if err != nil {
			t.Fatal(err)
		}
		if x2, err := DecodeBytes(y); err != nil || !bytes.Equal(x, x2) {
			t.Fatalf("re-encoding does not round-trip: %v", err)
		}
	})
}
