//go:build unix

package trainrun

import (
	"os"
)

// interrupt asks the engine to stop: SIGINT, which it answers by saving its
// checkpoint.
func interrupt(p *os.Process) error { return p.Signal(os.Interrupt) }
