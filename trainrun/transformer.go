package trainrun

import (
	"encoding/json"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// NewTrainer initialises a transformer of configuration cfg with seed on
// the backend be (chosen by the caller; nil: a CPU backend of the model's
// own) and its trainer on train and val (nil: no validation).
func NewTrainer(be backend.Backend, cfg transformer.Config, tc transformer.TrainConfig, seed uint64, train, val transformer.Windows) (*transformer.Trainer, error) {
	m, err := transformer.NewOn(be, cfg, seed)
	if err != nil {
		return nil, err
	}
	return transformer.NewTrainer(m, tc, train, val)
}

// ConfigFiles are the configuration files of a transformer run: ConfigFile
// (the model's architecture) and TrainConfigFile (the training settings,
// the data's metadata and, when not the Go engine's, the engine), indented
// JSON.
func ConfigFiles(cfg transformer.Config, tc transformer.TrainConfig, meta map[string]string, engine string) ([]File, error) {
	cj, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	tj, err := trainConfigJSON(tc, meta, engine)
	if err != nil {
		return nil, err
	}
	return []File{{ConfigFile, append(cj, '\n')}, {TrainConfigFile, tj}}, nil
}

// trainConfigJSON is the content of TrainConfigFile: {"train": tc, "data":
// meta} and "engine" unless it is the Go engine.
func trainConfigJSON(tc transformer.TrainConfig, meta map[string]string, engine string) ([]byte, error) {
	v := map[string]any{"train": tc, "data": meta}
	if engine != "" && engine != EngineGo {
		v["engine"] = engine
	}
	tj, err := json.MarshalIndent(v, "", "  ")
	return append(tj, '\n'), err
}
