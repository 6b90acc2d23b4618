package figures

import (
	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// DynamicsFile is the figures stage's grid of training-dynamics panels.
const DynamicsFile = "fig_dynamics.png"

// drawDynamics draws DynamicsFile from the dynamics stages among deps;
// false when there are none.
func drawDynamics(cfg study.Config, deps map[string]*pipeline.Done, path string) (bool, error) {
	labels, res, err := results.ReadDynamics(cfg, deps)
	if err != nil || len(res) == 0 {
		return false, err
	}
	panels := make([]dynamics.Panel, len(res))
	for i, r := range res {
		panels[i] = dynamics.Panel{Title: labels[i], Excess: r.Excess, Points: r.Points, Emergences: r.Emergences}
	}
	return true, dynamics.Panels(path, panels, 2)
}
