package pipeline

import (
	"bytes"
	"context"
	"fmt"

	"github.com/vomc/vomc/events"
)

// Parallel configures Runner.RunParallel: how many stages are computed at
// once, how the cores are divided among them, and how one stage is
// computed apart from the others.
type Parallel struct {
	// Jobs is the most stages computed at once (≥ 1).
	Jobs int
	// Threads are the cores divided among the stages computed at once
	// (≥ 1). Every stage gets at least one core of its own when it starts,
	// so no more than Threads stages run at once whatever Jobs says. The
	// one exception to the division is a training stage that every stage
	// left waits for (RunParallel).
	Threads int
	// Exec computes one stage, typically in a process of its own (for
	// instance by running the plan's RunOnly there), on job.Threads cores.
	// On success the stage must be done under the runner's Root: its done
	// marker written and valid for the current outputs of its inputs.
	// Exec is called from several goroutines at once.
	Exec func(ctx context.Context, job Job) error
}

// Job is one stage handed to Parallel.Exec.
type Job struct {
	Stage Stage
	// Index (1-based) and Total place the stage in the plan; Label is
	// "[k/n] name", as in the runner's progress lines.
	Index, Total int
	Label        string
	// Threads is the stage's share of Parallel.Threads.
	Threads int
	// Rerun is set when the stage is to be computed again although cached
	// (Runner.Rerun).
	Rerun bool
	// Events is the runner's Events (never nil), shared by the stages
	// computed at once.
	Events events.Sink
}

// RunParallel runs (or skips) the stages as Run does, but computes up to
// p.Jobs stages at once, each through p.Exec as soon as every stage it
// depends on is done, in plan order among those ready. Cores are shared
// out when a stage starts: the free cores divided evenly among the stages
// starting then (at least one each, the remainder to the earliest); a
// stage started alone while nothing else can run gets every free core.
// A process keeps its share to its end, so a long stage started beside a
// short one would keep a fraction of the machine long after the short one
// ended. So a training stage (KindTrain) that starts alone while every
// stage not yet started depends on it, directly or not, gets every core
// not held by running training stages: the cores of the other stages
// running (short ones, by kind) are over-committed until they end, and
// nothing else can start beside it meanwhile but stages that wait for it
// anyway. (Otherwise the usual shares: two trainings on one core each
// finish sooner than one after the other on two.)
// Outputs do not depend on the schedule as long as each stage's outputs
// do not depend on its number of threads. After a failure no further stage is started; the stages
// running are waited for, and the first failure is returned. With
// p.Jobs ≤ 1, RunParallel is Run.
func (r *Runner) RunParallel(ctx context.Context, stages []Stage, p Parallel) error {
	if p.Jobs <= 1 {
		return r.Run(ctx, stages)
	}
	if p.Threads < 1 || p.Exec == nil {
		return fmt.Errorf("pipeline: %d jobs need at least one thread (have %d) and an Exec", p.Jobs, p.Threads)
	}
	if r.Done == nil {
		r.Done = map[string]*Done{}
	}
	s := &schedule{r: r, stages: stages, p: p, events: events.Or(r.Events),
		hash: make([]string, len(stages)), dir: make([]string, len(stages)),
		started: make([]bool, len(stages)), finished: make(chan finished)}
	for i, st := range stages {
		var err error
		if s.hash[i], s.dir[i], err = r.stageDir(st); err != nil {
			return err
		}
	}
	return s.run(ctx)
}

// schedule is the state of one RunParallel.
type schedule struct {
	r         *Runner
	stages    []Stage
	p         Parallel
	events    events.Sink
	hash, dir []string
	started   []bool
	running   int // stages being computed
	used      int // their threads
	usedTrain int // of which the training stages' (KindTrain)
	failed    error
	finished  chan finished
}

// finished reports one Exec's return.
type finished struct {
	i, threads int
	err        error
}

