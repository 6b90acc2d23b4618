package transformer

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestOptionsDeclareTrainConfig: every TrainConfig field is declared by
// exactly one option of its type, keys and flags are unique, and every
// default has the option's type.
func TestOptionsDeclareTrainConfig(t *testing.T) {
	goType := map[OptionType]reflect.Type{IntOption: reflect.TypeFor[int](), UintOption: reflect.TypeFor[uint64](),
		FloatOption: reflect.TypeFor[float64](), BoolOption: reflect.TypeFor[bool](), StringOption: reflect.TypeFor[string]()}
	keys, flags := map[string]bool{}, map[string]bool{}
	for _, o := range Options {
		if keys[o.Key] || o.Flag != "" && flags[o.Flag] {
			t.Errorf("%s: key or flag %q declared twice", o.Key, o.Flag)
		}
		keys[o.Key], flags[o.Flag] = true, true
		if reflect.TypeOf(o.Default) != goType[o.Type] {
			t.Errorf("%s: default %#v is not of type %s", o.Key, o.Default, o.Type)
		}
		if o.Name == "" || o.Doc == "" {
			t.Errorf("%s: no name or doc", o.Key)
		}
		if o.Study && o.Flag == "" {
			t.Errorf("%s: a study option needs a flag (its study key)", o.Key)
		}
		if o.Run {
			continue
		}
		i, ok := trainConfigFields[o.Key]
		if !ok {
			t.Errorf("%s is not a TrainConfig field", o.Key)
			continue
		}
		if ft := reflect.TypeFor[TrainConfig]().Field(i).Type; ft != goType[o.Type] {
			t.Errorf("%s: field of type %s, declared %s", o.Key, ft, o.Type)
		}
	}
	for name := range trainConfigFields {
		if !keys[name] {
			t.Errorf("TrainConfig field %s is not declared in Options", name)
		}
	}
}

// TestDefaultTrainConfig: the declared defaults are those DefaultTrainConfig
// always had.
func TestDefaultTrainConfig(t *testing.T) {
	want := TrainConfig{BatchSize: 512, Epochs: 100, LR: 1e-3, MinLR: 1e-5, WarmupSteps: 100, Schedule: ScheduleCosine,
		Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, ClipNorm: 1, Patience: 15}
	if got := DefaultTrainConfig(); got != want {
		t.Errorf("DefaultTrainConfig %+v, want %+v", got, want)
	}
	if d := declaredDefaults(); d.Seed != 1 || d.LogEvery != 10 {
		t.Errorf("declared seed %d, log interval %d: want 'vomc train's 1 and 10", d.Seed, d.LogEvery)
	}
}

// legacyValidate is TrainConfig.Validate as written by hand before the
// options were declared: the declaration must give the same errors.
func legacyValidate(c TrainConfig) error {
	bad := func(field, name string, v any, want string) error {
		return &TrainConfigError{Pkg: "transformer", Option: field, Value: v, Want: want}
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case c.BatchSize < 1 || c.BatchSize > MaxBatch:
		return bad("batch_size", "batch size", c.BatchSize, fmt.Sprintf("1..%d", MaxBatch))
	case c.Epochs < 1:
		return bad("epochs", "epochs", c.Epochs, "≥ 1")
	case c.MaxSteps < 0:
		return bad("max_steps", "max steps", c.MaxSteps, "≥ 0 (0: no limit)")
	case !finite(c.LR) || c.LR < 0:
		return bad("lr", "learning rate", c.LR, "a finite number ≥ 0")
	case !finite(c.MinLR) || c.MinLR < 0 || c.MinLR > c.LR:
		return bad("min_lr", "minimum learning rate", c.MinLR, fmt.Sprintf("a number in [0, lr = %g]", c.LR))
	case c.WarmupSteps < 0:
		return bad("warmup_steps", "warm-up steps", c.WarmupSteps, "≥ 0")
	case !(c.Beta1 >= 0 && c.Beta1 < 1):
		return bad("beta1", "beta1", c.Beta1, "a number in [0, 1)")
	case !(c.Beta2 >= 0 && c.Beta2 < 1):
		return bad("beta2", "beta2", c.Beta2, "a number in [0, 1)")
	case !finite(c.Eps) || c.Eps <= 0:
		return bad("eps", "epsilon", c.Eps, "a finite number > 0")
	case !finite(c.WeightDecay) || c.WeightDecay < 0:
		return bad("weight_decay", "weight decay", c.WeightDecay, "a finite number ≥ 0")
	case c.LR*c.WeightDecay >= 1:
		return &TrainConfigError{Pkg: "transformer", Option: "lr", Value: c.LR, Also: []string{"weight_decay", "lr", "weight_decay"},
			Msg: fmt.Sprintf(" with %%s %g: want lr·wd < 1 (each step multiplies the weights by 1 − lr·wd = %g); lower %%s or %%s", c.WeightDecay, 1-c.LR*c.WeightDecay)}
	case !finite(c.ClipNorm) || c.ClipNorm < 0:
		return bad("clip_norm", "clip norm", c.ClipNorm, "a finite number ≥ 0 (0: no clipping)")
	case c.Patience < 0:
		return bad("patience", "patience", c.Patience, "≥ 0 (0: no early stopping)")
	case c.LogEvery < 0:
		return bad("log_every", "log interval", c.LogEvery, "≥ 0 (0: only at epoch ends)")
	}
	return nil
}

