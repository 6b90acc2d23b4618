package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLockExclusive has goroutines contend for one lock: at most one holds
// it at any time and every one gets it in the end.
func TestLockExclusive(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.lock")
	var inside, maxInside, total atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := AcquireLock(context.Background(), path, LockConfig{Poll: time.Millisecond}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for {
				m := maxInside.Load()
				if n <= m || maxInside.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
			total.Add(1)
			inside.Add(-1)
			if err := c.Release(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if maxInside.Load() != 1 || total.Load() != 8 {
		t.Errorf("max holders at once %d, acquisitions %d (want 1, 8)", maxInside.Load(), total.Load())
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock left behind: %v", err)
	}
}

// TestLockStale checks which held locks are taken over: a dead process on
// this host, an earlier run of the same Slurm job, a lock without heartbeat
// for longer than Stale; and that a live holder is waited for.
func TestLockStale(t *testing.T) {
	dir := t.TempDir()
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	write := func(name string, o LockOwner, age time.Duration) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(o)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		os.Chtimes(p, mt, mt)
		return p
	}
	t.Setenv("SLURM_JOB_ID", "77")
	t.Setenv("SLURM_ARRAY_JOB_ID", "")
	t.Setenv("SLURM_RESTART_COUNT", "2")
	cfg := LockConfig{Stale: time.Hour, Poll: time.Millisecond}
	for _, tc := range []struct {
		name  string
		owner LockOwner
		age   time.Duration
		take  bool
	}{
		{"dead-pid", LockOwner{Token: "a", Host: host, PID: dead.Process.Pid}, 0, true},
		{"requeued", LockOwner{Token: "b", Host: "elsewhere", PID: 1, Job: "77", Restart: 1}, 0, true},
		{"no-heartbeat", LockOwner{Token: "c", Host: "elsewhere", PID: 1}, 2 * time.Hour, true},
		{"garbage-old", LockOwner{}, 2 * time.Hour, true},
		{"live-elsewhere", LockOwner{Token: "d", Host: "elsewhere", PID: 1}, time.Minute, false},
		{"live-here", LockOwner{Token: "e", Host: host, PID: os.Getpid()}, 0, false},
		{"same-job-same-restart", LockOwner{Token: "f", Host: "elsewhere", PID: 1, Job: "77", Restart: 2}, 0, false},
	} {
		p := write(tc.name+".lock", tc.owner, tc.age)
		ctx, cancel := context.WithCancel(context.Background())
		var waitedFor *LockOwner
		c, err := AcquireLock(ctx, p, cfg, func(o LockOwner) { waitedFor = &o; cancel() })
		cancel()
		if tc.take {
			if err != nil {
				t.Errorf("%s: not taken over: %v", tc.name, err)
				continue
			}
			o, _, _ := readLock(p)
			if o.Token == tc.owner.Token || o.PID != os.Getpid() || o.Job != "77" || o.Restart != 2 {
				t.Errorf("%s: lock now held by %+v", tc.name, o)
			}
			c.Release()
		} else {
			if !errors.Is(err, context.Canceled) || waitedFor == nil || waitedFor.Token != tc.owner.Token {
				t.Errorf("%s: want a wait for the holder, got %v (waited for %v)", tc.name, err, waitedFor)
			}
			if o, _, _ := readLock(p); o.Token != tc.owner.Token {
				t.Errorf("%s: live lock replaced by %+v", tc.name, o)
			}
		}
	}
}

// TestLockLost checks that a holder notices its lock taken by someone else.
func TestLockLost(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.lock")
	c, err := AcquireLock(context.Background(), p, LockConfig{Heartbeat: time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"token":"other","host":"x","pid":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Lost():
	case <-time.After(time.Minute):
		t.Fatal("the holder did not notice that its lock was replaced")
	}
	c.Release()
	if o, _, _ := readLock(p); o.Token != "other" {
		t.Errorf("Release removed someone else's lock")
	}
}
