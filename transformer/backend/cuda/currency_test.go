package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"
)

// TestPTXCurrent checks that the embedded PTX was generated from the
// kernels.cu beside it (run go generate ./transformer/backend/cuda after
// changing it).
func TestPTXCurrent(t *testing.T) {
	src, err := os.ReadFile("kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	if got, want := ptxSourceHash(), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("kernels.ptx was generated from kernels.cu sha256 %q, the file is %s: run go generate ./transformer/backend/cuda (needs nvcc)", got, want)
	}
}
