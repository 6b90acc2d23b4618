package progress_test

import (
	"os"

	"github.com/vomc/vomc/internal/progress"
)

func Example() {
	// On a terminal the line is redrawn in place (≤ 10 times/s); in a log
	// file a line is written every 10% or 5 s.
	bar := progress.New(os.Stderr, "eval", 8192)
	defer bar.Done()
	for range 8192 {
		// … evaluate one window …
		bar.Add(1)
	}
	bar.SetExtra("loss=0.93")
}

func ExampleBar_Update() {
	// Update matches the (done, total) callback of eval.Config.Progress.
	bar := progress.New(os.Stderr, "windows", 0)
	var progressFn func(done, total int) = bar.Update
	progressFn(10, 100)
	bar.Done()
}
