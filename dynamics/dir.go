package dynamics

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/opterr"
)

// Check checks cfg's numbers and reference methods before any work:
// Windows ≥ 2 (or 0, Run's default), MaxK ≥ 1, HeadWindows ≥ 1 or −1 (no
// head labels). Errors are *opterr.Error, naming the options.
func (cfg RunConfig) Check() error {
	if cfg.Windows == 1 || cfg.Windows < 0 || cfg.MaxK < 1 || cfg.HeadWindows == 0 || cfg.HeadWindows < -1 {
		return opterr.New("dynamics", "%s ≥ 2, %s ≥ 1 and %s ≥ 1 (or -1) please", "Windows MaxK HeadWindows")
	}
	if len(cfg.Methods) == 0 {
		return nil
	}
	if err := cfg.Methods.Check(); err != nil {
		return opterr.New("dynamics", "%s: %v", "Methods", err)
	}
	return experiment.CheckTuning(cfg.Methods, cfg.Train)
}

// RunDir measures cfg.Run as Run does, keeping every measured snapshot in
// out's CheckpointFile (cfg.Checkpoint) so that an interrupted measurement
// started again resumes; then writes the outputs into out (Write, titled
// by label, else by the run directory's name) and removes the checkpoint.
// Before any work it refuses an out that holds outputs unless force
// (fsutil.ErrExists). An interruption's error says where the measured
// snapshots are kept.
func RunDir(ctx context.Context, cfg RunConfig, out, label string, force bool) (*Result, error) {
	if p := ExistingOutput(out); p != "" && !force {
		return nil, fmt.Errorf("%s: %w", p, fsutil.ErrExists)
	}
	cfg.Checkpoint = filepath.Join(out, CheckpointFile)
	res, err := Run(ctx, cfg)
	if err != nil {
		if _, serr := os.Stat(cfg.Checkpoint); ctx.Err() != nil && serr == nil {
			return nil, fmt.Errorf("interrupted (the snapshots measured so far are kept in %s: run the same command again to resume): %w", cfg.Checkpoint, err)
		}
		return nil, err
	}
	res.Label = label
	title := label
	if title == "" {
		title = filepath.Base(filepath.Clean(cfg.Run))
	}
	if err := res.Write(out, "Training dynamics: "+title, force); err != nil {
		return nil, err
	}
	return res, RemoveCheckpoint(cfg.Checkpoint)
}
