package transformer

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Training options. Every option of a training run is declared once, in
// Options: its key, flag, type, default, bounds and documentation. What
// the user sees derives from the declaration — the flags of 'vomc train'
// and 'vomc synth' (package trainrun defines them), the keys of 'vomc
// reproduce's configuration (Option.Study), the messages of Validate and
// the options the PyTorch engine accepts (python/vomc_torch reads
// OptionsSchema, written to python/vomc_torch/train_options.json by 'go
// generate ./python'); tests fail when a surface disagrees with it. See
// "Adding a training option" in the doc of package trainrun.

// OptionType is the type of an option's value.
type OptionType string

// The option types: a TrainConfig field's Go type is int, uint64, float64,
// bool or string respectively.
const (
	IntOption    OptionType = "int"
	UintOption   OptionType = "uint"
	FloatOption  OptionType = "float"
	BoolOption   OptionType = "bool"
	StringOption OptionType = "string"
)

// Bound is a lower or upper bound of a numeric option: Value, or the value
// of the option keyed Option; Open excludes the bound itself.
type Bound struct {
	Value  float64 `json:"value"`
	Option string  `json:"option,omitempty"`
	Open   bool    `json:"open,omitempty"`
}

// Option is one training option.
type Option struct {
	// Key names the option: its TrainConfig field's JSON name (in
	// train_config.json, checkpoints and the torch engine's train
	// config), or for a run option its name in errors
	// ("checkpoint_every").
	Key string `json:"key"`
	// Flag is its flag in 'vomc train', 'vomc synth' and the torch
	// engine's train command, without dashes ("warmup"); "" for none.
	Flag string `json:"flag,omitempty"`
	// Run marks an option of the run directory rather than of
	// TrainConfig (package trainrun implements it).
	Run bool `json:"run,omitempty"`
	// Study: 'vomc reproduce's configuration sets it, under Flag's name
	// with "_" for "-" ("warmup", "min_lr"; StudyKey).
	Study bool `json:"study,omitempty"`
	// NoSynth: 'vomc synth' has no flag for it.
	NoSynth bool `json:"no_synth,omitempty"`
	// EngineFlag is the flag under which the torch engine's train
	// command takes it when that is not Flag ("snapshot-steps": vomc
	// resolves the snapshot specification to steps).
	EngineFlag string `json:"engine_flag,omitempty"`
	// Type is the value's type.
	Type OptionType `json:"type"`
	// Default is the default of 'vomc train' and of the torch engine
	// (DefaultTrainConfig has it too, but for Seed and LogEvery).
	Default any `json:"default"`
	// Name names the value in messages ("warm-up steps").
	Name string `json:"name"`
	// Min and Max bound a numeric value (nil: none); a float bounded
	// below only must also be finite.
	Min *Bound `json:"min,omitempty"`
	Max *Bound `json:"max,omitempty"`
	// ProductBelowOne names an option whose product with this one must
	// stay below 1 (lr·wd: each step multiplies the weights by 1 − lr·wd).
	ProductBelowOne string `json:"product_below_one,omitempty"`
	// Zero says what 0 means ("no limit"; "": nothing special).
	Zero string `json:"zero,omitempty"`
	// Choices are the values a string option takes ("" is the first;
	// nil: any string), in their canonical spelling: a value given in
	// another case is the same keyword (Canonical).
	Choices []string `json:"choices,omitempty"`
	// Doc is the flag's usage.
	Doc string `json:"doc"`
}

