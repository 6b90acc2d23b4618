package experiment

import (
	"errors"
	"strings"
	"testing"

	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/methods"
)

// TestCheckTuning: a tuning set is refused, naming it, when no method is
// tuned on it (no kn, or kn with its delta given), and accepted otherwise.
func TestCheckTuning(t *testing.T) {
	for spec, tunes := range map[string]bool{"ctw,kn": true, "kn:order=3": true, "ctw,ppm": false,
		"kn:delta=0.7": false, "KN:Delta=0.7,kn": true} {
		list := methods.MustParse(spec)
		if Tunes(list) != tunes {
			t.Errorf("Tunes(%s) = %v", spec, !tunes)
		}
		err := CheckTuning(list, "tset")
		var oe *opterr.Error
		if tunes != (err == nil) || !tunes && (!errors.As(err, &oe) || !strings.HasPrefix(oe.Flag("--"), `--train "tset" has no effect`)) {
			t.Errorf("CheckTuning(%s): %v", spec, err)
		}
		if CheckTuning(list, "") != nil {
			t.Errorf("CheckTuning(%s, \"\") refused no tuning set", spec)
		}
	}
}
