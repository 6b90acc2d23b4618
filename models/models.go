// Package models holds small transformers trained with vomc that ship with
// it, so that 'vomc explore --demo' can show a trained model from a fresh
// clone (or from an installed binary) without training one first. Each
// model is a directory written by 'vomc train' or by a training stage of
// 'vomc reproduce' (config.json, model.safetensors, train.jsonl,
// optionally snapshots/ and the dynamics/ of 'vomc dynamics') with
// recipe.json (the exact commands that made its data and the model, and
// the demo's test data), a README.md and SHA256SUMS; the files are
// embedded in the binary.
package models

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Demos are the sets of shipped models that 'vomc explore --demo' offers:
// the models of a set share their recipe's test data, so they open
// together on one page. The first set is Default.
var Demos = [][]string{
	{"d3-tf44-e32", "d3-tf44"},
	{"d5-tf44-x4", "d5-tf44-sin-x4", "d5-tf44-e32"},
}

// Default are the models 'vomc explore --demo' opens.
var Default = Demos[0]

// Names lists the shipped models.
func Names() []string {
	ents, _ := files.ReadDir(".")
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// FS returns a shipped model's directory as a file system.
func FS(name string) (fs.FS, error) {
	names := Names()
	if len(names) == 0 {
		return nil, fmt.Errorf("no shipped model %q: this vomc was built with -tags nodemo, without the shipped models (the GPU device binary; build without the tag for 'vomc explore --demo')", name)
	}
	if !slices.Contains(names, name) {
		return nil, fmt.Errorf("no shipped model %q (shipped: %s)", name, strings.Join(names, ", "))
	}
	return fs.Sub(files, name)
}
