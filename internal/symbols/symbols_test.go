package symbols

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseText(t *testing.T) {
	for _, tc := range []struct {
		name, in, alphabet string
		want               []byte
		chars              string
		err                string
	}{
		{"inferred sorted", "acgta\n", "", []byte{0, 1, 2, 3, 0}, "acgt", ""},
		{"digits with spaces", "0 1 2\r\n2", "", []byte{0, 1, 2, 2}, "012", ""},
		{"explicit order", "ACGT", "TGCA", []byte{3, 2, 1, 0}, "TGCA", ""},
		{"explicit unused", "00", "01", []byte{0, 0}, "01", ""},
		{"unknown symbol", "01\n0x1", "01", nil, "", "character 'x' at line 2, column 2 (byte offset 4, symbol position 3)"},
		{"single char", "aaaa", "", nil, "", "single character"},
		{"empty", " \n", "", nil, "", "no symbols"},
		{"repeated alphabet", "ab", "aba", nil, "", "repeats"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, al, err := ParseText([]byte(tc.in), tc.alphabet)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(x) != string(tc.want) || string(al.Chars) != tc.chars {
				t.Errorf("got %v over %q, want %v over %q", x, al.Chars, tc.want, tc.chars)
			}
			if tc.alphabet == "" && strings.Join(strings.Fields(tc.in), "") != string(al.Format(x)) {
				t.Errorf("Format does not invert ParseText: %q", al.Format(x))
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte{0, 255, 7}, 0o644); err != nil {
		t.Fatal(err)
	}
	x, al, err := ReadFile(p, Raw, "")
	if err != nil || al.Size() != 256 || len(x) != 3 || x[1] != 255 {
		t.Fatalf("raw: %v %v %v", x, al, err)
	}
	if _, _, err := ReadFile(filepath.Join(dir, "missing"), Text, ""); err == nil {
		t.Error("missing file accepted")
	}
	if _, err := ParseMode("nope"); err == nil {
		t.Error("bad mode accepted")
	}
}

// TestSharedSequences reads the reference sequences when they are present.
func TestSharedSequences(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/data/sequences/*.txt")
	if len(files) == 0 {
		t.Skip("no reference sequences in ../shared/data/sequences")
	}
	for _, f := range files {
		x, al, err := ReadFile(f, Text, "")
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(x) == 0 || al.Size() < 2 {
			t.Errorf("%s: %d symbols over %v", f, len(x), al)
		}
	}
}
