//go:build arm64 && !purego

package kernels

// archSets are the arm64 sets.
func archSets() []*set { return nil }

func buildDesc() string { return "arm64 build" }
