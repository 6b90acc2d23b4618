package compress

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/ppm"
)

// goldenText is the original of the golden files below.
var goldenText = []byte("Golden file: the quick brown fox jumps over the lazy dog, the quick brown fox.\n")

// golden are files written by earlier builds (PPM and CTW by the first
// release of format version 1, mix by the build that introduced model id
// 4): they must keep decoding, and encoding must keep producing them byte
// for byte (any change of a model's coding is a format change, which
// needs a new model id or variant).
var golden = []struct{ name, hex string }{
	{"ppm(D=3,C,mem=1MiB)", "564d435a010103000301014f000000000000008079566a0047b7926ddfb90a9eb95e0c893a40b26fa86aa10e98bfb9e2a5ff49e39872388c6ba5ad757f9cec8a739301ceef42fb278c0db3250a534fece842004f39aefe"},
	{"ctw(D=4,alpha=1/8,mem=1MiB)", "564d435a010203000408014f00000000000000126219c300b85f964cdd3dec89a8126dae58b3fe6ae6527251ea61c0c1039337a56bddc6543f0b0800e6a8c44ae8c02562a0dd31644d00004f39aefe"},
	{"mix(v1,mem=1MiB)", "564d435a0104020001014f0000000000000039f818e500ccc9108da1b21f20386a913ef1927c4d31495dc1aa4f641b15665c4398abea77069e109a5377b03e1ccc46b67857dac3cd67404f39aefe"},
}

func TestGoldenFiles(t *testing.T) {
	for _, g := range golden {
		z, err := hex.DecodeString(g.hex)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		h, err := Decode(&out, bytes.NewReader(z))
		if err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		if h.ModelName() != g.name || !bytes.Equal(out.Bytes(), goldenText) {
			t.Fatalf("%s: decoded %q with %s", g.name, out.Bytes(), h.ModelName())
		}
		z2, err := EncodeBytes(goldenText, h.Model)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(z, z2) {
			t.Errorf("%s: encoding changed: %x", g.name, z2)
		}
	}
}

func TestMixParams(t *testing.T) {
	for _, p := range [][]byte{nil, {1}, {2, 1}, {1, 0}, {1, 0x80}, {1, 1, 0}, {1, 0x81, 0x40}} {
		if _, err := parseMix(p); err == nil {
			t.Errorf("parameters %x accepted", p)
		}
	}
	if m, err := parseMix([]byte{MixVariant, 200, 1}); err != nil || m.Name() != "mix(v1,mem=200MiB)" {
		t.Fatalf("%v %v", m, err)
	}
}

// goldenData is 60 kB of deterministic text-like and record-structured
// data: words drawn from a small vocabulary, then fixed-size records with
// counters, so that every part of the models (matches, records, restarts
// of small budgets) is exercised.
func goldenData() []byte {
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"the", "of", "context", "tree", "weighting", "mixing", "model", "byte", "and", "a", "coder", "range"}
	var b bytes.Buffer
	for b.Len() < 30000 {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(7) == 0 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	for i := 0; b.Len() < 60000; i++ {
		fmt.Fprintf(&b, "%06d|%3d|", i, r.IntN(40))
		b.Write([]byte{byte(i), byte(i >> 8), 0, 0xFF})
	}
	return b.Bytes()
}

// TestGoldenStreams pins the compressed size and CRC-32 of goldenData for
// each built-in model.
func TestGoldenStreams(t *testing.T) {
	x := goldenData()
	p5, _ := PPM(PPMConfig{Order: 5, Method: ppm.MethodD, MemMB: 1})
	c6, _ := CTW(CTWConfig{Depth: 6, AlphaInv: 8, MemMB: 1})
	mx, _ := Mix(MixConfig{MemMB: 1})
	mx64, _ := Mix(MixConfig{MemMB: 64})
	want := map[string]string{
		p5.Name():   "12478:ed0d6d3c", // same as the first release
		c6.Name():   "10940:5049bba5", // same as the first release
		mx.Name():   "6156:b86da028",
		mx64.Name(): "5409:2858111d",
	}
	for _, m := range []Model{p5, c6, mx, mx64} {
		z := roundTrip(t, m, x)
		got := fmt.Sprintf("%d:%08x", len(z), crc32.ChecksumIEEE(z))
		if got != want[m.Name()] {
			t.Errorf("%s: stream %s, want %s", m.Name(), got, want[m.Name()])
		}
	}
}
