package compress

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestDecodeLimit checks that a file whose model asks for more memory than
// the decoder's limit is refused before decoding, with ErrMemory and both
// numbers in the message, and decoded normally within the limit.
func TestDecodeLimit(t *testing.T) {
	x := []byte(strings.Repeat("variable-order markov chains ", 200))
	for _, mk := range []func(mb int) (Model, error){
		func(mb int) (Model, error) { c := DefaultPPM(); c.MemMB = mb; return PPM(c) },
		func(mb int) (Model, error) { c := DefaultMix(); c.MemMB = mb; return Mix(c) },
	} {
		m, err := mk(64)
		if err != nil {
			t.Fatal(err)
		}
		z, err := EncodeBytes(x, m)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		_, err = DecodeLimit(&out, bytes.NewReader(z), 16)
		if !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), "64 MiB") || !strings.Contains(err.Error(), "16 MiB") {
			t.Fatalf("%s: DecodeLimit(16 MiB) = %v, want ErrMemory naming 64 and 16 MiB", m.Name(), err)
		}
		if out.Len() != 0 {
			t.Errorf("%s: %d bytes written before the refusal", m.Name(), out.Len())
		}
		for _, limit := range []int{64, 0} {
			out.Reset()
			if _, err := DecodeLimit(&out, bytes.NewReader(z), limit); err != nil || !bytes.Equal(out.Bytes(), x) {
				t.Fatalf("%s: DecodeLimit(%d) = %v, %d bytes", m.Name(), limit, err, out.Len())
			}
		}
	}
}
