//go:build unix

package compress

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) this process has used: with
// GOMAXPROCS=1, a speed measure less sensitive to other loads on a shared
// machine than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
