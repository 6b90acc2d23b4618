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

func TestLimit(t *testing.T) {
	if err := Limit("x", 1<<40, 0); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if err := Limit("x", 100<<20, 200<<20); err != nil {
		t.Errorf("within the limit: %v", err)
	}
	err := Limit("a tree", 3<<30, 50<<20)
	if err == nil || err.Error() != "a tree needs about 3.00 GiB of memory (estimate), but only 50.0 MiB is available" {
		t.Errorf("refusal: %v", err)
	}
	if s := Bytes(1500); s != "2 KiB" {
		t.Errorf("Bytes(1500) = %s", s)
	}
}
