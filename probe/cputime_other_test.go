//go:build !unix

package probe

import "time"

// cpuTime is unavailable: 0 (the per-CPU-second metrics are then omitted).
func cpuTime() time.Duration { return 0 }
