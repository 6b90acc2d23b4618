//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package fsutil

import "os"

// TryLock cannot lock files on this system: it always succeeds.
func TryLock(*os.File) (bool, error) { return true, nil }
