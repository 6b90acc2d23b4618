//go:build !linux

package trainrun

import "os/exec"

// setParentDeathSignal is Linux only; elsewhere an engine outlives a
// killed vomc until it finishes or is stopped.
func setParentDeathSignal(*exec.Cmd) {}
