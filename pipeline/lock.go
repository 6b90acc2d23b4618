package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/vomc/vomc/internal/fsutil"
)

// LockConfig sets how stage claims are taken, kept and judged stale.
//
// A stage is claimed by creating <root>/<name>-<hash>.lock atomically
// (a hard link of a fully written temporary file, which fails when the lock
// exists — atomic on local file systems and on NFS v3+, Lustre and GPFS).
// The lock records a random token, the host, the PID and the Slurm job
// (SLURM_JOB_ID, or SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID, with
// SLURM_RESTART_COUNT). While the stage runs, its holder touches the lock's
// modification time every Heartbeat. Another process takes a lock over when
// its holder is certainly gone: the same host and a PID that no longer
// exists, or the same Slurm job at a lower restart count (a requeued task),
// or a modification time older than Stale (a failed node). Stale must
// exceed the clock skew between the nodes and the file server plus a few
// heartbeats.
type LockConfig struct {
	// Stale is the age of the lock's modification time after which its
	// holder is taken to be dead (default 5 minutes).
	Stale time.Duration
	// Heartbeat is the interval of the holder's touches (default Stale/10).
	Heartbeat time.Duration
	// Poll is the interval at which a waiting process looks at a lock held
	// by someone else (default 2 s).
	Poll time.Duration
}

func (c LockConfig) withDefaults() LockConfig {
	if c.Stale <= 0 {
		c.Stale = 5 * time.Minute
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = c.Stale / 10
	}
	if c.Poll <= 0 {
		c.Poll = 2 * time.Second
	}
	return c
}

