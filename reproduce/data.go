package reproduce

import (
	"context"
	"path/filepath"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/results"
)

// dataStage draws the data set dc (the training or the test set).
func dataStage(name string, dc dataset.Config, workers int) pipeline.Stage {
	return pipeline.Stage{
		Name:   name,
		Kind:   pipeline.KindData,
		Inputs: dc,
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			if err := dc.Validate(); err != nil {
				return nil, err
			}
			ds, err := dataset.Build(dc, workers, events.ProgressFunc(sc.Events, sc.Label))
			if err != nil {
				return nil, err
			}
			if err := ds.Write(filepath.Join(sc.Dir, results.DataDir), true); err != nil {
				return nil, err
			}
			return []string{filepath.Join(results.DataDir, "symbols.bin")}, nil
		},
	}
}
