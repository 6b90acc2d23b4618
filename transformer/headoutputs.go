package transformer

import (
	"fmt"

	"github.com/vomc/vomc/transformer/backend"
)

// HeadOutputs are the intact model's attention-head outputs on a set of
// reference windows: for each of some heads, its E/H entries of the
// layer's attention output (before the output projection) at every
// position t < N of every window, and their mean over the windows at each
// position (summed in float64 in window order). Model.HeadOutputs computes
// them once; every Intervention given them (Intervention.Outputs) reads
// its mean or resample values there instead of running a reference pass
// of its own, so that many ablations on the same references (a study of
// every head and group) compute and hold them once. Read-only once made,
// so safe for concurrent use.
type HeadOutputs struct {
	m    *Model
	R    int                // reference windows
	out  map[Head][]float32 // (R, N, hs)
	mean map[Head][]float32 // (N, hs)
}

// HeadOutputs runs the intact model over the first N symbols of each
// reference window and keeps the outputs of heads (every head when
// empty): R·N·E/H floats and their N·E/H means a head. Windows shorter
// than N, symbols outside the alphabet or heads the model does not have
// are errors, as is a buffer the backend cannot allocate.
func (m *Model) HeadOutputs(refs [][]byte, heads []Head) (*HeadOutputs, error) {
	c := m.Config
	if len(heads) == 0 {
		heads = c.AllHeads()
	}
	iv := Intervention{Ablate: heads, Mode: AblateMean, References: refs}
	if err := iv.Check(c); err != nil {
		return nil, err
	}
	N, R := c.Context, len(refs)
	ho := &HeadOutputs{m: m, R: R, out: map[Head][]float32{}, mean: map[Head][]float32{}}
	for _, h := range heads {
		ho.out[h] = make([]float32, R*N*c.Embed/c.Heads[h.Layer])
	}
	in, err := m.poolInference()
	if err != nil {
		return nil, fmt.Errorf("transformer: the reference pass: %w", err)
	}
	defer m.ipool.put(in)
	Bmax := in.Rows / N
	inputs := make([]byte, 0, Bmax*N)
	for lo := 0; lo < R; lo += Bmax {
		B := min(Bmax, R-lo)
		inputs = inputs[:0]
		for _, r := range refs[lo : lo+B] {
			inputs = append(inputs, r[:N]...)
		}
		m.forwardInfer(in, inputs, B, N, outputsHook{ho, lo})
	}
	for h, out := range ho.out {
		hsN := len(out) / R
		sum := make([]float64, hsN)
		for r := range R {
			for k, v := range out[r*hsN : (r+1)*hsN] {
				sum[k] += float64(v)
			}
		}
		mean := make([]float32, hsN)
		for k, s := range sum {
			mean[k] = float32(s / float64(R))
		}
		ho.mean[h] = mean
	}
	return ho, nil
}

// Windows is the number of reference windows.
func (ho *HeadOutputs) Windows() int { return ho.R }

// has reports whether ho holds head h of model m.
func (ho *HeadOutputs) has(m *Model, h Head) bool {
	_, ok := ho.out[h]
	return ho.m == m && ok
}

// outputsHook copies the kept heads' outputs of a pass over the reference
// windows lo, lo+1, … into ho.
type outputsHook struct {
	ho *HeadOutputs
	lo int
}

func (k outputsHook) attention(in *Inference, l int, atty, _ backend.Tensor, _ []byte, B, T int) {
	c := k.ho.m.Config
	C, hs := c.Embed, c.Embed/c.Heads[l]
	var a []float32
	for h := range c.Heads[l] {
		out, ok := k.ho.out[Head{l, h}]
		if !ok {
			continue
		}
		if a == nil {
			a = grow(&in.patch.atty, B*T*C)
			in.be.Download(a, atty)
		}
		for b := range B {
			for t := range T {
				copy(out[((k.lo+b)*T+t)*hs:][:hs], a[(b*T+t)*C+h*hs:][:hs])
			}
		}
	}
}
