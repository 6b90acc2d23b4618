//go:build linux && (amd64 || arm64)

package cuda

import "testing"

// TestEmulatorGemm checks both GEMM kernels, with and without split K, on
// the emulator (-short: on gemmShapesShort).
func TestEmulatorGemm(t *testing.T) {
	be := emuBackend(t)
	shapes := gemmShapes
	if testing.Short() {
		shapes = gemmShapesShort
	}
	checkGemm(t, be, shapes)
}

// TestEmulatorAttention checks every attention instance against the CPU
// backend on the emulator.
func TestEmulatorAttention(t *testing.T) {
	be := emuBackend(t)
	checkAttention(t, be)
}

// TestEmulatorConformanceTile128 runs the conformance suite with every
// matrix product on the 128×128 kernel.
func TestEmulatorConformanceTile128(t *testing.T) {
	gemmTile = 128
	defer func() { gemmTile = 0 }()
	TestEmulatorConformance(t)
}
