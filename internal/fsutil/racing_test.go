package fsutil

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRemoveDirRacing removes a directory while another goroutine keeps
// writing files into it (as an interrupted command's work does while the
// interrupt's cleanup runs): the directory must end up gone.
func TestRemoveDirRacing(t *testing.T) {
	for trial := range 20 {
		dir := filepath.Join(t.TempDir(), "tmp")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		started, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			for i := range 200 {
				if os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), make([]byte, 4096), 0o644) != nil {
					return // the directory is gone
				}
				if i == 2 {
					close(started)
				}
				time.Sleep(50 * time.Microsecond)
			}
		}()
		<-started
		removeDirRacing(dir)
		<-stopped
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("trial %d: %s is still there", trial, dir)
		}
	}
}
