package events

import (
	"fmt"
	"slices"
	"testing"
)

// record is a Sink that records its progress calls; with stop it is a
// Stopper too.
type record struct {
	calls []string
	stop  bool
}

func (r *record) Progress(task string, done, total int) {
	r.calls = append(r.calls, fmt.Sprintf("progress %s %d/%d", task, done, total))
}
func (r *record) Warn(string) {}
func (r *record) Log(string)  {}

type stopper struct{ *record }

func (s stopper) StopAt(task string, done, total int) {
	s.calls = append(s.calls, fmt.Sprintf("stop %s %d/%d", task, done, total))
}

// TestStop: a task stopped before its total reaches a Stopper as such,
// through Prefix too; a Sink that is not one sees it end at the count it
// reached; a task at its total ends as Progress ends it.
func TestStop(t *testing.T) {
	plain, st := &record{}, stopper{&record{}}
	for _, c := range []struct {
		s         Sink
		done, tot int
		rec       *record
		want      string
	}{
		{st, 234, 400, st.record, "stop train 234/400"},
		{Prefix(st, "tf"), 234, 400, st.record, "stop tf train 234/400"},
		{st, 400, 400, st.record, "progress train 400/400"},
		{plain, 234, 400, plain, "progress train 234/234"},
		{Prefix(plain, "tf"), 234, 400, plain, "progress tf train 234/234"},
	} {
		Stop(c.s, "train", c.done, c.tot)
		if got := c.rec.calls[len(c.rec.calls)-1]; got != c.want {
			t.Errorf("Stop(%T, %d, %d): %q, want %q", c.s, c.done, c.tot, got, c.want)
		}
	}
	if !slices.Contains(st.calls, "stop train 234/400") {
		t.Error("no stop recorded")
	}
}
