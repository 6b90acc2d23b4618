package markov

import (
	"testing"

	"github.com/vomc/vomc/internal/testseq"
)

func TestFreeze(t *testing.T) {
	x := testseq.FixedOrderSource(3, 2, 4000, 5)
	for k := 0; k <= 3; k++ {
		m, err := New(3, k, 0.5, Options{})
		if err != nil {
			t.Fatal(err)
		}
		testseq.CheckFreeze(t, m, x, 2000, k)
	}
	f, _ := NewFixedOrder(3, 2, 0.5, Options{})
	f.forceSparse = true
	testseq.CheckFreeze(t, f, x, 2000, 2)
}
