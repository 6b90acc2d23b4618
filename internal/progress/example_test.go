package progress_test

import (
	"os"
	"time"

	"github.com/vomc/vomc/internal/progress"
)

func Example() {
	// On a terminal the line is redrawn in place (≤ 10 times/s); in a log
	// file or a pipe, as here, a line is written every 10% or 5 s. The
	// clock is simulated (each window takes 2 ms) so that the output can
	// be checked; real use leaves out SetClock.
	clock := time.Unix(0, 0)
	bar := progress.New(os.Stdout, "eval", 8192).SetClock(func() time.Time { return clock })
	defer bar.Done()
	for range 8192 {
		// … evaluate one window …
		clock = clock.Add(2 * time.Millisecond)
		bar.Add(1)
	}
	bar.SetExtra("loss=0.93")
	// Output:
	// eval  10% [##>.....................] 820/8192  500/s  ETA 15s
	// eval  20% [####>...................] 1639/8192  500/s  ETA 13s
	// eval  30% [#######>................] 2458/8192  500/s  ETA 11s
	// eval  40% [#########>..............] 3277/8192  500/s  ETA 9.8s
	// eval  50% [############>...........] 4096/8192  500/s  ETA 8.2s
	// eval  60% [##############>.........] 4916/8192  500/s  ETA 6.6s
	// eval  70% [################>.......] 5735/8192  500/s  ETA 4.9s
	// eval  80% [###################>....] 6554/8192  500/s  ETA 3.3s
	// eval  90% [#####################>..] 7373/8192  500/s  ETA 1.6s
	// eval 100% [########################] 8192/8192  500/s  in 16s  loss=0.93
}

func ExampleBar_Update() {
	// Update matches the (done, total) callback of eval.Config.Progress.
	clock := time.Unix(0, 0)
	bar := progress.New(os.Stdout, "windows", 0).SetClock(func() time.Time { return clock })
	var progressFn func(done, total int) = bar.Update
	clock = clock.Add(2 * time.Second)
	progressFn(10, 100)
	bar.Done()
	// Output:
	// windows  10% [##>.....................] 10/100  5.00/s  ETA 18s
	// windows  10% [##>.....................] 10/100  5.00/s  in 2.0s
}
