package report

import (
	"strings"
	"testing"

	"github.com/vomc/vomc/pipeline"
)

// TestCodeKeyOf: the report names a given code key and the binary's own.
func TestCodeKeyOf(t *testing.T) {
	own, err := pipeline.CodeKey()
	if err != nil {
		t.Fatal(err)
	}
	if got := codeKeyOf(Build{}); got != own {
		t.Errorf("no key given: %q, want %q", got, own)
	}
	if got := codeKeyOf(Build{CodeKey: own}); got != own {
		t.Errorf("own key given: %q", got)
	}
	got := codeKeyOf(Build{CodeKey: "exe 1234"})
	if !strings.HasPrefix(got, "exe 1234 (given") || !strings.Contains(got, "this binary's own key is "+own) {
		t.Errorf("another key given: %q", got)
	}
}
