package study

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/internal/opterr"
)

// everyKey is a value of every key but "preset", each unlike the tiny
// preset's and valid together, in Set's textual form, with the value the
// effective configuration must then hold (as JSON).
var everyKey = map[string][2]string{
	"A": {"4", `4`}, "depths": {"1,2", `[1,2]`}, "lambda": {"0.2", `0.2`}, "alpha": {"0.7", `0.7`},
	"leaves": {"mixed", `"mixed"`}, "sparse_frac": {"0.25", `0.25`}, "N": {"48", `48`},
	"train_trees": {"120", `120`}, "train_NK": {"480", `480`}, "val_frac": {"0.1", `0.1`}, "test_trees": {"150", `150`},
	"E": {"48", `48`}, "fig3_models": {"2;2,2;3", `["2","2,2","3"]`}, "fig4_models": {"2,2-ff-ln;1,1", `["2,2-ff-ln","1,1"]`},
	"batch": {"16", `16`}, "lr": {"0.002", `0.002`}, "min_lr": {"2e-5", `0.00002`}, "warmup": {"20", `20`},
	"lr_schedule": {"constant", `"constant"`}, "clip": {"0", `0`},
	"epochs": {"50", `50`}, "max_steps": {"500", `500`}, "patience": {"3", `3`}, "sum_loss": {"true", `true`},
	"checkpoint_every": {"50", `50`}, "construct_windows": {"10", `10`}, "heatmap_model": {"3", `"3"`},
	"heatmap_suffix": {"3", `3`}, "synth_variants": {"tf20;allcounts", `["tf20","allcounts"]`}, "synth_steps": {"300", `300`},
	"synth_encodings": {"log;linear", `["log","linear"]`}, "synth_seeds": {"2", `2`},
	"extra_methods": {"markov:k=1", `"markov:k=1"`}, "smooth": {"5", `5`}, "seed": {"9", `9`}, "seeds": {"3", `3`},
	"model_seeds": {"2,2=4;3=1", `{"2,2":4,"3":1}`}, "ladder": {"true", `true`}, "workers": {"2", `2`},
	"engine": {"torch", `"torch"`}, "dynamics": {"log:5", `"log:5"`}, "dynamics_windows": {"20", `20`},
	"dynamics_seeds": {"2", `2`}, "snapshot_seeds": {"3", `3`}, "dynamics_head_windows": {"10", `10`},
}

// TestSetEveryKey sets every key of Config (enumerated from the type, so
// that a new key without an entry in everyKey fails here) to a value
// unlike the preset's, and reads each back from the effective
// configuration, the JSON that vomc reproduce prints and writes.
func TestSetEveryKey(t *testing.T) {
	t.Parallel()
	base, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	var sets []string
	for _, k := range Keys() {
		if k == "preset" {
			continue
		}
		kv, ok := everyKey[k]
		if !ok {
			t.Errorf("key %q has no test value in everyKey", k)
			continue
		}
		if got := fieldJSON(t, base, k); got == kv[1] {
			t.Errorf("%s: test value %s is the preset's", k, got)
		}
		sets = append(sets, k+"="+kv[0])
	}
	cfg, err := Layered("tiny", "", sets)
	if err != nil {
		t.Fatalf("Layered: %v", err)
	}
	var printed map[string]json.RawMessage
	if err := json.Unmarshal([]byte(cfg.JSON()), &printed); err != nil {
		t.Fatal(err)
	}
	for k, kv := range everyKey {
		if !slices.Contains(Keys(), k) {
			t.Errorf("everyKey has %q, which is no key", k)
			continue
		}
		if got := fieldJSON(t, cfg, k); got != kv[1] {
			t.Errorf("%s=%s: the configuration holds %s, want %s", k, kv[0], got, kv[1])
		}
		if got := compact(t, printed[k]); got != kv[1] {
			t.Errorf("%s=%s: the printed configuration holds %s, want %s", k, kv[0], got, kv[1])
		}
	}
}

// TestSetForms checks the JSON forms, emptying, and the refusals: every
// key given a value of the wrong form, the preset and an unknown key are
// *opterr.Errors naming the key, the value and the accepted form.
func TestSetForms(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ key, value, want string }{
		{"model_seeds", `{"2,2":3}`, `{"2,2":3}`}, {"model_seeds", "2,2=3", `{"2,2":3}`},
		{"model_seeds", " 2,2 = 3 ; 2=1 ", `{"2":1,"2,2":3}`}, {"model_seeds", "", `null`},
		{"depths", "[3,4]", `[3,4]`}, {"depths", "", `null`}, {"fig4_models", "", `null`},
		{"fig3_models", `["4,4"]`, `["4,4"]`}, {"sum-loss", "1", `true`},
	} {
		cfg, _ := Preset("ladder")
		if err := cfg.Set(c.key, c.value); err != nil {
			t.Errorf("Set(%s, %q): %v", c.key, c.value, err)
			continue
		}
		if got := fieldJSON(t, cfg, strings.ReplaceAll(c.key, "-", "_")); got != c.want {
			t.Errorf("Set(%s, %q): %s, want %s", c.key, c.value, got, c.want)
		}
	}
	bad := map[reflect.Kind]string{reflect.Int: "1.5", reflect.Uint64: "-1", reflect.Float64: "x",
		reflect.Bool: "maybe", reflect.Slice: "[1", reflect.Map: "2,2", reflect.Pointer: "x"}
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		f, k := typ.Field(i), jsonName(typ.Field(i))
		v, ok := bad[f.Type.Kind()]
		if f.Type.Kind() == reflect.String {
			v, ok = "[1]", true // JSON, but not a string
		}
		if !ok {
			t.Errorf("key %s of kind %s: no bad value to try", k, f.Type.Kind())
			continue
		}
		cfg, _ := Preset("tiny")
		before := fieldJSON(t, cfg, k)
		err := cfg.Set(k, v)
		var oe *opterr.Error
		if !errors.As(err, &oe) || oe.Option != k || !strings.Contains(err.Error(), k) {
			t.Errorf("Set(%s, %q) = %v (%T), want an *opterr.Error naming %s", k, v, err, err, k)
			continue
		}
		if k != "preset" && oe.Want != SetForm(f.Type) {
			t.Errorf("Set(%s, %q): want %q, got %q", k, v, SetForm(f.Type), oe.Want)
		}
		if after := fieldJSON(t, cfg, k); after != before {
			t.Errorf("Set(%s, %q) failed but changed the value from %s to %s", k, v, before, after)
		}
	}
	cfg, _ := Preset("tiny")
	for key, want := range map[string]string{"modelseeds": `did you mean "model_seeds"?`, "a": `did you mean "A"?`,
		"xyzzy": "want one of A, E, N, alpha,"} {
		err := cfg.Set(key, "1")
		var oe *opterr.Error
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), want) {
			t.Errorf("Set(%s): %v, want an *opterr.Error with %q", key, err, want)
		}
	}
	if _, err := Layered("tiny", "", []string{"seed"}); err == nil || !strings.Contains(err.Error(), "want key=value") {
		t.Errorf("Layered without '=': %v", err)
	}
}

// fieldJSON is the compact JSON of c's field of key k.
func fieldJSON(t *testing.T, c Config, k string) string {
	t.Helper()
	v, typ := reflect.ValueOf(c), reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		if jsonName(typ.Field(i)) == k {
			b, err := json.Marshal(v.Field(i).Interface())
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("no key %q", k)
	return ""
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if raw == nil {
		return "(absent)"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
