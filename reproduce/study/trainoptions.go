package study

import (
	"errors"
	"reflect"
	"slices"

	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/transformer"
)

// studyOptions are the declared options of the study with their Config
// fields' indices.
var studyOptions = func() []studyOption {
	fields := map[string]int{}
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		fields[jsonName(t.Field(i))] = i
	}
	var out []studyOption
	for _, o := range transformer.Options {
		if i, ok := fields[o.StudyKey()]; ok && o.Study {
			out = append(out, studyOption{o, i})
		}
	}
	return out
}()

// studyOption is a declared option and its Config field.
type studyOption struct {
	transformer.Option
	field int
}

// value is the option's value in c: its declared default where c's field
// holds none (a nil pointer, or "" for an option with Choices).
func (o studyOption) value(c Config) any {
	v := reflect.ValueOf(c).Field(o.field)
	switch {
	case v.Kind() == reflect.Pointer && v.IsNil(), o.Choices != nil && v.String() == "":
		return o.Default
	case v.Kind() == reflect.Pointer:
		return v.Elem().Interface()
	}
	return v.Interface()
}

// canonicalKeywords writes the keyword of every study option with Choices
// in its canonical spelling (transformer.Option.Canonical): Set and Load
// call it, so that the configuration, config.json and the stage hashes do
// not depend on the spelling ("lr_schedule=Constant" is "constant").
func (c *Config) canonicalKeywords() {
	v := reflect.ValueOf(c).Elem()
	for _, o := range studyOptions {
		if f := v.Field(o.field); o.Choices != nil && f.Kind() == reflect.String {
			f.SetString(o.Canonical(f.String()).(string))
		}
	}
}

// trainConfig is tc with every study option of TrainConfig set from c.
func (c Config) trainConfig(tc transformer.TrainConfig) transformer.TrainConfig {
	for _, o := range studyOptions {
		if !o.Run {
			o.Set(&tc, o.value(c))
		}
	}
	return tc
}

// validateTraining checks the study's training options as their
// declaration says (the transformers' TrainConfig, then the run options),
// naming them by their keys.
func (c Config) validateTraining() error {
	tc := c.TrainConfig()
	var fe *transformer.TrainConfigError
	if err := tc.Validate(); errors.As(err, &fe) {
		e := *fe // the study's names: its package and keys
		e.Pkg, e.Option, e.Also = "reproduce", studyKey(e.Option), slices.Clone(e.Also)
		for i, o := range e.Also {
			e.Also[i] = studyKey(o)
		}
		return &e
	} else if err != nil {
		return err
	}
	for _, o := range studyOptions {
		if o.Run && o.Check(o.value(c), tc) != nil {
			return opterr.Bad("reproduce", o.StudyKey(), o.value(c), o.Want(tc))
		}
	}
	return nil
}

// studyKey is the study's key of a training option's key (its own when
// the study does not set it).
func studyKey(key string) string {
	if o, ok := transformer.OptionByKey(key); ok && o.Study {
		return o.StudyKey()
	}
	return key
}
