// Package symbols reads user files as symbol sequences for vomc's
// predictors: either text, one character per symbol (digits, letters, DNA
// bases, …), or raw bytes with the alphabet size A = 256.
package symbols

import (
	"fmt"
	"os"
	"strconv"
)

// Alphabet maps symbols 0..A−1 to the characters of a text file. A raw-byte
// alphabet has A = 256 and no characters.
type Alphabet struct {
	// Chars[i] is the character of symbol i; nil for raw bytes.
	Chars []byte
}

// Size is A.
func (a Alphabet) Size() int {
	if a.Chars == nil {
		return 256
	}
	return len(a.Chars)
}

// String lists the characters, or says "raw bytes".
func (a Alphabet) String() string {
	if a.Chars == nil {
		return "raw bytes (A=256)"
	}
	return strconv.Quote(string(a.Chars))
}

// Format writes x back as text (raw bytes are returned unchanged).
func (a Alphabet) Format(x []byte) []byte {
	if a.Chars == nil {
		return append([]byte(nil), x...)
	}
	out := make([]byte, len(x))
	for i, s := range x {
		out[i] = a.Chars[s]
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ParseText turns text into symbols, one character each, skipping ASCII
// whitespace (space, tab, CR, LF). With alphabet == "" the alphabet is the
// set of characters present, sorted by byte value (the BCT convention);
// otherwise it is the given characters in the given order, and a character
// outside it is an error naming it, its line and column, and its byte
// offset.
func ParseText(data []byte, alphabet string) ([]byte, Alphabet, error) {
	var index [256]int16
	for i := range index {
		index[i] = -1
	}
	var al Alphabet
	if alphabet == "" {
		var seen [256]bool
		for _, c := range data {
			if !isSpace(c) {
				seen[c] = true
			}
		}
		for c := 0; c < 256; c++ {
			if seen[c] {
				al.Chars = append(al.Chars, byte(c))
			}
		}
		if len(al.Chars) == 0 {
			return nil, al, fmt.Errorf("symbols: the text holds no symbols")
		}
		if len(al.Chars) == 1 {
			return nil, al, fmt.Errorf("symbols: the text uses a single character %q; give the alphabet explicitly (e.g. %q)", al.Chars[0], string(al.Chars[0])+"?")
		}
	} else {
		for i := 0; i < len(alphabet); i++ {
			c := alphabet[i]
			if isSpace(c) {
				return nil, al, fmt.Errorf("symbols: the alphabet %q contains whitespace", alphabet)
			}
			if index[c] >= 0 {
				return nil, al, fmt.Errorf("symbols: the alphabet %q repeats %q", alphabet, c)
			}
			index[c] = int16(i)
			al.Chars = append(al.Chars, c)
		}
		if len(al.Chars) < 2 {
			return nil, al, fmt.Errorf("symbols: the alphabet %q needs at least 2 characters", alphabet)
		}
	}
	for i, c := range al.Chars {
		index[c] = int16(i)
	}
	x := make([]byte, 0, len(data))
	line, col := 1, 0
	for off, c := range data {
		col++
		if c == '\n' {
			line, col = line+1, 0
			continue
		}
		if isSpace(c) {
			continue
		}
		k := index[c]
		if k < 0 {
			return nil, al, fmt.Errorf("symbols: character %q at line %d, column %d (byte offset %d, symbol position %d) is not in the alphabet %s",
				c, line, col, off, len(x), al)
		}
		x = append(x, byte(k))
	}
	if len(x) == 0 {
		return nil, al, fmt.Errorf("symbols: the text holds no symbols")
	}
	return x, al, nil
}

// Mode says how a file is read.
type Mode int

const (
	// Text reads one character per symbol (see ParseText).
	Text Mode = iota
	// Raw reads bytes as symbols with A = 256.
	Raw
)

// ParseMode parses "text" or "raw".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "text":
		return Text, nil
	case "raw", "bytes":
		return Raw, nil
	}
	return 0, fmt.Errorf("symbols: unknown file mode %q (want text or raw)", s)
}

// String names the mode as ParseMode reads it.
func (m Mode) String() string {
	if m == Raw {
		return "raw"
	}
	return "text"
}

// Set sets m to the mode s names (ParseMode), so that a Mode is a
// flag.Value.
func (m *Mode) Set(s string) (err error) {
	*m, err = ParseMode(s)
	return err
}

// ReadFile reads a file as a symbol sequence in the given mode; alphabet is
// used by Text mode only ("" infers it).
func ReadFile(path string, mode Mode, alphabet string) ([]byte, Alphabet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Alphabet{}, err
	}
	if mode == Raw {
		if len(data) == 0 {
			return nil, Alphabet{}, fmt.Errorf("symbols: %s is empty", path)
		}
		return data, Alphabet{}, nil
	}
	x, al, err := ParseText(data, alphabet)
	if err != nil {
		return nil, al, fmt.Errorf("%s: %w", path, err)
	}
	return x, al, nil
}