// TestValidateAsDeclared: Validate, driven by the declaration, accepts and
// refuses exactly what the hand-written checks did, with the same
// messages, on every field set to values at and around its bounds (one or
// two fields at a time).
func TestValidateAsDeclared(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	values := map[string][]any{
		"batch_size": {0, 1, -3, MaxBatch, MaxBatch + 1}, "epochs": {-1, 0, 1, 7}, "max_steps": {-1, 0, 5},
		"lr": {-1.0, 0.0, 1e-3, 2.0, 1e3, nan, inf, -inf}, "min_lr": {-1e-9, 0.0, 1e-3, 5.0, nan, inf},
		"warmup_steps": {-3, 0, 4}, "beta1": {-0.1, 0.0, 0.5, 1.0, nan, inf}, "beta2": {-0.1, 0.999, 1.0, nan},
		"eps": {-1.0, 0.0, 1e-8, nan, inf}, "weight_decay": {-5.0, 0.0, 0.5, 1000.0, nan, inf},
		"clip_norm": {-1.0, 0.0, 1.0, nan, inf}, "patience": {-2, 0, 3}, "log_every": {-1, 0, 10},
		"seed": {uint64(0), uint64(math.MaxUint64)}, "sum_over_window": {true, false},
	}
	check := func(c TrainConfig, what string) {
		got, want := c.Validate(), legacyValidate(c)
		if fmt.Sprint(got) != fmt.Sprint(want) || (got == nil) != (want == nil) {
			t.Errorf("%s: Validate %v, want %v", what, got, want)
			return
		}
		if got != nil && got.(*TrainConfigError).Option != want.(*TrainConfigError).Option {
			t.Errorf("%s: field %s, want %s", what, got.(*TrainConfigError).Option, want.(*TrainConfigError).Option)
		}
	}
	n := 0
	for k1, vs1 := range values {
		o1 := OptionByKeyMust(k1)
		for _, v1 := range vs1 {
			c := DefaultTrainConfig()
			o1.Set(&c, v1)
			check(c, fmt.Sprintf("%s=%v", k1, v1))
			for k2, vs2 := range values {
				o2 := OptionByKeyMust(k2)
				for _, v2 := range vs2 {
					c2 := c
					o2.Set(&c2, v2)
					check(c2, fmt.Sprintf("%s=%v, %s=%v", k1, v1, k2, v2))
					n++
				}
			}
		}
	}
	t.Logf("%d configurations", n)
}

// TestOptionsSchema: the schema holds every option with its want text and
// type, as the torch engine reads it.
func TestOptionsSchema(t *testing.T) {
	var s struct {
		Options []map[string]any `json:"options"`
	}
	if err := json.Unmarshal(OptionsSchema(), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Options) != len(Options) {
		t.Fatalf("%d options in the schema, %d declared", len(s.Options), len(Options))
	}
	for i, o := range s.Options {
		if o["key"] != Options[i].Key || o["type"] != string(Options[i].Type) {
			t.Errorf("schema entry %d: %v", i, o)
		}
	}
	mo := OptionByKeyMust("min_lr")
	if w := mo.want(func(b *Bound) string { return b.Option }); w != "a number in [0, lr]" {
		t.Errorf("min_lr's want in the schema: %q", w)
	}
	if !strings.Contains(string(OptionsSchema()), `"want": "≥ 0 (0: no limit)"`) {
		t.Error("max_steps' want is missing from the schema")
	}
}

// TestOptionKeywordsIgnoreCase: a keyword option's value in any case is
// its choice (Canonical, Canonicalize, a config file read back); other
// values and other options are left as they are, for Check to judge.
func TestOptionKeywordsIgnoreCase(t *testing.T) {
	sched, lr := OptionByKeyMust("lr_schedule"), OptionByKeyMust("lr")
	for _, c := range []struct {
		o       Option
		in, out any
	}{
		{sched, "Constant", ScheduleConstant},
		{sched, "COSINE", ScheduleCosine},
		{sched, "constant", ScheduleConstant},
		{sched, "linear", "linear"}, // not a choice: Check refuses it
		{sched, "", ""},
		{lr, 1e-3, 1e-3},
		{OptionByKeyMust("snapshots"), "Log:5", "Log:5"}, // no Choices: any string
	} {
		if got := c.o.Canonical(c.in); got != c.out {
			t.Errorf("%s.Canonical(%v) = %v, want %v", c.o.Key, c.in, got, c.out)
		}
	}
	c := OptionDefaults()
	c.Schedule = "ConStant"
	if c.Validate() == nil {
		t.Error("Validate accepted a keyword that is not canonical")
	}
	c.Canonicalize()
	if c.Schedule != ScheduleConstant || c.Validate() != nil {
		t.Errorf("Canonicalize: schedule %q, %v", c.Schedule, c.Validate())
	}
	var r TrainConfig
	if err := json.Unmarshal([]byte(`{"lr_schedule": "Constant"}`), &r); err != nil || r.Schedule != ScheduleConstant {
		t.Errorf("read back from JSON: schedule %q, %v", r.Schedule, err)
	}
	c.Schedule = "linear"
	c.Canonicalize()
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `lr_schedule "linear": want one of cosine, constant`) {
		t.Errorf("an unknown schedule: %v", err)
	}
}
