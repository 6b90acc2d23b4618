//go:build amd64 && !purego

package kernels

// pause is one spin-wait hint (PAUSE), for the pool's polling loops.
//
//go:noescape
func pause()
