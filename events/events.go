// Package events is how vomc's libraries report while they work: progress,
// warnings and log lines go to one Sink that the caller hands down (a
// command's terminal, a pipeline stage's log file, a test's buffer),
// instead of a writer per kind of message in every option struct. A
// library never prints on its own; what it returns as data (results,
// summaries, statistics) stays in its return values and data callbacks.
//
// An option struct carries the sink as a field Events (nil: discard; use
// Or). Decisions such as the memory limit are values of the options, not
// hooks.
package events

import (
	"bytes"
	"io"
	"sync"
)

// Sink receives a library's progress, warnings and log lines. Its methods
// are safe for concurrent use: workers may report from many goroutines.
type Sink interface {
	// Progress says that done of total units of task are complete; the
	// units are whatever the task counts (windows, trees, steps,
	// snapshots). done == total ends the task; a task stopped early ends
	// with Stop, at the count it reached.
	Progress(task string, done, total int)
	// Warn reports something the user should act on or know about, as
	// the user reads it ("warning: …", "vomc: removed …"), one or more
	// lines without the final newline.
	Warn(msg string)
	// Log reports what the work did or found (what was read, the files
	// written, a report's lines), one or more lines without the final
	// newline.
	Log(msg string)
}

// Detailer is a Sink that can show a short note next to a task's
// progress (a training run's loss); Detail hands it one.
type Detailer interface {
	Detail(task, note string)
}

// Detail shows note next to the progress of task when s is a Detailer,
// and does nothing otherwise.
func Detail(s Sink, task, note string) {
	if d, ok := s.(Detailer); ok {
		d.Detail(task, note)
	}
}

// Stopper is a Sink that can end a task before its total (interrupted,
// stopped early): StopAt ends it at done of total, as it is.
type Stopper interface {
	StopAt(task string, done, total int)
}

// Stop ends task at done of total units: at done == total as Progress
// does, else with StopAt when s is a Stopper, else with Progress(task,
// done, done) (a Sink that cannot show a stopped task ends it at the
// count it reached).
func Stop(s Sink, task string, done, total int) {
	if st, ok := s.(Stopper); ok && done < total {
		st.StopAt(task, done, total)
		return
	}
	s.Progress(task, done, min(done, total))
}

// Discard is a Sink that drops everything.
var Discard Sink = discard{}

type discard struct{}

func (discard) Progress(string, int, int) {}
func (discard) Warn(string)               {}
func (discard) Log(string)                {}

// Or returns s, or Discard when s is nil.
func Or(s Sink) Sink {
	if s == nil {
		return Discard
	}
	return s
}

// Writer returns a Sink that writes every warning and log line, as it
// is, on a line of its own to w, and ignores progress: for tests and
// callers that keep a plain log.
func Writer(w io.Writer) Sink { return &writer{w: w} }

type writer struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *writer) Progress(string, int, int) {}
func (w *writer) Warn(msg string)           { w.Log(msg) }
func (w *writer) Log(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	io.WriteString(w.w, msg+"\n")
}

// WarnWriter returns a writer that hands every line written to it,
// without its newline, to s.Warn: for helpers that report on an
// io.Writer. A line is handed on once its newline is written.
func WarnWriter(s Sink) io.Writer { return &lines{each: Or(s).Warn} }

// LogWriter is WarnWriter for s.Log.
func LogWriter(s Sink) io.Writer { return &lines{each: Or(s).Log} }

type lines struct {
	mu   sync.Mutex
	each func(string)
	part []byte
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.each(string(l.part[:i]))
		l.part = l.part[i+1:]
	}
	return len(p), nil
}

// ProgressFunc returns a function that reports done of total units of task
// to s: the progress callback of a lower-level function (dataset.Build,
// eval.Config.Progress).
func ProgressFunc(s Sink, task string) func(done, total int) {
	s = Or(s)
	return func(done, total int) { s.Progress(task, done, total) }
}

// Prefix returns a Sink that names every progress task of s label + " " +
// task ("evaluate windows"), for work done in one of several stages;
// warnings and log lines pass as they are.
func Prefix(s Sink, label string) Sink { return prefix{Or(s), label + " "} }

type prefix struct {
	s     Sink
	label string
}

func (p prefix) Progress(task string, done, total int) { p.s.Progress(p.label+task, done, total) }
func (p prefix) Warn(msg string)                       { p.s.Warn(msg) }
func (p prefix) Log(msg string)                        { p.s.Log(msg) }
func (p prefix) Detail(task, note string)              { Detail(p.s, p.label+task, note) }
func (p prefix) StopAt(task string, done, total int)   { Stop(p.s, p.label+task, done, total) }
