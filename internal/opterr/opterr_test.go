package opterr

import "testing"

func TestHyphenated(t *testing.T) {
	for name, want := range map[string]string{"FFMaxK": "ff-max-k", "CRange": "c-range", "CPoints": "c-points", "Width": "width",
		"FF": "ff", "A": "a", "ErrorPlot": "error-plot", "ProfileWindows": "profile-windows", "max_steps": "max-steps", "val_frac": "val-frac"} {
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

func TestDidYouMean(t *testing.T) {
	names := []string{"layers", "layernorm", "lr", "max-steps", "methods", "train", "data", "out", "val-frac"}
	for s, want := range map[string]string{"layer": "; did you mean --layers?", "method": "; did you mean --methods?",
		"trian": "; did you mean --train?", "xyzzy": "", "ou": "; did you mean --out?", "q": "",
		"steps": "; did you mean --max-steps?", "frac": "; did you mean --val-frac?", "max": "; did you mean --max-steps?",
		"step": "", "data-dir": "; did you mean --data?", "max-steps-x": "; did you mean --max-steps?"} {
		if got := DidYouMean(s, names, "--", false); got != want {
			t.Errorf("DidYouMean(%q) = %q, want %q", s, got, want)
		}
	}
	if got, want := DidYouMean("modelseeds", []string{"model_seeds", "seeds"}, "", true), `; did you mean "model_seeds"?`; got != want {
		t.Errorf("quoted: %q, want %q", got, want)
	}
}

// TestText covers every part of the message: option, value (quoted when
// a string), free part with named options and arguments, accepted form,
// did-you-mean, and the flag names of Flag.
func TestText(t *testing.T) {
	for _, c := range []struct {
		e          *Error
		err, flags string
	}{
		{Bad("reproduce", "model_seeds", "2,2", "SPEC=N"), `reproduce: model_seeds "2,2": want SPEC=N`, `--model-seeds "2,2": want SPEC=N`},
		{Bad("pkg", "MaxSteps", -1, "≥ 0"), `pkg: MaxSteps -1: want ≥ 0`, `--max-steps -1: want ≥ 0`},
		{Unknown("pkg", "key", "lrr", []string{"lr", "seed"}), `pkg: key "lrr" is unknown; did you mean "lr"?`, `--key "lrr" is unknown; did you mean "lr"?`},
		{Unknown("pkg", "key", "zzz", []string{"lr", "seed"}), `pkg: key "zzz" is unknown: want one of lr, seed`, `--key "zzz" is unknown: want one of lr, seed`},
		{&Error{Option: "arch", Msg: " lstm needs %s ≥ 1", Also: []string{"layers"}}, `arch lstm needs layers ≥ 1`, `--arch lstm needs --layers ≥ 1`},
		{&Error{Msg: "100%% done"}, `100%% done`, `100%% done`},
	} {
		if got := c.e.Error(); got != c.err {
			t.Errorf("Error() = %q, want %q", got, c.err)
		}
		if got := c.e.Flag("--"); got != c.flags {
			t.Errorf("Flag(\"--\") = %q, want %q", got, c.flags)
		}
	}
}
