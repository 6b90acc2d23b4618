package transformer

import (
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// liveParams returns the live host slice of m's parameters (the tests run
// on the CPU backend): writes to it change the model.
func liveParams(m *Model) []float32 {
	s, ok := cpu.Host(m.params)
	if !ok {
		panic("liveParams on a non-CPU backend")
	}
	return s
}

// hostTensor wraps a host slice as a CPU-backend tensor (no copy).
func hostTensor(s []float32) backend.Tensor {
	if s == nil {
		return backend.Tensor{}
	}
	return backend.Whole(cpu.Wrap(s))
}

// setKernel puts m on a CPU backend of kernels.Default whose GEMM is k
// (nil: the set's).
func setKernel(m *Model, k kernels.Kernel) {
	if k == nil {
		m.be = cpu.NewDefault()
		return
	}
	m.be = withGemm(k)
}

// withGemm is a CPU backend of kernels.Default with the GEMM k.
func withGemm(k kernels.Kernel) *cpu.Backend { return cpu.New(kernels.Default(), cpu.WithGemm(k)) }

// setKernelSet puts m on a CPU backend of the kernel set called name.
func setKernelSet(m *Model, name string) error {
	ks, err := kernels.Lookup(name)
	if err != nil {
		return err
	}
	m.be = cpu.New(ks)
	return nil
}

// hostSlice returns the live host slice of a CPU-backend tensor.
func hostSlice(t backend.Tensor) []float32 {
	s, ok := cpu.Host(t)
	if !ok {
		panic("hostSlice of a non-CPU tensor")
	}
	return s
}
