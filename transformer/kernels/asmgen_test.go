package kernels

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestGeneratedAsmCurrent runs the generator (asmgen.go) for each
// instruction set and checks that the checked-in assembly is what it
// writes now (run go generate after changing asmgen.go).
func TestGeneratedAsmCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	// go test puts its own GOROOT/bin first on PATH
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to run the generator")
	}
	for _, f := range []struct{ isa, file string }{{"avx512", "gemm_avx512_amd64.s"}, {"avx2", "gemm_avx2_amd64.s"}} {
		cmd := exec.Command(goTool, "run", "asmgen.go", "-isa", f.isa)
		cmd.Env = append(os.Environ(), "GOOS=", "GOARCH=", "GOFLAGS=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("go run asmgen.go -isa %s: %v\n%s", f.isa, err, stderr.Bytes())
		}
		want, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what asmgen.go -isa %s writes: run go generate ./transformer/kernels", f.file, f.isa)
		}
	}
}
