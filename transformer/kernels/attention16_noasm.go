//go:build !amd64 || purego

package kernels

// attn16Forward and attn16Backward: no set of this build has the fused
// attention kernels (vectorOps.attn16 is false), so they are never called.
func attn16Forward(a *attn16Args)  { panic("kernels: no fused attention kernels in this build") }
func attn16Backward(a *attn16Args) { panic("kernels: no fused attention kernels in this build") }
