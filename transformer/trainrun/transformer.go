package trainrun

import (
	"encoding/json"

	"github.com/vomc/vomc/transformer"
)

// NewTrainer initialises a transformer of configuration cfg with seed and
// its trainer on train and val (nil: no validation).
func NewTrainer(cfg transformer.Config, tc transformer.TrainConfig, seed uint64, train, val transformer.Windows) (*transformer.Trainer, error) {
	m, err := transformer.New(cfg, seed)
	if err != nil {
		return nil, err
	}
	return transformer.NewTrainer(m, tc, train, val)
}

// ConfigFiles are the configuration files of a transformer run: ConfigFile
// (the model's architecture) and TrainConfigFile (the training settings
// and the data's metadata), indented JSON.
func ConfigFiles(cfg transformer.Config, tc transformer.TrainConfig, meta map[string]string) ([]File, error) {
	cj, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	tj, err := json.MarshalIndent(map[string]any{"train": tc, "data": meta}, "", "  ")
	if err != nil {
		return nil, err
	}
	return []File{{ConfigFile, append(cj, '\n')}, {TrainConfigFile, append(tj, '\n')}}, nil
}
