//go:build unix

package fsutil

import (
	"errors"
	"syscall"
)

// ProcessAlive reports whether a process with this id may exist on this
// host: false only when it certainly does not (or pid ≤ 0). It is the
// module's one process-alive check (stale temporaries here, stale stage
// locks in package pipeline).
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
