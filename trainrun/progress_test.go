package trainrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// progressSink records the progress reports of a run, with StopAt
// (events.Stopper).
type progressSink struct {
	mu    sync.Mutex
	calls []string
}

func (s *progressSink) add(c string) { s.mu.Lock(); s.calls = append(s.calls, c); s.mu.Unlock() }
func (s *progressSink) Progress(task string, done, total int) {
	s.add(fmt.Sprintf("progress %s %d/%d", task, done, total))
}
func (s *progressSink) StopAt(task string, done, total int) {
	s.add(fmt.Sprintf("stop %s %d/%d", task, done, total))
}
func (s *progressSink) Warn(string) {}
func (s *progressSink) Log(string)  {}

// TestInterruptedProgress: a run interrupted at step 5 of its total ends
// its progress task there (events.Stop: "5/T", not T/T), and a run that
// completes ends it at its total (issue 46: after Ctrl-C the bar showed
// 100% at step 234 of 400).
func TestInterruptedProgress(t *testing.T) {
	meta := testData(t, "0.25", "16")
	for _, interrupt := range []bool{true, false} {
		tr, ev := newTrainer(t, meta), &progressSink{}
		total := tr.TotalSteps()
		ctx, cancel := context.WithCancel(context.Background())
		r, err := Start(tr, Options{Dir: t.TempDir(), Meta: meta, Events: ev, Label: "train", OnStep: func(s int) {
			if s == 5 && interrupt {
				cancel()
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		err = r.Run(ctx)
		cancel()
		last := ev.calls[len(ev.calls)-1]
		want := fmt.Sprintf("progress train %d/%d", total, total)
		if interrupt {
			if !errors.As(err, new(*InterruptedError)) {
				t.Fatalf("interrupted run: %v", err)
			}
			want = fmt.Sprintf("stop train 5/%d", total)
		}
		if total <= 5 || last != want {
			t.Errorf("interrupted %v: the task ended with %q, want %q", interrupt, last, want)
		}
		for _, c := range ev.calls[:len(ev.calls)-1] {
			if strings.HasPrefix(c, "stop") || c == fmt.Sprintf("progress train %d/%d", total, total) {
				t.Errorf("interrupted %v: the task ended before the end of the run: %q", interrupt, c)
			}
		}
	}
}
