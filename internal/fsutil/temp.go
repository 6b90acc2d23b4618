package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Temporary files and directories of atomic writers are registered here
// while they exist, so that an interrupted command (SIGINT, SIGTERM) can
// remove them before it exits (HandleSignals), and their names carry the
// writer's process id (TempPattern), so that the temporaries of a run that
// was killed outright (SIGKILL, a crash) can be found and removed by the
// next run (SweepStale).

var temps struct {
	sync.Mutex
	next    int
	live    map[int]tempEntry
	closing bool // set by CleanupTemps: no new temporaries
}

type tempEntry struct {
	path string
	// dir: remove the whole tree; emptyDir: remove only if empty (a
	// parent directory a writer created).
	dir, emptyDir bool
}

func register(e tempEntry) (done func()) {
	// Callers hold temps.Mutex.
	if temps.live == nil {
		temps.live = map[int]tempEntry{}
	}
	id := temps.next
	temps.next++
	temps.live[id] = e
	return func() {
		temps.Lock()
		delete(temps.live, id)
		temps.Unlock()
	}
}

// errClosing is returned when a temporary is requested while the process
// is being interrupted.
var errClosing = errors.New("interrupted")

// TrackTemp registers path, a temporary file or directory that the caller
// created and will rename or remove itself, for removal by CleanupTemps
// (and therefore by the signal handler of HandleSignals). Call done once
// the temporary has been renamed into place or removed. Writers outside
// this package (e.g. checkpoint writers) use it to take part in the
// interrupt clean-up; prefer CreateTemp and MkdirTemp, which create and
// register in one step so that no signal can fall in between.
func TrackTemp(path string) (done func()) {
	temps.Lock()
	defer temps.Unlock()
	return register(tempEntry{path: path, dir: isDir(path)})
}

func isDir(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.IsDir()
}

// TempPattern returns the name pattern (for os.CreateTemp / os.MkdirTemp)
// of a temporary for the target base name: "." + base + ".tmp-PID-*". The
// process id lets SweepStale tell a dead run's temporaries from a live
// one's.
func TempPattern(base string) string {
	return "." + base + ".tmp-" + strconv.Itoa(os.Getpid()) + "-*"
}

// CreateTemp creates a temporary file for the target path in its
// directory (named by TempPattern) and registers it (see TrackTemp).
func CreateTemp(path string) (f *os.File, done func(), err error) {
	temps.Lock()
	defer temps.Unlock()
	if temps.closing {
		return nil, nil, errClosing
	}
	f, err = os.CreateTemp(filepath.Dir(path), TempPattern(filepath.Base(path)))
	if err != nil {
		return nil, nil, err
	}
	return f, register(tempEntry{path: f.Name()}), nil
}

// MkdirTemp creates a temporary directory for the target directory path
// next to it (named by TempPattern) and registers it: CleanupTemps removes
// it with everything in it.
func MkdirTemp(path string) (dir string, done func(), err error) {
	temps.Lock()
	defer temps.Unlock()
	if temps.closing {
		return "", nil, errClosing
	}
	dir, err = os.MkdirTemp(filepath.Dir(path), TempPattern(filepath.Base(path)))
	if err != nil {
		return "", nil, err
	}
	return dir, register(tempEntry{path: dir, dir: true}), nil
}

// MkdirAll creates dir and any missing parents like os.MkdirAll and
// returns undo, which removes the directories this call created (deepest
// first, each only if it is still empty). The created directories are
// registered, so an interrupt removes them too (when empty); keep calls
// undo (on success) to drop that registration and leave them in place.
func MkdirAll(dir string) (undo, keep func(), err error) {
	var created []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			break
		}
		created = append(created, d)
		if p := filepath.Dir(d); p == d {
			break
		}
	}
	temps.Lock()
	var dones []func()
	for i := len(created) - 1; i >= 0; i-- {
		dones = append(dones, register(tempEntry{path: created[i], emptyDir: true}))
	}
	temps.Unlock()
	keep = func() {
		for _, d := range dones {
			d()
		}
	}
	undo = func() {
		keep()
		for _, d := range created { // deepest first
			os.Remove(d)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		undo()
		return nil, nil, err
	}
	return undo, keep, nil
}

