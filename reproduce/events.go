package reproduce

import "github.com/vomc/vomc/events"

// quiet is a sink without the log lines: a training stage hands it to the
// training driver, whose log lines (where it resumes) the stage writes
// itself (trainJob's OnOpen).
type quiet struct{ events.Sink }

func (quiet) Log(string) {}

// Detail passes the note on (the loss beside the training bar).
func (q quiet) Detail(task, note string) { events.Detail(q.Sink, task, note) }

// StopAt passes a stopped task on (a training run interrupted or stopped
// early).
func (q quiet) StopAt(task string, done, total int) { events.Stop(q.Sink, task, done, total) }
