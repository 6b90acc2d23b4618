//go:build !linux

package reproduce

import (
	"os"
	"os/exec"
)

// detach leaves a stage process in vomc's process group, where a Ctrl-C
// at the terminal interrupts it directly; cancelling the context does not
// interrupt it a second time (which would end it before its checkpoint),
// and it is killed if it has not stopped within the wait delay.
func detach(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return nil }
}

// self is the path of this executable.
func self() (string, error) { return os.Executable() }
