//go:build ignore

// gen_options writes vomc_torch/train_options.json, the declaration of the
// training options (transformer.OptionsSchema) that the PyTorch engine
// reads: run by 'go generate ./python' whenever transformer.Options
// changes (TestOptionsFile fails until it is).
package main

import (
	"log"
	"os"

	"github.com/vomc/vomc/transformer"
)

func main() {
	if err := os.WriteFile("vomc_torch/train_options.json", transformer.OptionsSchema(), 0o644); err != nil {
		log.Fatal(err)
	}
}
