package ppm

import (
	"testing"

	"github.com/vomc/vomc/internal/testseq"
)

func TestFreeze(t *testing.T) {
	x := testseq.FixedOrderSource(3, 2, 4000, 5)
	for _, opts := range []Options{{}, {Method: MethodC, Exclusion: true}, {Method: MethodD, Exclusion: true, UpdateExclusion: true}} {
		m, err := New(3, 3, opts)
		if err != nil {
			t.Fatal(err)
		}
		testseq.CheckFreeze(t, m, x, 2000, 3)
	}
	text := testseq.TextStream(20000)
	m, _ := New(256, 4, Options{Method: MethodC, Exclusion: true})
	testseq.CheckFreeze(t, m, text, 15000, 4)
}
