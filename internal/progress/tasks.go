package progress

import (
	"io"
	"sync"
	"time"
)

// Tasks draws one Bar per task on a writer, for the Progress(task, done,
// total) reports of vomc's libraries (events.Sink): a task's bar starts at
// its first report (silent for its first 2 s, DelayStart) and ends when
// done == total. It is safe for concurrent use; a nil *Tasks draws
// nothing.
type Tasks struct {
	mu    sync.Mutex
	w     io.Writer
	bars  map[string]*Bar
	delay time.Duration // each bar's DelayStart
}

// NewTasks returns Tasks drawing on w (nil means discard).
func NewTasks(w io.Writer) *Tasks {
	return &Tasks{w: w, bars: map[string]*Bar{}, delay: 2 * time.Second}
}

// Progress records that done of total units of task are complete, and
// ends the task's bar when done == total.
func (t *Tasks) Progress(task string, done, total int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.bars[task]
	if b == nil {
		b = New(t.w, task, total).DelayStart(t.delay)
		t.bars[task] = b
	}
	b.Update(done, total)
	if done == total {
		b.Done()
		delete(t.bars, task)
	}
}

// StopAt ends the bar of task at done of total, as it is (a task stopped
// before its total: the bar does not show 100%).
func (t *Tasks) StopAt(task string, done, total int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.bars[task]
	if b == nil {
		b = New(t.w, task, total).DelayStart(t.delay)
	}
	b.Update(done, total)
	b.Done()
	delete(t.bars, task)
}

// Detail shows note after the bar of task (Bar.SetExtra), if it has one.
func (t *Tasks) Detail(task, note string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bars[task].SetExtra(note)
}

// Close ends the bars of the tasks that have not ended.
func (t *Tasks) Close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for task, b := range t.bars {
		b.Done()
		delete(t.bars, task)
	}
}
