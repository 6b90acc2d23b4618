package trainrun

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal has the engine receive SIGTERM (it saves its
// checkpoint and exits) when vomc dies, e.g. killed by SIGKILL.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
