package cuda

//go:generate ./gen_ptx.sh

import (
	_ "embed"
	"strings"
)

// kernelsPTX is kernels.cu compiled by gen_ptx.sh (nvcc -ptx, compute_70). Its
// first line records the SHA-256 of the kernels.cu it was made from
// (TestPTXCurrent checks it is the file beside it).
//
//go:embed kernels.ptx
var kernelsPTX string

// ptxSource returns the embedded PTX.
func ptxSource() string { return kernelsPTX }

// ptxSourceHash is the SHA-256 (hex) of kernels.cu recorded in the PTX.
func ptxSourceHash() string {
	line, _, _ := strings.Cut(kernelsPTX, "\n")
	_, h, ok := strings.Cut(line, "kernels.cu sha256 ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(h)
}
