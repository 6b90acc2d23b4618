package explore

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/models"
	"github.com/vomc/vomc/source"
)

// Recipe is a shipped model's recipe.json: how it was made and the test
// data the demo generates for it.
type Recipe struct {
	Description string `json:"description"`
	// Commands are the exact commands that made the data and the model.
	Commands []string `json:"commands"`
	// Test is the demo's test set: a fresh data set of the training prior.
	Test struct {
		Prior source.Prior `json:"prior"`
		K     int          `json:"k"`
		N     int          `json:"n"`
		Seed  uint64       `json:"seed"`
	} `json:"test_data"`
}

// ReadRecipe reads a shipped model's recipe.
func ReadRecipe(name string) (*Recipe, fs.FS, error) {
	fsys, err := models.FS(name)
	if err != nil {
		return nil, nil, fmt.Errorf("explore: %w", err)
	}
	b, err := fs.ReadFile(fsys, "recipe.json")
	if err != nil {
		return nil, nil, fmt.Errorf("explore: shipped model %s: %w", name, err)
	}
	var r Recipe
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, fmt.Errorf("explore: shipped model %s: recipe.json: %w", name, err)
	}
	return &r, fsys, nil
}

// Demo returns the options of the demo: the shipped models names (empty:
// models.Default) on test data generated in memory from the first one's
// recipe (the others must share it); data, when not nil, replaces the
// generated test data.
func Demo(names []string, data *dataset.Dataset, dataName string) (Options, error) {
	if len(names) == 0 {
		names = models.Default
	}
	var o Options
	var first *Recipe
	for _, name := range names {
		r, fsys, err := ReadRecipe(name)
		if err != nil {
			return o, err
		}
		if first == nil {
			first = r
		} else if fmt.Sprint(r.Test) != fmt.Sprint(first.Test) && data == nil {
			return o, fmt.Errorf("explore: shipped models %s and %s were trained on different data: open them one at a time", names[0], name)
		}
		o.Models = append(o.Models, ModelSource{Dir: "models/" + name, FS: fsys})
	}
	if data == nil {
		t := first.Test
		cfg := dataset.Config{Prior: t.Prior, K: t.K, NK: t.N, N: t.N, Fresh: true, Seed: t.Seed}
		ds, err := dataset.Build(cfg, 0, nil)
		if err != nil {
			return o, fmt.Errorf("explore: demo data: %w", err)
		}
		data = ds
		dataName = fmt.Sprintf("demo test set (%d fresh windows, seed %d)", t.K, t.Seed)
	}
	o.Data, o.DataName = data, dataName
	return o, nil
}

// DefaultDemo are the shipped models --demo opens by default.
func DefaultDemo() []string { return append([]string(nil), models.Default...) }

// DemoSets are the sets of shipped models that open together
// (models.Demos), each as a --model value: comma-separated names.
func DemoSets() []string {
	var sets []string
	for _, d := range models.Demos {
		sets = append(sets, strings.Join(d, ","))
	}
	return sets
}

// DemoNames lists the shipped models with their descriptions.
func DemoNames() string {
	var b strings.Builder
	for _, n := range models.Names() {
		r, _, err := ReadRecipe(n)
		desc := ""
		if err == nil {
			desc = r.Description
		}
		fmt.Fprintf(&b, "  %-14s %s\n", n, desc)
	}
	return b.String()
}
