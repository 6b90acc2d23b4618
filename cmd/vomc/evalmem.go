package main

import (
	"fmt"

	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/memest"
)

// checkEvalMemory reads the headers of the data set (and the tuning set,
// if any) and refuses the evaluation when its estimate (memest.Eval)
// exceeds the available memory.
func checkEvalMemory(data, train, spec string, workers int) error {
	est, h, err := memest.EvalDataSet(data, train, spec, workers)
	if err != nil {
		return err
	}
	return checkMemory(fmt.Sprintf("evaluating %s (%d windows of N=%d)", data, h.Windows, h.N), est)
}

// checkEvalOutputs checks eval's outputs before any work: the files of
// --out (or half.txt with --half) and the --export directory.
func checkEvalOutputs(out, export string, half, force bool) error {
	names := []string{experiment.Outputs.JSON, experiment.Outputs.CSV, experiment.Outputs.Summary, experiment.Outputs.PNG, experiment.Outputs.SVG}
	if half {
		names = []string{"half.txt"}
	}
	if err := checkOutputDir(out, force, names...); err != nil {
		return err
	}
	if export != "" {
		return checkOutputDir(export, force)
	}
	return nil
}
