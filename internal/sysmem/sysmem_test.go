package sysmem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMemAvailable(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "meminfo")
	os.WriteFile(p, []byte("MemTotal:       16000000 kB\nMemFree: 1 kB\nMemAvailable:    2048 kB\n"), 0o644)
	if v, err := memAvailable(p); err != nil || v != 2048*1024 {
		t.Errorf("got %d, %v", v, err)
	}
	os.WriteFile(p, []byte("MemTotal: 1 kB\n"), 0o644)
	if _, err := memAvailable(p); err == nil {
		t.Error("no MemAvailable accepted")
	}
	os.WriteFile(filepath.Join(dir, "memory.max"), []byte("max\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "memory.current"), []byte("100\n"), 0o644)
	if _, err := cgroupRoom(dir, "memory.max"); err == nil {
		t.Error("an unlimited cgroup gave a limit")
	}
	os.WriteFile(filepath.Join(dir, "memory.max"), []byte("1000\n"), 0o644)
	if v, err := cgroupRoom(dir, "memory.max"); err != nil || v != 900 {
		t.Errorf("cgroup room %d, %v", v, err)
	}
}

func TestCheck(t *testing.T) {
	if err := Check(1<<20, "a small thing"); err != nil {
		t.Errorf("1 MiB refused: %v", err)
	}
	err := Check(1<<60, "a huge thing")
	if err == nil || !strings.Contains(err.Error(), "a huge thing needs ≈ 1.07e+09 GiB") {
		t.Errorf("error %v", err)
	}
}
