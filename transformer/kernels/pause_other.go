//go:build purego || !amd64

package kernels

// pause is a spin-wait hint for the pool's polling loops: nothing here.
func pause() {}