// LockOwner is the content of a lock file: who holds the claim.
type LockOwner struct {
	Token   string    `json:"token"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Job     string    `json:"slurm_job,omitempty"`
	Restart int       `json:"slurm_restart,omitempty"`
	Since   time.Time `json:"since"`
}

func (o LockOwner) String() string {
	s := fmt.Sprintf("host %s pid %d", o.Host, o.PID)
	if o.Job != "" {
		s += fmt.Sprintf(" slurm job %s (restart %d)", o.Job, o.Restart)
	}
	return s
}

// currentOwner describes this process with a fresh token.
func currentOwner() LockOwner {
	host, _ := os.Hostname()
	var b [8]byte
	_, _ = rand.Read(b[:])
	o := LockOwner{Token: hex.EncodeToString(b[:]), Host: host, PID: os.Getpid(), Since: time.Now().UTC()}
	if id, task := os.Getenv("SLURM_ARRAY_JOB_ID"), os.Getenv("SLURM_ARRAY_TASK_ID"); id != "" && task != "" {
		o.Job = id + "_" + task
	} else {
		o.Job = os.Getenv("SLURM_JOB_ID")
	}
	o.Restart, _ = strconv.Atoi(os.Getenv("SLURM_RESTART_COUNT"))
	return o
}

// Claim is a held stage lock. Its heartbeat runs until Release; if the lock
// is found taken over (or removed) by someone else, Lost is closed.
type Claim struct {
	path  string
	owner LockOwner
	stop  chan struct{}
	done  chan struct{}
	lost  chan struct{}
	once  sync.Once
}

// Lost is closed when the claim was found to belong to someone else.
func (c *Claim) Lost() <-chan struct{} { return c.lost }

// Release stops the heartbeat and removes the lock if it is still ours.
func (c *Claim) Release() error {
	var err error
	c.once.Do(func() {
		close(c.stop)
		<-c.done
		if o, _, rerr := readLock(c.path); rerr == nil && o.Token == c.owner.Token {
			err = os.Remove(c.path)
		}
	})
	return err
}

// readLock reads a lock file's owner and its modification time. A lock
// that exists but does not parse returns ok owner fields empty and no error.
func readLock(path string) (LockOwner, time.Time, error) {
	var o LockOwner
	st, err := os.Stat(path)
	if err != nil {
		return o, time.Time{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return o, time.Time{}, err
	}
	_ = json.Unmarshal(b, &o)
	return o, st.ModTime(), nil
}

// staleReason says why a lock held by o (modified at mtime) may be taken
// over by me, or "" when it may not.
func staleReason(o, me LockOwner, mtime time.Time, stale time.Duration) string {
	switch {
	case o.Host != "" && o.Host == me.Host && o.PID > 0 && !fsutil.ProcessAlive(o.PID):
		return fmt.Sprintf("its process %d on this host is gone", o.PID)
	case o.Job != "" && o.Job == me.Job && o.Restart < me.Restart:
		return fmt.Sprintf("it belongs to an earlier run (restart %d) of this Slurm job", o.Restart)
	case time.Since(mtime) > stale:
		return fmt.Sprintf("no heartbeat for %s", time.Since(mtime).Round(time.Second))
	}
	return ""
}

// tryLink creates path with o's content atomically; it reports false (and
// no error) when path exists.
func tryLink(path string, o LockOwner) (bool, error) {
	b, _ := json.Marshal(o)
	err := fsutil.WriteBytes(path, false, append(b, '\n'))
	if errors.Is(err, fsutil.ErrExists) {
		return false, nil
	}
	return err == nil, err
}

// breakStale removes the lock at path if it still carries token, under a
// short-lived break lock so that two processes judging the same stale lock
// cannot remove a fresh one.
func breakStale(path, token string, stale time.Duration) error {
	brk := path + ".break"
	f, err := os.OpenFile(brk, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Someone else is breaking it; a break lock older than Stale
			// belongs to a breaker that died (breaking takes milliseconds).
			if st, serr := os.Stat(brk); serr == nil && time.Since(st.ModTime()) > stale {
				_ = os.Remove(brk)
			}
			return nil
		}
		return err
	}
	f.Close()
	defer os.Remove(brk)
	o, _, err := readLock(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.Token == token {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// AcquireLock claims the lock file at path, waiting while a live holder has
// it and taking it over when its holder is gone (see LockConfig). wait is
// called once, with the holder, when the lock is found held. The returned
// claim's heartbeat runs until Release.
func AcquireLock(ctx context.Context, path string, cfg LockConfig, wait func(LockOwner)) (*Claim, error) {
	cfg = cfg.withDefaults()
	me := currentOwner()
	waited := false
	for {
		ok, err := tryLink(path, me)
		if err != nil {
			return nil, fmt.Errorf("pipeline: lock %s: %w", path, err)
		}
		if ok {
			c := &Claim{path: path, owner: me, stop: make(chan struct{}), done: make(chan struct{}), lost: make(chan struct{})}
			go c.heartbeat(cfg.Heartbeat)
			return c, nil
		}
		o, mtime, err := readLock(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("pipeline: lock %s: %w", path, err)
		}
		if why := staleReason(o, me, mtime, cfg.Stale); why != "" {
			if err := breakStale(path, o.Token, cfg.Stale); err != nil {
				return nil, fmt.Errorf("pipeline: taking over %s (%s): %w", path, why, err)
			}
			continue
		}
		if !waited && wait != nil {
			wait(o)
		}
		waited = true
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(cfg.Poll):
		}
	}
}

func (c *Claim) heartbeat(every time.Duration) {
	defer close(c.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			o, _, err := readLock(c.path)
			if (err == nil && o.Token != c.owner.Token) || errors.Is(err, fs.ErrNotExist) {
				close(c.lost)
				return
			}
			now := time.Now()
			_ = os.Chtimes(c.path, now, now)
		}
	}
}

// describeLock is a one-line account of the lock at path ("" if none),
// saying when it would be taken over as stale.
func describeLock(path string, cfg LockConfig) string {
	o, mtime, err := readLock(path)
	if err != nil {
		return ""
	}
	note := fmt.Sprintf("claimed by %s, heartbeat %s ago", o, time.Since(mtime).Round(time.Second))
	if why := staleReason(o, currentOwner(), mtime, cfg.withDefaults().Stale); why != "" {
		note += "; stale: " + why + ", the next run takes it over"
	}
	return note
}
