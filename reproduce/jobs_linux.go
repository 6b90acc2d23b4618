package reproduce

import (
	"os"
	"os/exec"
	"syscall"
)

// detach puts a stage process in a process group of its own, so that a
// Ctrl-C at the terminal reaches the vomc that started it and not the
// stage too: that vomc interrupts each stage once when its context is
// cancelled (a second interrupt would end the stage before its
// checkpoint). The stage is sent SIGTERM when the vomc that started it
// dies (a second Ctrl-C, SIGTERM, a crash), so that none is left running.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
}

// self is the path that runs this very executable, even where the file it
// was started from has since been replaced by a rebuild: stage processes
// must run the code whose key names the stages.
func self() (string, error) { return "/proc/self/exe", nil }