// Options are the training options, TrainConfig's fields in order, then
// the run options.
var Options = []Option{
	{Key: "batch_size", Flag: "batch", Study: true, Type: IntOption, Default: 512, Name: "batch size",
		Min: &Bound{Value: 1}, Max: &Bound{Value: MaxBatch}, Doc: "windows per step"},
	{Key: "epochs", Flag: "epochs", Study: true, Type: IntOption, Default: 100, Name: "epochs",
		Min: &Bound{Value: 1}, Doc: "maximum number of epochs"},
	{Key: "max_steps", Flag: "max-steps", Study: true, Type: IntOption, Default: 0, Name: "max steps",
		Min: &Bound{}, Zero: "no limit", Doc: "stop after this many steps (0: no limit); it is then the schedule's length"},
	{Key: "lr", Flag: "lr", Study: true, Type: FloatOption, Default: 1e-3, Name: "learning rate",
		Min: &Bound{}, Doc: "peak learning rate"},
	{Key: "min_lr", Flag: "min-lr", Study: true, Type: FloatOption, Default: 1e-5, Name: "minimum learning rate",
		Min: &Bound{}, Max: &Bound{Option: "lr"}, Doc: "learning rate at the end of the cosine decay"},
	{Key: "warmup_steps", Flag: "warmup", Study: true, Type: IntOption, Default: 100, Name: "warm-up steps",
		Min: &Bound{}, Doc: "linear warm-up steps"},
	{Key: "lr_schedule", Flag: "lr-schedule", Study: true, Type: StringOption, Default: ScheduleCosine, Name: "learning-rate schedule",
		Choices: Schedules, Doc: "learning-rate schedule after the warm-up: cosine (decay to --min-lr at the run's end) or constant (the paper's)"},
	{Key: "beta1", Type: FloatOption, Default: 0.9, Name: "beta1", Min: &Bound{}, Max: &Bound{Value: 1, Open: true},
		Doc: "AdamW's β1"},
	{Key: "beta2", Type: FloatOption, Default: 0.999, Name: "beta2", Min: &Bound{}, Max: &Bound{Value: 1, Open: true},
		Doc: "AdamW's β2"},
	{Key: "eps", Type: FloatOption, Default: 1e-8, Name: "epsilon", Min: &Bound{Open: true}, Doc: "AdamW's ε"},
	{Key: "weight_decay", Flag: "wd", Type: FloatOption, Default: 0.01, Name: "weight decay", Min: &Bound{},
		ProductBelowOne: "lr", Doc: "AdamW weight decay"},
	{Key: "clip_norm", Flag: "clip", Study: true, Type: FloatOption, Default: 1.0, Name: "clip norm", Min: &Bound{},
		Zero: "no clipping", Doc: "gradient-norm clipping bound (0: none)"},
	{Key: "patience", Flag: "patience", Study: true, Type: IntOption, Default: 15, Name: "patience", Min: &Bound{},
		Zero: "no early stopping", Doc: "early stopping after this many epochs without a better validation loss (0: never)"},
	{Key: "sum_over_window", Flag: "sum-loss", Study: true, NoSynth: true, Type: BoolOption, Default: false,
		Name: "window-summed loss", Doc: "gradient of the window-summed loss (the paper's) instead of the per-symbol mean"},
	{Key: "seed", Flag: "seed", Type: UintOption, Default: uint64(1), Name: "seed",
		Doc: "random seed (initialisation, validation split, shuffling)"},
	{Key: "log_every", Flag: "log-every", Type: IntOption, Default: 10, Name: "log interval", Min: &Bound{},
		Zero: "only at epoch ends", Doc: "write a log line every this many steps (0: only at epoch ends)"},
	{Key: "checkpoint_every", Flag: "checkpoint-every", Run: true, Study: true, Type: IntOption, Default: 100,
		Name: "checkpoint interval", Min: &Bound{}, Zero: "only at epoch ends",
		Doc: "write the checkpoint every this many steps (and at every epoch end)"},
	{Key: "snapshots", Flag: "snapshots", Run: true, NoSynth: true, EngineFlag: "snapshot-steps", Type: StringOption,
		Default: "", Name: "snapshots",
		Doc: "keep the model at these steps in DIR/snapshots/ for 'vomc dynamics': log:K (K log-spaced steps), every:S, or a list 10,100,1000"},
}

// OptionByKey returns the option keyed key.
func OptionByKey(key string) (Option, bool) {
	for _, o := range Options {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// StudyKey is the option's key in 'vomc reproduce's configuration ("" when
// the study does not set it).
func (o Option) StudyKey() string {
	if !o.Study {
		return ""
	}
	return strings.ReplaceAll(o.Flag, "-", "_")
}

// trainConfigFields maps the JSON name of every TrainConfig field to its
// index.
var trainConfigFields = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[TrainConfig]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = i
	}
	return m
}()

