package compress_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/vomc/vomc/compress"
)

// ExampleEncodeBytes compresses a text with the context-mixing model, reads
// the container's header and restores the text (the CRC-32 of the original
// is verified).
func ExampleEncodeBytes() {
	text := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 40))
	m, err := compress.Mix(compress.MixConfig{MemMB: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	packed, err := compress.EncodeBytes(text, m)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := compress.ReadHeader(bytes.NewReader(packed))
	if err != nil {
		fmt.Println(err)
		return
	}
	back, err := compress.DecodeBytes(packed)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d bytes → %d bytes (%.3f bits/byte)\n", h.ModelName(), len(text), len(packed), 8*float64(len(packed))/float64(len(text)))
	fmt.Println("restored:", bytes.Equal(back, text))
	// Output:
	// mix(v1,mem=1MiB): 1800 bytes → 69 bytes (0.307 bits/byte)
	// restored: true
}
