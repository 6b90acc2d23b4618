//go:build unix

package probe

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) used so far by the process, so
// that benchmarks can report throughput per CPU-second, which is stable on
// a machine shared with other jobs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
