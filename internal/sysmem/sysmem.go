// Package sysmem tells how much memory the process may still use, so that
// commands can refuse work that cannot fit (with the estimate) instead of
// dying of an out-of-memory kill or a runtime fatal error.
package sysmem

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Available returns the bytes of memory available to the process: the
// kernel's MemAvailable (/proc/meminfo) capped by the cgroup v2 limit
// (memory.max − memory.current), and ok = false where neither can be
// read (non-Linux systems), where callers skip the check.
func Available() (bytes int64, ok bool) {
	avail := int64(math.MaxInt64)
	if v, err := memAvailable("/proc/meminfo"); err == nil {
		avail, ok = v, true
	}
	if v, err := cgroupRoom("/sys/fs/cgroup"); err == nil {
		avail, ok = min(avail, v), true
	}
	return avail, ok
}

// memAvailable reads MemAvailable (kB) from a meminfo file.
func memAvailable(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && fs[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fs[1], 10, 64)
			if err != nil || kb < 0 || kb > math.MaxInt64/1024 {
				return 0, fmt.Errorf("sysmem: MemAvailable %q", fs[1])
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("sysmem: no MemAvailable in %s", path)
}

// cgroupRoom is memory.max − memory.current of the cgroup v2 directory
// dir (an error when there is no limit).
func cgroupRoom(dir string) (int64, error) {
	read := func(name string) (int64, error) {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	}
	lim, err := read("memory.max") // "max" (no limit) fails to parse
	if err != nil {
		return 0, err
	}
	cur, err := read("memory.current")
	if err != nil {
		return 0, err
	}
	return max(lim-cur, 0), nil
}

// GiB formats a byte count in GiB with three significant digits.
func GiB(b float64) string { return strconv.FormatFloat(b/(1<<30), 'g', 3, 64) + " GiB" }

// Check returns an error when need bytes (an estimate, so a float that
// cannot overflow) exceed the memory available; what describes the work
// ("training L=2, E=128, batch 512 …"). Where the available memory cannot
// be read, only needs beyond 2^50 bytes (1 PiB) are refused.
func Check(need float64, what string) error {
	avail, ok := Available()
	if !ok {
		avail = 1 << 50
	}
	if need > float64(avail) || math.IsNaN(need) {
		return fmt.Errorf("%s needs ≈ %s of memory, more than the %s available", what, GiB(need), GiB(float64(avail)))
	}
	return nil
}
