package kernels

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestNeonGenCurrent checks that neon_arm64.s is what neongen.go
// generates (run `go generate` in this directory after editing the
// generator). It needs the go command, so it is skipped in -short mode
// and where go is not on PATH (a test binary run elsewhere, e.g. under
// qemu).
func TestNeonGenCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		var lerr error
		if goCmd, lerr = exec.LookPath("go"); lerr != nil {
			t.Skip("no go command")
		}
	}
	if _, err := os.Stat("neongen.go"); err != nil {
		t.Skip("neongen.go not here (test binary run outside the package directory)")
	}
	tmp := filepath.Join(t.TempDir(), "neon_arm64.s")
	cmd := exec.Command(goCmd, "run", "neongen.go", "-o", tmp)
	cmd.Env = append(os.Environ(), "GOOS=", "GOARCH=", "GOFLAGS=")
	if outp, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run neongen.go: %v\n%s", err, outp)
	}
	got, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("neon_arm64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("neon_arm64.s is stale: run go generate in transformer/kernels")
	}
}
