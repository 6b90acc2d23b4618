package kn

import (
	"testing"

	"github.com/vomc/vomc/internal/testseq"
)

func TestFreeze(t *testing.T) {
	x := testseq.FixedOrderSource(3, 2, 4000, 5)
	for _, opts := range []Options{{}, {Continuation: true}} {
		m, err := New(3, 3, 0.6, opts)
		if err != nil {
			t.Fatal(err)
		}
		testseq.CheckFreeze(t, m, x, 2000, 3)
	}
	text := testseq.TextStream(20000)
	m, _ := New(256, 3, 0.6, Options{})
	testseq.CheckFreeze(t, m, text, 15000, 3)
}
