package reproduce

import (
	"io"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/progress"
)

// stageSink is what a stage hands the libraries it calls (their options'
// Events): a progress bar per task (progress.Tasks), warnings and log
// lines, all on the stage's log w.
type stageSink struct {
	*progress.Tasks
	lines events.Sink
	noLog bool // log lines are dropped (stageProgress)
}

var _ events.Detailer = (*stageSink)(nil)

func newStageSink(w io.Writer) *stageSink {
	return &stageSink{Tasks: progress.NewTasks(w), lines: events.Writer(w)}
}

// stageProgress is newStageSink without the log lines: for a training
// stage, whose log says where it resumes itself (trainJob's OnOpen).
func stageProgress(w io.Writer) *stageSink {
	s := newStageSink(w)
	s.noLog = true
	return s
}

func (s *stageSink) Warn(msg string) { s.lines.Warn(msg) }

func (s *stageSink) Log(msg string) {
	if !s.noLog {
		s.lines.Log(msg)
	}
}
