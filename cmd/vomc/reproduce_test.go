package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReproduceConfig checks the preset, --config file and --set layering
// and the usage errors.
func TestReproduceConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, []byte(`{"N": 96, "E": 24}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := reproduceConfig("tiny", file, []string{"E=48", "fig3_models=2;2,2", "depths=1,2"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.N != 96 || cfg.Embed != 48 || len(cfg.Fig3Models) != 2 || len(cfg.Depths) != 2 {
		t.Errorf("effective config %+v", cfg)
	}
	for _, bad := range [][]string{{"E"}, {"nokey=1"}, {"N=x"}, {"fig3_models=7"}} {
		if _, err := reproduceConfig("tiny", "", bad); err == nil {
			t.Errorf("--set %v accepted", bad)
		}
	}
	for _, set := range []string{"model_seeds=2,2=3", `model_seeds={"2,2":3}`} {
		if cfg, err := reproduceConfig("tiny", "", []string{set}); err != nil || cfg.ModelSeeds["2,2"] != 3 || len(cfg.ModelSeeds) != 1 {
			t.Errorf("--set %s: model_seeds %v, %v", set, cfg.ModelSeeds, err)
		}
	}
	if code, out := stderrOf(t, "reproduce", "--set", "preset=small", "--dry-run"); code != 2 || !strings.Contains(out, "cannot be set: the preset is where the configuration starts (choose it with --preset)") {
		t.Errorf("--set preset=small: exit %d:\n%s", code, out)
	}
	if _, err := reproduceConfig("huge", "", nil); err == nil {
		t.Error("unknown preset accepted")
	}
	if err := runReproduce([]string{"--preset", "paper", "--dry-run"}); err != nil {
		t.Error(err)
	}
}

// TestReproduceSlurmFlags checks --slurm (a submission written, the copied
// configuration equal to the effective one, no stage run), --list-stages,
// and --stage refusing a stage whose inputs are not done.
func TestReproduceSlurmFlags(t *testing.T) {
	dir := t.TempDir()
	out, sub := filepath.Join(dir, "out"), filepath.Join(dir, "sub")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--preset", "tiny", "--set", "seed=9", "--out", out}
	if err := runReproduce(append(args, "--slurm", sub, "--slurm-vomc", exe, "--slurm-opt", "train:gres=gpu:1")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"submit.sh", "config.json", "data.sbatch", "train.sbatch", "eval.sbatch", "figures.sbatch", "report.sbatch", "stages-train.txt"} {
		if _, err := os.Stat(filepath.Join(sub, f)); err != nil {
			t.Errorf("submission lacks %s: %v", f, err)
		}
	}
	cfg, err := reproduceConfig("tiny", filepath.Join(sub, "config.json"), nil)
	if err != nil || cfg.Seed != 9 {
		t.Errorf("copied configuration: seed %d, %v", cfg.Seed, err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("--slurm ran something in the output directory")
	}
	if err := runReproduce(append(args, "--slurm", sub, "--slurm-vomc", exe)); err == nil {
		t.Error("--slurm replaced a submission without --force")
	}
	if err := runReproduce(append(args, "--list-stages")); err != nil {
		t.Error(err)
	}
	err = runReproduce(append(args, "--stage", "eval-baselines"))
	if err == nil || !strings.Contains(err.Error(), "needs stage data-train") {
		t.Errorf("--stage without inputs: %v", err)
	}
}
