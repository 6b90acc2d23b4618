// Package scripts holds the tests of the shell scripts in this directory
// (there is no Go code here otherwise).
package scripts

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Descriptions of CPUs as /proc/cpuinfo gives them (flags shortened).
var cpus = map[string]string{
	"skylakex": "processor\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni\n\nprocessor\t: 1\nflags\t\t: fpu\n",
	"haswell":  "processor\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma bmi2\n",
	"old":      "processor\t: 0\nflags\t\t: fpu sse4_2 avx\n",
	// Knights Landing: AVX-512 F and CD, not the BW/DQ/VL of Skylake-SP.
	"knl": "flags\t\t: fpu avx avx2 fma avx512f avx512pf avx512er avx512cd\n",
	// Look-alike names must not count (avx512vbmi is not avx512vl, avx2x
	// is not avx2).
	"lookalike": "flags\t\t: avx2x fmax avx512fx avx512vbmi\n",
	"arm64":     "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes crc32\n",
}

func writeCPUs(t *testing.T) string {
	dir := t.TempDir()
	for name, info := range cpus {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(info), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func needSh(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	if _, err := os.Stat("/proc"); err != nil {
		t.Skip("the scripts are for Linux")
	}
}

// TestKernelsMissing runs cpu_check.sh's kernels_missing on fake
// descriptions of CPUs (through VOMC_CPUINFO).
func TestKernelsMissing(t *testing.T) {
	needSh(t)
	dir := writeCPUs(t)
	const all512 = "avx512f avx512cd avx512bw avx512dq avx512vl"
	cases := []struct{ set, cpu, want string }{
		{"avx512", "skylakex", ""},
		{"avx512", "haswell", all512},
		{"avx512", "knl", "avx512bw avx512dq avx512vl"},
		{"avx512", "lookalike", all512},
		{"avx512", "arm64", all512},
		{"avx2", "skylakex", ""},
		{"avx2", "haswell", ""},
		{"avx2", "old", "avx2 fma"},
		{"avx2", "lookalike", "avx2 fma"},
		{"neon", "arm64", ""},
		{"neon", "haswell", "asimd"},
		{"portable", "old", ""},
		{"avx512", "absent", all512},
	}
	for _, c := range cases {
		cmd := exec.Command("sh", "-c", `. ./cpu_check.sh && kernels_missing "$1"`, "sh", c.set)
		cmd.Env = append(os.Environ(), "VOMC_CPUINFO="+filepath.Join(dir, c.cpu))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s on %s: %v", c.set, c.cpu, err)
		}
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("%s on %s: missing %q, want %q", c.set, c.cpu, got, c.want)
		}
	}
}

// TestBenchTrainRefusesKernels runs bench_train.sh itself: a kernel set
// the CPU lacks is refused (exit status 2, a message naming the missing
// flags) before anything is installed, built or run; a set it has passes
// the check. Every command the script would run after the check is a stub
// that fails with status 97, so a wrong answer cannot install or run
// anything.
func TestBenchTrainRefusesKernels(t *testing.T) {
	needSh(t)
	dir := writeCPUs(t)
	stubs := t.TempDir()
	for _, name := range []string{"apt-get", "sudo", "go", "dpkg-architecture", "update-alternatives", "python3", "mktemp"} {
		if err := os.WriteFile(filepath.Join(stubs, name), []byte("#!/bin/sh\necho \"stub $0 $*\" >&2\nexit 97\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(kernels, cpu string) (int, string) {
		cmd := exec.Command("sh", "bench_train.sh")
		cmd.Env = append(os.Environ(),
			"KERNELS="+kernels,
			"VOMC_CPUINFO="+filepath.Join(dir, cpu),
			"PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"),
			"PYTHON="+filepath.Join(stubs, "python3"))
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	for _, c := range []struct{ kernels, cpu, alt string }{
		{"avx512", "haswell", "KERNELS=avx2"},
		{"avx512", "old", "KERNELS=portable"},
		{"avx512", "knl", "KERNELS=avx2"},
		{"avx2", "old", "KERNELS=portable"},
	} {
		code, out := run(c.kernels, c.cpu)
		if code != 2 || !strings.Contains(out, "KERNELS="+c.kernels+" needs CPU features") ||
			!strings.Contains(out, "Illegal instruction") || !strings.Contains(out, c.alt) || strings.Contains(out, "stub ") {
			t.Errorf("KERNELS=%s on %s: exit %d:\n%s", c.kernels, c.cpu, code, out)
		}
		for _, f := range strings.Fields(cpus[c.cpu]) {
			if strings.HasPrefix(f, "avx512") && strings.Contains(out, "no "+f) {
				t.Errorf("KERNELS=%s on %s: names %s, which the CPU has:\n%s", c.kernels, c.cpu, f, out)
			}
		}
	}
	// Sets the CPU has pass the check: the script goes on to its first
	// command (a stub here).
	for _, c := range []struct{ kernels, cpu string }{{"avx512", "skylakex"}, {"avx2", "haswell"}, {"", "old"}, {"portable", "old"}} {
		code, out := run(c.kernels, c.cpu)
		if code != 97 || strings.Contains(out, "needs CPU features") || !strings.Contains(out, "stub ") {
			t.Errorf("KERNELS=%q on %s: exit %d:\n%s", c.kernels, c.cpu, code, out)
		}
	}
}
