package source

import (
	"bufio"
	"io"

	"github.com/vomc/vomc/internal/symbols"
)

// StreamChunk is the number of symbols Stream draws and writes at a time:
// its memory does not grow with n.
const StreamChunk = 1 << 20

// Stream draws n symbols from t with the seed's stream 0 and writes
// them as they are generated (text: one character each and a final
// newline; raw: one byte each), StreamChunk symbols at a time. The output
// equals t.Generate's.
func Stream(w io.Writer, t *Tree, seed uint64, n int64, raw bool) error {
	s, err := NewSampler(t)
	if err != nil {
		return err
	}
	rng := RNG(seed, 0)
	bw := bufio.NewWriterSize(w, 1<<16)
	al := symbols.Alphabet{Chars: []byte(TextDigits[:min(t.A, len(TextDigits))])}
	buf := make([]byte, StreamChunk)
	ctx := make([]byte, t.D) // the dummy context: D zeros
	for done := int64(0); done < n; {
		k := int(min(int64(len(buf)), n-done))
		chunk := buf[:k]
		if err := s.Fill(rng, chunk, ctx); err != nil {
			return err
		}
		// The next chunk's context is the last D symbols so far.
		if k >= len(ctx) {
			copy(ctx, chunk[k-len(ctx):])
		} else {
			ctx = append(ctx[k:], chunk...)
		}
		if !raw {
			chunk = al.Format(chunk)
		}
		if _, err := bw.Write(chunk); err != nil {
			return err
		}
		done += int64(k)
	}
	if !raw {
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// TextDigits are the characters of symbols 0..35 in text files.
const TextDigits = "0123456789abcdefghijklmnopqrstuvwxyz"
