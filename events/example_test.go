package events_test

import (
	"fmt"
	"os"

	"github.com/vomc/vomc/events"
)

// count reports the progress of a task over n windows, a warning and a
// log line, as a library does with its options' Events.
func count(ev events.Sink, n int) {
	ev = events.Or(ev)
	for i := range n {
		ev.Progress("windows", i+1, n)
	}
	ev.Warn("warning: 2 windows are shorter than the context")
	ev.Log(fmt.Sprintf("evaluated %d windows", n))
}

func Example() {
	count(nil, 3) // nil: everything is dropped
	count(events.Writer(os.Stdout), 3)
	// Output:
	// warning: 2 windows are shorter than the context
	// evaluated 3 windows
}

// recorder counts the progress reports it receives.
type recorder struct {
	events.Sink
	reports int
}

func (r *recorder) Progress(string, int, int) { r.reports++ }

func ExampleWarnWriter() {
	r := &recorder{Sink: events.Writer(os.Stdout)}
	w := events.WarnWriter(r)
	fmt.Fprint(w, "vomc: removed a.tmp")
	fmt.Fprint(w, ", a temporary\nvomc: removed b.tmp\n")
	count(r, 4)
	fmt.Println(r.reports, "progress reports")
	// Output:
	// vomc: removed a.tmp, a temporary
	// vomc: removed b.tmp
	// warning: 2 windows are shorter than the context
	// evaluated 4 windows
	// 4 progress reports
}

// tasks prints the task of every progress report.
type tasks struct{ events.Sink }

func (tasks) Progress(task string, done, total int) { fmt.Printf("%s %d/%d\n", task, done, total) }

func ExamplePrefix() {
	ev := events.Prefix(tasks{events.Discard}, "evaluate")
	report := events.ProgressFunc(ev, "windows") // a lower-level callback
	report(1, 2)
	report(2, 2)
	// Output:
	// evaluate windows 1/2
	// evaluate windows 2/2
}