// field is the TrainConfig field of a (non-run) option.
func (o Option) field(c *TrainConfig) reflect.Value {
	i, ok := trainConfigFields[o.Key]
	if o.Run || !ok {
		panic("transformer: " + o.Key + " is not a TrainConfig field")
	}
	return reflect.ValueOf(c).Elem().Field(i)
}

// Get is the option's value in c (a TrainConfig option).
func (o Option) Get(c TrainConfig) any { return o.field(&c).Interface() }

// Ptr is a pointer to the option's field in c (a TrainConfig option): an
// *int, *uint64, *float64, *bool or *string by its Type.
func (o Option) Ptr(c *TrainConfig) any { return o.field(c).Addr().Interface() }

// Set sets the option's value in c (a TrainConfig option) to v, converted
// to the field's type (v is a number for a numeric option).
func (o Option) Set(c *TrainConfig, v any) {
	f := o.field(c)
	f.Set(reflect.ValueOf(v).Convert(f.Type()))
}

// Canonical is v in its canonical spelling: for an option with Choices, a
// keyword that is one of them but for case ("Constant") is that choice
// ("constant") — keywords ignore case, as methods' do (docs/conventions.md)
// —, so that a configuration, its files and its stage hashes do not depend
// on the spelling. Any other value is returned as it is (Check judges it).
func (o Option) Canonical(v any) any {
	s, ok := v.(string)
	if !ok || o.Choices == nil {
		return v
	}
	for _, c := range o.Choices {
		if strings.EqualFold(s, c) {
			return c
		}
	}
	return v
}

// Canonicalize writes every keyword option of c in its canonical spelling
// (Option.Canonical). Engine.Train (package trainrun) calls it before
// validating a run's settings, and TrainConfig's UnmarshalJSON after
// reading them, so a flag, a file or a caller may spell keywords in any
// case; Validate itself wants them canonical.
func (c *TrainConfig) Canonicalize() {
	for _, o := range Options {
		if !o.Run && o.Choices != nil {
			o.Set(c, o.Canonical(o.Get(*c)))
		}
	}
}

// number is a numeric option's value as a float64.
func number(v any) float64 {
	return reflect.ValueOf(v).Convert(reflect.TypeFor[float64]()).Float()
}

// OptionDefaults is the TrainConfig of every option's Default: 'vomc
// train's defaults, the torch engine's.
func OptionDefaults() TrainConfig { return declaredDefaults() }

// declaredDefaults is a TrainConfig holding every option's Default.
func declaredDefaults() TrainConfig {
	var c TrainConfig
	for _, o := range Options {
		if !o.Run {
			o.Set(&c, o.Default)
		}
	}
	return c
}

// Want says what a valid value is ("≥ 0 (0: no limit)", "a number in [0,
// lr = 0.001]"), with c's values for bounds that are other options.
func (o Option) Want(c TrainConfig) string {
	return o.want(func(b *Bound) string {
		return fmt.Sprintf("%s = %g", b.Option, number(OptionByKeyMust(b.Option).Get(c)))
	})
}

// OptionByKeyMust is OptionByKey for a key that is declared.
func OptionByKeyMust(key string) Option {
	o, ok := OptionByKey(key)
	if !ok {
		panic("transformer: no option " + key)
	}
	return o
}

// want is Want with the bounds that are options written by other.
func (o Option) want(other func(b *Bound) string) string {
	val := func(b *Bound) string {
		if b.Option != "" {
			return other(b)
		}
		return strconv.FormatFloat(b.Value, 'f', -1, 64)
	}
	var s string
	switch {
	case o.Choices != nil:
		return "one of " + strings.Join(o.Choices, ", ")
	case o.Min == nil && o.Max == nil:
		return ""
	case o.Type != FloatOption && o.Max == nil:
		s = "≥ " + val(o.Min)
	case o.Type != FloatOption:
		s = val(o.Min) + ".." + val(o.Max)
	case o.Max == nil:
		op := "≥"
		if o.Min.Open {
			op = ">"
		}
		s = "a finite number " + op + " " + val(o.Min)
	default:
		l, r := "[", "]"
		if o.Min.Open {
			l = "("
		}
		if o.Max.Open {
			r = ")"
		}
		s = "a number in " + l + val(o.Min) + ", " + val(o.Max) + r
	}
	if o.Zero != "" {
		s += " (0: " + o.Zero + ")"
	}
	return s
}

