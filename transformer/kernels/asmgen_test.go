package kernels

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestGeneratedAsmCurrent runs the generators (asmgen.go for each
// instruction set, attngen.go, gelugen.go) and checks that the checked-in assembly is
// what they write now (run go generate after changing them).
func TestGeneratedAsmCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	// go test puts its own GOROOT/bin first on PATH
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to run the generator")
	}
	for _, f := range []struct{ gen, isa, file string }{
		{"asmgen.go", "avx512", "gemm_avx512_amd64.s"}, {"asmgen.go", "avx2", "gemm_avx2_amd64.s"},
		{"attngen.go", "", "attention16_avx512_amd64.s"}, {"gelugen.go", "", "gelu_avx512_amd64.s"},
	} {
		args := []string{"run", f.gen}
		if f.isa != "" {
			args = append(args, "-isa", f.isa)
		}
		cmd := exec.Command(goTool, args...)
		cmd.Env = append(os.Environ(), "GOOS=", "GOARCH=", "GOFLAGS=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, stderr.Bytes())
		}
		want, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what go %v writes: run go generate ./transformer/kernels", f.file, args)
		}
	}
}
