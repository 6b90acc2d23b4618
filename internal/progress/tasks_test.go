package progress

import (
	"bytes"
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