// CleanupTemps removes every registered temporary (files, temporary
// directories with their contents, then created parent directories that
// are empty). The signal handler runs it before exiting (and then refuses
// new temporaries); a command's caller runs it after the command returns.
func CleanupTemps() { cleanup(false) }

func cleanup(closing bool) {
	temps.Lock()
	defer temps.Unlock()
	if closing {
		temps.closing = true
	}
	ids := make([]int, 0, len(temps.live))
	for id := range temps.live {
		ids = append(ids, id)
	}
	// Newest first: temporaries inside created directories go before
	// the directories.
	sort.Sort(sort.Reverse(sort.IntSlice(ids)))
	for _, id := range ids {
		e := temps.live[id]
		switch {
		case e.emptyDir:
			os.Remove(e.path)
		case e.dir:
			removeDirRacing(e.path)
		default:
			os.Remove(e.path)
		}
		delete(temps.live, id)
	}
}

// removeDirRacing removes the directory tree at path while another
// goroutine may still be writing into it (an interrupt's cleanup runs
// beside the interrupted work): a file created between RemoveAll's
// listing and its final rmdir makes that fail, so it tries again, a few
// times, until the directory is gone.
func removeDirRacing(path string) {
	for range 20 {
		if err := os.RemoveAll(path); err == nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// Interrupted reports the signal HandleSignals received, or nil.
func Interrupted() os.Signal {
	sig.Lock()
	defer sig.Unlock()
	return sig.got
}

var sig struct {
	sync.Mutex
	got os.Signal
}

// ExitCode is the conventional exit status of a process ended by signal s:
// 128 + its number (130 for SIGINT, 143 for SIGTERM).
func ExitCode(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// HandleSignals installs the interrupt handler of a command. On SIGTERM,
// or on SIGINT when graceful is false, or on a second SIGINT, it removes
// every registered temporary (CleanupTemps), prints a note to w and exits
// with ExitCode. With graceful true a first SIGINT is only recorded
// (Interrupted) and left to the command, which handles it itself (e.g.
// through signal.NotifyContext) and returns; its caller then runs
// CleanupTemps. stop uninstalls the handler.
func HandleSignals(graceful bool, w io.Writer) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case s := <-ch:
				if first := recordSignal(s); graceful && first && s == os.Interrupt {
					continue
				}
				cleanup(true)
				fmt.Fprintf(w, "vomc: interrupted (%v); temporary files removed\n", s)
				os.Exit(ExitCode(s))
			}
		}
	}()
	return func() {
		// After signal.Stop no signal is sent to ch, and one sent before
		// is in its buffer or was taken by the goroutine: record what is
		// left, so that a command that returned on its own context's
		// cancellation is not reported as a plain failure because this
		// goroutine had not yet run.
		signal.Stop(ch)
		close(quit)
		<-done
		for {
			select {
			case s := <-ch:
				recordSignal(s)
			default:
				return
			}
		}
	}
}

// recordSignal records s as the signal received (Interrupted) unless one
// was recorded before; it reports whether s is the first.
func recordSignal(s os.Signal) bool {
	sig.Lock()
	defer sig.Unlock()
	first := sig.got == nil
	if first {
		sig.got = s
	}
	return first
}

// staleRE matches the temporaries of TempPattern: ".BASE.tmp-PID-RANDOM".
var staleRE = regexp.MustCompile(`^\..+\.tmp-([0-9]+)-[0-9]+$`)

// SweepStale looks in dir for temporaries left by runs that were killed
// before they could clean up (named by TempPattern with the process id of
// a process that no longer exists) and removes them; it returns the paths
// it removed. Temporaries of live processes are left alone. A missing dir
// is not an error.
func SweepStale(dir string) (removed []string, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	for _, e := range ents {
		m := staleRE.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || ProcessAlive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(p); err != nil {
			return removed, fmt.Errorf("removing the stale temporary %s: %w", p, err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}
