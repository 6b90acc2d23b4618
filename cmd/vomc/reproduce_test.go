package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vomc/vomc/reproduce"
	"github.com/vomc/vomc/trainrun"
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

// TestReproduceLockStale: --lock-stale takes effect with --slurm (every
// task's command line carries it) and with --list-stages (it decides which
// locks the listing calls stale), so both accept it; --dry-run, which
// takes no lock and lists none, refuses it.
func TestReproduceLockStale(t *testing.T) {
	dir := t.TempDir()
	out, sub := filepath.Join(dir, "out"), filepath.Join(dir, "sub")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--preset", "tiny", "--out", out}
	if err := runReproduce(append(args, "--slurm", sub, "--slurm-vomc", exe, "--lock-stale", "20m")); err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Glob(filepath.Join(sub, "*.sbatch"))
	if len(scripts) == 0 {
		t.Fatal("no sbatch script written")
	}
	for _, f := range scripts {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "'--lock-stale' '20m0s'") {
			t.Errorf("%s: the task line does not carry --lock-stale 20m0s:\n%s", filepath.Base(f), b)
		}
	}

	// a lock on the first stage, held elsewhere, its heartbeat 10 minutes old
	cfg, err := reproduceConfig("tiny", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := trainrun.NewEngine(trainrun.Spec{Name: cfg.Engine, CPU: compute()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	g, err := reproduce.Graph(cfg, reproduce.Options{Engine: eng, Out: out, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	lock := g[0].Dir + ".lock"
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte(`{"token":"t","host":"elsewhere","pid":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * time.Minute)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stale string
		want  bool
	}{{"1h", false}, {"1m", true}} {
		list, err := stdoutOf(t, func() error { return runReproduce(append(args, "--list-stages", "--lock-stale", c.stale)) })
		if err != nil {
			t.Fatalf("--list-stages --lock-stale %s: %v", c.stale, err)
		}
		if !strings.Contains(list, "claimed by host elsewhere") || strings.Contains(list, "stale:") != c.want {
			t.Errorf("--list-stages --lock-stale %s: want the lock listed, stale %v:\n%s", c.stale, c.want, list)
		}
	}
	if code, msg := stderrOf(t, "reproduce", "--dry-run", "--lock-stale", "1m"); code != 2 || !strings.Contains(msg, "--lock-stale has no effect with --dry-run") {
		t.Errorf("--dry-run --lock-stale: exit %d:\n%s", code, msg)
	}
}

// stdoutOf runs f and returns what it wrote on standard output.
func stdoutOf(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	err = f()
	os.Stdout = old
	w.Close()
	return string(<-done), err
}
