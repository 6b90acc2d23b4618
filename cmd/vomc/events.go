package main

import (
	"io"
	"os"
	"sync"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/progress"
	"github.com/vomc/vomc/internal/sysmem"
)

// sink shows what the libraries report (events.Sink) the one way every
// command does: a progress bar per task on standard error (progress.Tasks,
// each shown after 2 s; a training run's loss beside its bar), warnings on
// standard error and log lines on log, each as it is on a line of its own.
// Close ends the bars left open.
type sink struct {
	*progress.Tasks
	mu        sync.Mutex
	log, warn io.Writer
}

var _ events.Detailer = (*sink)(nil)

// newSink returns the sink of a command whose log lines go to log
// (standard output for most commands). It takes os.Stderr as it is now.
func newSink(log io.Writer) *sink {
	return &sink{Tasks: progress.NewTasks(os.Stderr), log: log, warn: os.Stderr}
}

func (s *sink) Warn(msg string) { s.line(s.warn, msg) }
func (s *sink) Log(msg string)  { s.line(s.log, msg) }

func (s *sink) line(w io.Writer, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	io.WriteString(w, msg+"\n")
}

// memAvailable is sysmem.Available, replaceable by tests.
var memAvailable = sysmem.Available

// memoryLimit is the memory limit a command hands down to the libraries
// (their options' MemoryLimit; 0: unknown, no check): the memory available
// when it starts.
func memoryLimit() int64 { return max(memAvailable(), 0) }

// checkMemory refuses work whose estimated peak memory est (bytes) exceeds
// the available memory, naming what needs it and both numbers
// (sysmem.Limit).
func checkMemory(what string, est int64) error { return sysmem.Limit(what, est, memoryLimit()) }

func fmtBytes(b int64) string { return sysmem.Bytes(b) }