// valid says whether the numeric value v satisfies the option's bounds in c.
func (o Option) valid(v float64, c TrainConfig) bool {
	bound := func(b *Bound) float64 {
		if b.Option != "" {
			return number(OptionByKeyMust(b.Option).Get(c))
		}
		return b.Value
	}
	if math.IsNaN(v) || o.finite() && math.IsInf(v, 0) {
		return false
	}
	if b := o.Min; b != nil && (v < bound(b) || b.Open && v == bound(b)) {
		return false
	}
	if b := o.Max; b != nil && (v > bound(b) || b.Open && v == bound(b)) {
		return false
	}
	return true
}

// Check checks the option's value v (of its Type) given the other
// options' values in c: a *TrainConfigError naming the option says what is
// wrong ("warmup_steps -2: want ≥ 0").
func (o Option) Check(v any, c TrainConfig) error {
	if o.Choices != nil {
		if s, _ := v.(string); s != "" && !slices.Contains(o.Choices, s) {
			return &TrainConfigError{Pkg: "transformer", Option: o.Key, Value: v, Want: o.Want(c)}
		}
		return nil
	}
	if o.Min == nil && o.Max == nil && o.ProductBelowOne == "" {
		return nil
	}
	x := number(v)
	if !o.valid(x, c) {
		return &TrainConfigError{Pkg: "transformer", Option: o.Key, Value: v, Want: o.Want(c)}
	}
	if o.ProductBelowOne != "" {
		p := OptionByKeyMust(o.ProductBelowOne)
		y := number(p.Get(c))
		if x*y >= 1 {
			return &TrainConfigError{Pkg: "transformer", Option: p.Key, Value: y, Also: []string{o.Key, p.Key, o.Key},
				Msg: fmt.Sprintf(" with %%s %g: want %s·%s < 1 (each step multiplies the weights by 1 − %s·%s = %g); lower %%s or %%s",
					x, p.Flag, o.Flag, p.Flag, o.Flag, 1-x*y)}
		}
	}
	return nil
}

// finite says whether the option refuses NaN and ±Inf beyond its bounds:
// a float bounded below only.
func (o Option) finite() bool { return o.Type == FloatOption && o.Min != nil && o.Max == nil }

// OptionsSchema is the declaration of the options as indented JSON: the
// file python/vomc_torch/train_options.json, from which the torch engine
// takes its flags, defaults and the checks of its train config. Every
// option also has "want" (Want, with a bound that is another option
// written by its key), "train_config" (a TrainConfig field) and "finite"
// (NaN and ±Inf are refused besides the bounds: a float bounded below
// only; NaN never satisfies a bound).
func OptionsSchema() []byte {
	type entry struct {
		Option
		Want        string `json:"want,omitempty"`
		TrainConfig bool   `json:"train_config"`
		Finite      bool   `json:"finite,omitempty"`
	}
	var es []entry
	for _, o := range Options {
		es = append(es, entry{Option: o, Want: o.want(func(b *Bound) string { return b.Option }), TrainConfig: !o.Run, Finite: o.finite()})
	}
	b, err := json.MarshalIndent(map[string]any{
		"about":   "vomc's training options, generated from transformer.Options by 'go generate ./python': do not edit",
		"options": es,
	}, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// MarshalJSON writes c with the cosine schedule, the default, left out
// (lr_schedule appears for the constant schedule only), so that settings
// without it — files written before it existed, stage hashes — stay as
// they were.
func (c TrainConfig) MarshalJSON() ([]byte, error) {
	type plain TrainConfig
	if c.Schedule == ScheduleCosine {
		c.Schedule = ""
	}
	return json.Marshal(plain(c))
}

// UnmarshalJSON reads c as MarshalJSON writes it: without lr_schedule, the
// schedule is ScheduleCosine.
func (c *TrainConfig) UnmarshalJSON(b []byte) error {
	type plain TrainConfig
	p := plain(*c)
	p.Schedule = ""
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if p.Schedule == "" {
		p.Schedule = ScheduleCosine
	}
	*c = TrainConfig(p)
	c.Canonicalize()
	return nil
}
