//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes an exclusive advisory lock on the open file f without
// waiting: false when another process (or another open file of this one)
// holds it. The lock is released when f is closed or the process ends,
// however it ends. Locks are advisory (flock here, LockFileEx on
// Windows); on other systems TryLock always succeeds and locks nothing.
func TryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
