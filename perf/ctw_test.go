package perf

import (
	"bytes"
	"strings"
	"testing"
)

func TestBenchCTW(t *testing.T) {
	r, err := BenchCTW(3, 3, 0.15, 20000, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Counts <= 0 || r.LogML <= 0 || r.Sequential <= 0 || r.LogMLValue >= 0 {
		t.Fatalf("implausible report %+v", r)
	}
	var b bytes.Buffer
	r.Write(&b)
	for _, want := range []string{"counts-only", "log marginal", "blend", "Theorem 2"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if _, err := BenchCTW(3, 3, 1.5, 10, 1, 1); err == nil {
		t.Error("λ=1.5 accepted")
	}
}
