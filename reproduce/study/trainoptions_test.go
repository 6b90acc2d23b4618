package study

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer"
)

// TestStudyOptions: the study's training options are the declared ones
// with Study set, each a Config field of its type under the keys the
// study always had; TrainConfig takes every one of them from the Config,
// as the hand-written mapping did; Validate's messages name them by key.
func TestStudyOptions(t *testing.T) {
	var keys []string
	n := 0
	for _, o := range transformer.Options {
		if o.Study {
			n++
		}
	}
	if len(studyOptions) != n {
		t.Fatalf("%d study options have a Config field, %d are declared", len(studyOptions), n)
	}
	goType := map[transformer.OptionType]reflect.Kind{transformer.IntOption: reflect.Int, transformer.FloatOption: reflect.Float64,
		transformer.BoolOption: reflect.Bool, transformer.UintOption: reflect.Uint64, transformer.StringOption: reflect.String}
	for _, o := range studyOptions {
		keys = append(keys, o.StudyKey())
		ft := reflect.TypeFor[Config]().Field(o.field).Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if k := ft.Kind(); k != goType[o.Type] {
			t.Errorf("%s: Config field of kind %s, declared %s", o.StudyKey(), k, o.Type)
		}
	}
	slices.Sort(keys)
	want := []string{"batch", "checkpoint_every", "clip", "epochs", "lr", "lr_schedule", "max_steps", "min_lr", "patience", "sum_loss", "warmup"}
	if !slices.Equal(keys, want) {
		t.Errorf("study keys %v, want %v (they are part of stage hashes and committed configurations)", keys, want)
	}

	legacy := func(c Config) transformer.TrainConfig {
		tc := transformer.DefaultTrainConfig()
		tc.BatchSize, tc.Epochs, tc.MaxSteps, tc.Patience = c.Batch, c.Epochs, c.MaxSteps, c.Patience
		tc.LR, tc.MinLR, tc.WarmupSteps, tc.SumOverWindow, tc.Seed = c.LR, c.MinLR, c.Warmup, c.SumLoss, c.Seed
		tc.LogEvery = 50
		if c.LRSchedule != "" {
			tc.Schedule = c.LRSchedule
		}
		if c.Clip != nil {
			tc.ClipNorm = *c.Clip
		}
		return tc
	}
	for _, p := range Presets {
		c, err := Preset(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c.TrainConfig(), legacy(c); got != want {
			t.Errorf("preset %s: TrainConfig %+v, want %+v", p, got, want)
		}
		for i, o := range studyOptions {
			if o.Run {
				continue
			}
			v := map[transformer.OptionType]string{transformer.IntOption: fmt.Sprint(7 + i), transformer.FloatOption: fmt.Sprint(1e-4 * float64(i+1)),
				transformer.BoolOption: "true", transformer.StringOption: transformer.ScheduleConstant}[o.Type]
			c2 := c
			if err := c2.Set(o.StudyKey(), v); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(o.Get(c2.TrainConfig())); got != v {
				t.Errorf("%s=%s: TrainConfig's %s is %s", o.StudyKey(), v, o.Key, got)
			}
			if c2.TrainConfig() != legacy(c2) {
				t.Errorf("%s=%s: TrainConfig %+v, want %+v", o.StudyKey(), v, c2.TrainConfig(), legacy(c2))
			}
		}
	}

	c, _ := Preset("tiny")
	for _, tc := range []struct{ key, value, want string }{
		{"warmup", "-2", "reproduce: warmup -2: want ≥ 0"},
		{"min_lr", "1", "reproduce: min_lr 1: want a number in [0, lr = 0.003]"},
		{"max_steps", "-1", "reproduce: max_steps -1: want ≥ 0 (0: no limit)"},
		{"checkpoint_every", "-1", "reproduce: checkpoint_every -1: want ≥ 0 (0: only at epoch ends)"},
		{"lr", "300", "reproduce: lr 300 with weight_decay 0.01: want lr·wd < 1"},
	} {
		c2 := c
		if err := c2.Set(tc.key, tc.value); err != nil {
			t.Fatal(err)
		}
		if err := c2.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s=%s: %v, want %q", tc.key, tc.value, err, tc.want)
		}
	}
}
