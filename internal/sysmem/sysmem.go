// Package sysmem tells how much memory a process may still use: the
// kernel's MemAvailable, lowered by a cgroup (v2 or v1) limit when one is
// set. vomc's commands compare their memory estimates with it before they
// allocate.
package sysmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Available returns the bytes of memory this process can still allocate
// without swapping or being killed, or 0 when the system does not say
// (not Linux, /proc not mounted).
func Available() int64 {
	avail := memAvailable()
	if lim := cgroupRoom(); lim > 0 && (avail == 0 || lim < avail) {
		avail = lim
	}
	return avail
}

// memAvailable reads MemAvailable from /proc/meminfo.
func memAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			fields := strings.Fields(rest)
			if len(fields) >= 1 {
				if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// cgroupRoom returns the cgroup's limit minus its current usage, or 0
// when there is no limit.
func cgroupRoom() int64 {
	read := func(p string) (int64, bool) {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
		return v, err == nil
	}
	for _, pair := range [][2]string{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
	} {
		lim, ok := read(pair[0])
		if !ok || lim <= 0 || lim >= 1<<60 {
			continue
		}
		cur, _ := read(pair[1])
		if room := lim - cur; room > 0 {
			return room
		}
		return 1
	}
	return 0
}
