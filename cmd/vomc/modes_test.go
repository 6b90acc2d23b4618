package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/events"
)

// TestFlagsWithoutEffect: a flag that would have no effect in the mode the
// command line chose is refused before any work, naming the flag and the
// mode (issue 46: a flag that is accepted takes effect).
func TestFlagsWithoutEffect(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--data", "d", "-D", "4", "--out", "o"}, "--D has no effect without --file"},
		{[]string{"eval", "--data", "d", "--alphabet", "ab", "--out", "o"}, "--alphabet has no effect without --file"},
		{[]string{"eval", "--data", "d", "--half", "--out", "o"}, "--half has no effect without --file"},
		{[]string{"eval", "--file", "f", "--half", "-N", "8", "--out", "o"}, "--N has no effect with --half"},
		{[]string{"eval", "--file", "f", "--half", "--train", "t", "--out", "o"}, "--train has no effect with --half"},
		{[]string{"eval", "--file", "f", "--half", "--export", "x", "--out", "o"}, "--export has no effect with --half"},
		{[]string{"eval", "--file", "f", "--half", "--smooth", "3", "--out", "o"}, "--smooth has no effect with --half"},
		{[]string{"construct", "--c-points", "5"}, "--c-points has no effect without --error-plot"},
		{[]string{"construct", "--width", "5"}, "--width has no effect unless --ff is mlp"},
		{[]string{"construct", "--random", "20", "--input", "012"}, "--input has no effect with --random"},
		{[]string{"construct", "--seed", "2"}, "--seed has no effect without --random"},
		{[]string{"explore", "--demo", "--static", "p.html", "--port", "8000"}, "--port has no effect with --static"},
		{[]string{"explore", "--demo", "--force"}, "--force has no effect without --static"},
		{[]string{"attention", "--model", "m", "--file", "f", "--window", "3", "--out", "o"}, "--window has no effect without --data"},
		{[]string{"attention", "--model", "m", "--data", "d", "--start", "3", "--out", "o"}, "--start has no effect without --file"},
		{[]string{"reproduce", "--force", "--dry-run"}, "--force has no effect without --slurm"},
		{[]string{"reproduce", "--dry-run", "--jobs", "2"}, "--jobs has no effect with --dry-run"},
		{[]string{"reproduce", "--list-stages", "--dry-run"}, "--dry-run has no effect with --list-stages"},
		{[]string{"reproduce", "--slurm-opt", "gres=gpu:1"}, "--slurm-opt has no effect without --slurm"},
		{[]string{"reproduce", "--dry-run", "--code-key", "k"}, "--code-key has no effect with --dry-run"},
		{[]string{"train", "--allow-unverified", "--out", "o"}, "--allow-unverified has no effect without --resume"},
		{[]string{"bench", "train", "--profile", "--engine", "torch"}, "--profile has no effect unless --engine is go"},
		{[]string{"eval", "--data", "d", "--methods", "ctw,kn:delta=0.5", "--train", "t", "--out", "o"}, `--train "t" has no effect: no method is tuned`},
		{[]string{"dynamics", "--run", "r", "--data", "d", "--methods", "ctw", "--train", "t"}, `--train "t" has no effect: no method is tuned`},
		{[]string{"train", "--data", "d", "--out", "o", "--val", "v", "--val-frac", "0.1"}, "--val-frac has no effect with --val"},
		{[]string{"train", "--data", "d", "--out", "o", "--no-ff", "--act", "relu"}, "--act has no effect with --no-ff"},
		{[]string{"train", "--data", "d", "--out", "o", "--ff=false", "--act", "relu"}, "--act has no effect without --ff"},
		{[]string{"train", "--data", "d", "--out", "o", "--arch", "lstm", "--pos", "sinusoidal"}, "--pos has no effect unless --arch is transformer"},
		{[]string{"synth", "--data", "d", "--out", "o", "--val", "v", "--val-frac", "0"}, "--val-frac has no effect with --val"},
		{[]string{"tree", "show", "--seed", "3", "t.json"}, "unknown flag --seed"},
	} {
		code, out := stderrOf(t, c.args...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("vomc %s: exit %d, want 2 and %q:\n%s", strings.Join(c.args, " "), code, c.want, out)
		}
	}
}

// The command's sink ends a stopped training task where it stopped (its
// progress bars: progress.Tasks.StopAt).
var _ events.Stopper = (*sink)(nil)

// TestMissingDataSet: a data set directory that does not exist is named
// with the flag that gave it, not as a raw "open DIR/manifest.json"
// (issue 46).
func TestMissingDataSet(t *testing.T) {
	dir := t.TempDir()
	_, common := tinyData(t, dir)
	missing := filepath.Join(dir, "tset")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--data", missing, "--out", filepath.Join(dir, "r1")}, "data set " + missing + ": no such directory (--data)"},
		{append(common, "--val", missing, "--out", filepath.Join(dir, "r2")), "data set " + missing + ": no such directory (--val)"},
		{[]string{"eval", "--data", missing, "--out", filepath.Join(dir, "e")}, "data set " + missing + ": no such directory"},
		{[]string{"train", "--data", dir, "--out", filepath.Join(dir, "r3")}, "the directory holds no manifest.json (it is not a data set) (--data)"},
	} {
		code, out := stderrOf(t, c.args...)
		if code == 0 || !strings.Contains(out, c.want) || strings.Contains(out, "open ") {
			t.Errorf("vomc %s: exit %d, want %q:\n%s", strings.Join(c.args, " "), code, c.want, out)
		}
	}
	for _, r := range []string{"r1", "r2", "r3"} {
		if _, err := os.Stat(filepath.Join(dir, r)); err == nil {
			t.Errorf("%s was written by a run without its data", r)
		}
	}
}
