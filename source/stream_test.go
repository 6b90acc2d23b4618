package source

import (
	"bytes"
	"testing"
)

// Stream writes what Generate draws, across chunk boundaries.
func TestStreamEqualsGenerate(t *testing.T) {
	tr, err := PaperPrior(3).Sample(RNG(5, 1))
	if err != nil {
		t.Fatal(err)
	}
	n := StreamChunk + 12345
	want, err := tr.Generate(RNG(7, 0), n, make([]byte, tr.D))
	if err != nil {
		t.Fatal(err)
	}
	var raw, text bytes.Buffer
	if err := Stream(&raw, tr, 7, int64(n), true); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw.Bytes(), want) {
		t.Fatal("raw stream differs from Generate")
	}
	if err := Stream(&text, tr, 7, int64(n), false); err != nil {
		t.Fatal(err)
	}
	b := text.Bytes()
	if len(b) != n+1 || b[n] != '\n' {
		t.Fatalf("text: %d bytes", len(b))
	}
	for i, a := range want {
		if b[i] != TextDigits[a] {
			t.Fatalf("text symbol %d: %q, want %q", i, b[i], TextDigits[a])
		}
	}
}
