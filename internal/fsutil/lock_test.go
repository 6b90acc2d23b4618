package fsutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestTryLock: a second open file of a locked file cannot take the lock
// until the first is closed.
func TestTryLock(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly", "windows":
	default:
		t.Skipf("no file locks on %s", runtime.GOOS)
	}
	p := filepath.Join(t.TempDir(), "f")
	a, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("first lock: %v, %v", ok, err)
	}
	b, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if ok, err := TryLock(b); ok || err != nil {
		t.Fatalf("second lock while the first is held: %v, %v; want false, nil", ok, err)
	}
	a.Close()
	if ok, err := TryLock(b); !ok || err != nil {
		t.Fatalf("lock after the first is closed: %v, %v", ok, err)
	}
}
