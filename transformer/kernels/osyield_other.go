//go:build !linux

package kernels

import "runtime"

// osYield yields the processor (on Linux, the thread's CPU: sched_yield).
func osYield() { runtime.Gosched() }
