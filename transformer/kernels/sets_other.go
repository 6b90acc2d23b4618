//go:build purego || !(amd64 || arm64)

package kernels

// archSets: this build has only the portable set.
func archSets() []*Set { return nil }

func buildDesc() string {
	return "build (portable: -tags purego or an architecture without SIMD kernels)"
}
