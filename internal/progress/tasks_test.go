package progress

import (
	"bytes"
	"strings"
	"testing"
)

// TestTasks: a bar per task, ended at done == total or by Close; quick
// tasks print nothing (DelayStart).
func TestTasks(t *testing.T) {
	var buf bytes.Buffer
	ts := NewTasks(&buf)
	ts.Progress("a", 1, 3)
	ts.Progress("b", 1, 2)
	ts.Detail("a", "loss=1")
	ts.Progress("a", 3, 3)
	if len(ts.bars) != 1 || ts.bars["b"] == nil {
		t.Fatalf("open bars %v, want b only", ts.bars)
	}
	ts.Close()
	ts.Detail("b", "x") // no bar: nothing
	if len(ts.bars) != 0 || buf.Len() != 0 {
		t.Errorf("after Close: %d bars, printed %q", len(ts.bars), buf.String())
	}
	var nilTasks *Tasks
	nilTasks.Progress("a", 1, 2)
	nilTasks.Close()
}

// TestTasksStopAt: a task stopped before its total (Ctrl-C, early
// stopping) ends where it stopped — "234/400", not 100% — whether its bar
// was drawn before or not.
func TestTasksStopAt(t *testing.T) {
	for _, drawn := range []bool{true, false} {
		var buf bytes.Buffer
		ts := NewTasks(&buf)
		ts.delay = 0
		if drawn {
			ts.Progress("train", 233, 400)
		}
		ts.StopAt("train", 234, 400)
		out := buf.String()
		if !strings.Contains(out, " 58% [") || !strings.Contains(out, "234/400") || strings.Contains(out, "100%") || len(ts.bars) != 0 {
			t.Errorf("drawn %v: stopped at 234 of 400 printed %q (%d bars open)", drawn, out, len(ts.bars))
		}
	}
	var nilTasks *Tasks
	nilTasks.StopAt("a", 1, 2)
}