func (s *schedule) run(ctx context.Context) error {
	for {
		if s.failed == nil && ctx.Err() == nil {
			s.start(ctx, s.ready())
		}
		if s.running == 0 {
			break
		}
		f := <-s.finished
		s.running--
		s.used -= f.threads
		if s.stages[f.i].Kind == KindTrain {
			s.usedTrain -= f.threads
		}
		s.done(f)
	}
	if s.failed != nil {
		return s.failed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, st := range s.stages {
		if !s.started[i] {
			return fmt.Errorf("pipeline: stage %s never became ready (its dependencies must come before it in the plan)", st.Name)
		}
	}
	return nil
}

// ready marks the ready stages that are cached as done (repeatedly, since
// that makes others ready) and returns the indices of the ready stages
// that must be computed, in plan order.
func (s *schedule) ready() []int {
	for {
		var compute []int
		skipped := false
		for i, st := range s.stages {
			if s.started[i] || !s.depsDone(st) {
				continue
			}
			if !s.r.rerun(st) && s.r.cached(st, s.hash[i], s.dir[i], s.label(i)) {
				s.started[i], skipped = true, true
				continue
			}
			compute = append(compute, i)
		}
		if !skipped {
			return compute
		}
	}
}

func (s *schedule) depsDone(st Stage) bool {
	for _, d := range st.Deps {
		if _, ok := s.r.Done[d]; !ok {
			return false
		}
	}
	return true
}

func (s *schedule) label(i int) string { return stageLabel(i+1, len(s.stages), s.stages[i].Name) }

// start starts as many of the ready stages as jobs and free cores allow,
// dividing the free cores evenly among them; a training stage that starts
// alone and that every stage left waits for takes the cores not held by
// training stages (RunParallel).
func (s *schedule) start(ctx context.Context, ready []int) {
	free := s.p.Threads - s.used
	n := max(0, min(len(ready), s.p.Jobs-s.running, free))
	for k := range n {
		i := ready[k]
		t := max(1, (free+n-k-1)/(n-k)) // the earlier in plan order get the remainder
		train := s.stages[i].Kind == KindTrain
		if train && n == 1 && s.awaitedByAll(i) {
			t = s.p.Threads - s.usedTrain
		}
		free -= t
		s.started[i] = true
		s.running++
		s.used += t
		if train {
			s.usedTrain += t
		}
		job := Job{Stage: s.stages[i], Index: i + 1, Total: len(s.stages), Label: s.label(i), Threads: t,
			Rerun: s.r.rerun(s.stages[i]), Events: s.events}
		s.r.logf("%s: started (%d thread%s, %d stage%s running)", job.Label, t, plural(t), s.running, plural(s.running))
		go func() { s.finished <- finished{i: i, threads: t, err: s.p.Exec(ctx, job)} }()
	}
}

// awaitedByAll reports whether every stage not yet started but i depends
// on stage i, directly or through others.
func (s *schedule) awaitedByAll(i int) bool {
	after := map[string]bool{s.stages[i].Name: true} // i and the stages that depend on it
	for j, st := range s.stages[i+1:] {              // a stage comes after its dependencies in the plan
		for _, d := range st.Deps {
			if after[d] {
				after[st.Name] = true
				break
			}
		}
		if !s.started[i+1+j] && !after[st.Name] {
			return false
		}
	}
	for j := range i {
		if !s.started[j] {
			return false // before i in the plan: cannot depend on it
		}
	}
	return true
}

// done records stage f.i as computed, or the first failure.
func (s *schedule) done(f finished) {
	st := s.stages[f.i]
	if f.err == nil {
		d, ok := s.r.valid(st, s.hash[f.i], s.dir[f.i])
		if ok {
			s.r.Done[st.Name] = d
			s.r.Ran = append(s.r.Ran, st.Name)
			return
		}
		f.err = fmt.Errorf("stage %s: computed, but %s holds no valid %s (was it computed under another hash: another configuration, version or code key?)", st.Name, s.dir[f.i], DoneFile)
	}
	if s.failed == nil {
		s.failed = f.err
		if s.running > 0 {
			s.r.logf("%s: failed; waiting for the %d stage%s still running", s.label(f.i), s.running, plural(s.running))
		}
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// LineWriter hands what is written to it on to Line one whole line at a
// time (without its newline), each prefixed with Prefix unless it already
// starts with Keep (for lines that carry their own label; empty: prefix
// every line). Flush hands on a last unterminated line. It remembers the
// last line, for an error message. It is not safe for concurrent use.
type LineWriter struct {
	Line         func(line string)
	Prefix, Keep string
	buf          []byte
	last         string
}

func (l *LineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.line(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

// line hands on one line (without its newline), dropping a terminal's
// carriage-return redraws but the last.
func (l *LineWriter) line(b []byte) {
	if j := bytes.LastIndexByte(bytes.TrimRight(b, "\r"), '\r'); j >= 0 {
		b = b[j+1:]
	}
	b = bytes.TrimRight(b, "\r")
	if len(b) == 0 {
		return
	}
	l.last = string(b)
	if l.Keep == "" || !bytes.HasPrefix(b, []byte(l.Keep)) {
		l.Line(l.Prefix + l.last)
	} else {
		l.Line(l.last)
	}
}

// Flush hands on the unterminated rest, if any, as a line.
func (l *LineWriter) Flush() {
	if len(l.buf) > 0 {
		l.line(l.buf)
		l.buf = nil
	}
}

// Last is the last non-empty line written.
func (l *LineWriter) Last() string { return l.last }
