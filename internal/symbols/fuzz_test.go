package symbols

import (
	"testing"
)

// FuzzParseText feeds arbitrary text and alphabets to ParseText: it must
// return an error or symbols that all lie in the alphabet and format back
// to the text without its whitespace.
func FuzzParseText(f *testing.F) {
	f.Add([]byte("0120112\n0101"), "012")
	f.Add([]byte("hello world"), "")
	f.Add([]byte("aaaa"), "")
	f.Add([]byte(" \t\r\n"), "")
	f.Add([]byte("abc"), "ab")
	f.Add([]byte("abc"), "aa")
	f.Fuzz(func(t *testing.T, data []byte, alphabet string) {
		x, al, err := ParseText(data, alphabet)
		if err != nil {
			return
		}
		A := al.Size()
		if A < 2 || A > 256 {
			t.Fatalf("alphabet of %d symbols", A)
		}
		for i, s := range x {
			if int(s) >= A {
				t.Fatalf("symbol %d at %d outside 0..%d", s, i, A-1)
			}
		}
		var want []byte
		for _, c := range data {
			if !isSpace(c) {
				want = append(want, c)
			}
		}
		if got := al.Format(x); string(got) != string(want) {
			t.Fatalf("formatting the symbols gives %q, want %q", got, want)
		}
	})
}
