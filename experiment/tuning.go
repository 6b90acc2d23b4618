package experiment

import (
	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/methods"
)

// Tunes reports whether a method of list is tuned on training windows:
// Kneser–Ney without a fixed discount (kn without delta=).
func Tunes(list methods.List) bool {
	for _, s := range list {
		if _, fixed := s.Value("delta"); s.Kind == "kn" && !fixed {
			return true
		}
	}
	return false
}

// CheckTuning refuses a tuning data set (train, not empty) that no method
// of list is tuned on (Tunes), which would have no effect: an
// *opterr.Error of option Train.
func CheckTuning(list methods.List, train string) error {
	if train == "" || Tunes(list) {
		return nil
	}
	return &opterr.Error{Pkg: "experiment", Option: "Train", Value: train,
		Msg: " has no effect: no method is tuned on training windows (kn without delta= is)"}
}
