// Package sysmem tells how much memory the process may still use — the
// kernel's MemAvailable, lowered by a cgroup (v2 or v1) limit when one is
// set — so that commands can refuse work that cannot fit (with the
// estimate) instead of dying of an out-of-memory kill or a runtime fatal
// error.
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

// Base is the memory of a vomc process itself (runtime, code, buffers):
// every estimate of a command's peak memory adds it to the memory of the
// command's work, which the package doing that work estimates.
const Base = 24 << 20

// Available returns the bytes of memory this process can still allocate
// without swapping or being killed, or 0 when the system does not say
// (not Linux, /proc not mounted).
func Available() int64 {
	avail := int64(0)
	if v, err := memAvailable("/proc/meminfo"); err == nil {
		avail = v
	}
	for _, c := range [][2]string{
		{"/sys/fs/cgroup", "memory.max"},                   // v2
		{"/sys/fs/cgroup/memory", "memory.limit_in_bytes"}, // v1
	} {
		if v, err := cgroupRoom(c[0], c[1]); err == nil {
			if avail == 0 || v < avail {
				avail = max(v, 1)
			}
			break
		}
	}
	return avail
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

// cgroupRoom is the limit minus the current usage of the cgroup directory
// dir, whose limit file is limitName (memory.max for v2, where "max" means
// none; memory.limit_in_bytes for v1, where a huge value means none); an
// error when there is no limit.
func cgroupRoom(dir, limitName string) (int64, error) {
	read := func(name string) (int64, error) {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	}
	lim, err := read(limitName) // "max" (no limit) fails to parse
	if err != nil {
		return 0, err
	}
	if lim <= 0 || lim >= 1<<60 {
		return 0, fmt.Errorf("sysmem: no cgroup limit in %s", dir)
	}
	curName := "memory.current"
	if limitName == "memory.limit_in_bytes" {
		curName = "memory.usage_in_bytes"
	}
	cur, err := read(curName)
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
	avail := Available()
	if avail <= 0 {
		avail = 1 << 50
	}
	return CheckAvailable(need, avail, what, "memory")
}

// CheckAvailable is Check against avail bytes of the memory named kind
// ("memory", "cuda/NVIDIA H100 memory").
func CheckAvailable(need float64, avail int64, what, kind string) error {
	if need > float64(avail) || math.IsNaN(need) {
		return fmt.Errorf("%s needs ≈ %s of %s, more than the %s available", what, GiB(need), kind, GiB(float64(avail)))
	}
	return nil
}

// Limit refuses work whose estimated peak memory est (bytes) exceeds limit
// (bytes; 0: no limit, nothing is checked), with an error naming what
// needs it and both numbers. The limit is decided once, at the top (a
// command passes Available), and handed down to the libraries as a value
// (their options' MemoryLimit).
func Limit(what string, est, limit int64) error {
	if limit > 0 && est > limit {
		return fmt.Errorf("%s needs about %s of memory (estimate), but only %s is available", what, Bytes(est), Bytes(limit))
	}
	return nil
}

// Bytes formats a byte count in GiB (two decimals), MiB (one) or KiB.
func Bytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (b+1023)>>10)
}
