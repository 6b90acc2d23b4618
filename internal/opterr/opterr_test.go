package opterr

import "testing"

func TestHyphenated(t *testing.T) {
	for name, want := range map[string]string{"FFMaxK": "ff-max-k", "CRange": "c-range", "CPoints": "c-points", "Width": "width",
		"FF": "ff", "A": "a", "ErrorPlot": "error-plot", "ProfileWindows": "profile-windows"} {
		if got := Hyphenated(name); got != want {
			t.Errorf("Hyphenated(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestError(t *testing.T) {
	e := New("pkg", "%s and %s: %d, want ≥ %d", "CPoints Width", 1, 2)
	if got, want := e.Error(), "pkg: CPoints and Width: 1, want ≥ 2"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := e.Flag("--"), "--c-points and --width: 1, want ≥ 2"; got != want {
		t.Errorf("Flag(\"--\") = %q, want %q", got, want)
	}
	if got, want := New("pkg", "pkg: depth %d", "", 0).Error(), "pkg: depth 0"; got != want {
		t.Errorf("Error() = %q, want %q (the prefix once)", got, want)
	}
}
