//go:build linux

package kernels

import "syscall"

// osYield gives the thread's CPU to another runnable thread, if any
// (sched_yield): a spinning pool worker or caller must not keep a CPU from
// the helper it waits for, or from other processes, when the machine has
// more runnable threads than CPUs.
func osYield() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
