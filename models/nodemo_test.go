//go:build nodemo

package models

import (
	"strings"
	"testing"
)

// TestNoDemo: a nodemo build ships no models and says why when one is
// asked for (run by the module's TestNoDemoBuild with -tags nodemo).
func TestNoDemo(t *testing.T) {
	if n := Names(); len(n) != 0 {
		t.Errorf("nodemo build ships %v", n)
	}
	if _, err := FS(Default[0]); err == nil || !strings.Contains(err.Error(), "-tags nodemo") {
		t.Errorf("FS in a nodemo build: %v", err)
	}
}
