package perf

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// The per-op profile of 'vomc bench train --profile': a backend that
// wraps the engine's and adds the wall time of every op call to the row
// of the step it belongs to (the QKV product, attention, the
// feed-forward's products, gradient zeroing, AdamW, …). It is chosen once,
// at the top of a profiled benchmark run: an unprofiled run uses the
// engine's backend itself, so the timing costs nothing when it is off.
// Each op is timed from its call to its return, which is its run time on
// a backend whose ops are synchronous (the CPU backend); on an
// asynchronous one (a GPU's) the time lands on the op that waits.

// OpRow identifies a row of the profile: a kind of op in the forward or
// backward pass, or a part of the update.
type OpRow int

// The rows, in the order of a training step.
const (
	RowEmbedFwd OpRow = iota
	RowLayerNormFwd
	RowQKVFwd
	RowAttnFwd
	RowAttnProjFwd
	RowResidualFwd
	RowFCFwd
	RowActFwd
	RowFCProjFwd
	RowHeadFwd
	RowLossFwd
	RowZeroParamGrads
	RowZeroActGrads
	RowLossBwd
	RowHeadBwd
	RowLayerNormBwd
	RowFCProjBwd
	RowActBwd
	RowFCBwd
	RowResidualBwd
	RowAttnProjBwd
	RowAttnBwd
	RowQKVBwd
	RowEmbedBwd
	RowGradNorm
	RowAdamW
	RowOtherOps
	numOpRows
)

var opRowNames = [numOpRows]string{
	RowEmbedFwd:       "embedding fwd",
	RowLayerNormFwd:   "layernorm fwd",
	RowQKVFwd:         "QKV matmul fwd",
	RowAttnFwd:        "attention fwd",
	RowAttnProjFwd:    "attn projection fwd",
	RowResidualFwd:    "residual add fwd",
	RowFCFwd:          "FF up matmul fwd",
	RowActFwd:         "FF activation fwd",
	RowFCProjFwd:      "FF down matmul fwd",
	RowHeadFwd:        "logits matmul fwd",
	RowLossFwd:        "softmax + loss fwd",
	RowZeroParamGrads: "zero param grads",
	RowZeroActGrads:   "zero activation grads",
	RowLossBwd:        "softmax + loss bwd",
	RowHeadBwd:        "logits matmul bwd",
	RowLayerNormBwd:   "layernorm bwd",
	RowFCProjBwd:      "FF down matmul bwd",
	RowActBwd:         "FF activation bwd",
	RowFCBwd:          "FF up matmul bwd",
	RowResidualBwd:    "residual add bwd",
	RowAttnProjBwd:    "attn projection bwd",
	RowAttnBwd:        "attention bwd",
	RowQKVBwd:         "QKV matmul bwd",
	RowEmbedBwd:       "embedding bwd",
	RowGradNorm:       "grad norm + clip",
	RowAdamW:          "AdamW step",
	RowOtherOps:       "other backend ops",
}

func (r OpRow) String() string { return opRowNames[r] }

// timedBackend is the profiling wrapper: every op of backend.Backend
// adds its wall time to its row. The embedded backend does the work (and
// any method added to the interface later passes through untimed: its
// time then shows as "outside ops").
type timedBackend struct {
	backend.Backend
	nParams int
	matmul  map[int]OpRow // a weight's offset in the parameter vector → its product's forward row
	bwd     bool          // inside a backward pass (for Add)
	times   [numOpRows]time.Duration
	calls   [numOpRows]int
}

// newTimedBackend wraps be for models of cfg.
func newTimedBackend(be backend.Backend, cfg transformer.Config) *timedBackend {
	t := &timedBackend{Backend: be, nParams: cfg.NumParams(), matmul: map[int]OpRow{}}
	for _, ti := range cfg.Layout() {
		switch {
		case strings.HasSuffix(ti.Name, "attn.qkv.weight"):
			t.matmul[ti.Offset] = RowQKVFwd
		case strings.HasSuffix(ti.Name, "attn.proj.weight"):
			t.matmul[ti.Offset] = RowAttnProjFwd
		case strings.HasSuffix(ti.Name, "mlp.fc.weight"):
			t.matmul[ti.Offset] = RowFCFwd
		case strings.HasSuffix(ti.Name, "mlp.proj.weight"):
			t.matmul[ti.Offset] = RowFCProjFwd
		case ti.Name == "head.weight":
			t.matmul[ti.Offset] = RowHeadFwd
		}
	}
	return t
}

// reset clears the times (after the warm-up steps).
func (t *timedBackend) reset() { t.times, t.calls = [numOpRows]time.Duration{}, [numOpRows]int{} }

func (t *timedBackend) add(r OpRow, t0 time.Time) {
	t.times[r] += time.Since(t0)
	t.calls[r]++
}

// matmulRow is the row of a product with the weight w, forward or
// backward.
func (t *timedBackend) matmulRow(w backend.Tensor, bwd bool) OpRow {
	r, ok := t.matmul[w.Off]
	if !ok {
		return RowOtherOps
	}
	if bwd {
		r = backwardRow[r]
	}
	return r
}

// backwardRow is the backward row of a product's forward row.
var backwardRow = map[OpRow]OpRow{RowQKVFwd: RowQKVBwd, RowAttnProjFwd: RowAttnProjBwd, RowFCFwd: RowFCBwd, RowFCProjFwd: RowFCProjBwd, RowHeadFwd: RowHeadBwd}

func (t *timedBackend) Upload(dst backend.Tensor, src []float32) {
	t0 := time.Now()
	t.Backend.Upload(dst, src)
	t.add(RowOtherOps, t0)
}

func (t *timedBackend) Download(dst []float32, src backend.Tensor) {
	t0 := time.Now()
	t.Backend.Download(dst, src)
	t.add(RowOtherOps, t0)
}

func (t *timedBackend) UploadTokens(dst backend.Tokens, src []byte) {
	t0 := time.Now()
	t.Backend.UploadTokens(dst, src)
	t.add(RowOtherOps, t0)
}

func (t *timedBackend) Zero(x backend.Tensor) {
	t0 := time.Now()
	t.Backend.Zero(x)
	r := RowZeroActGrads
	if x.Len == t.nParams {
		r = RowZeroParamGrads
	}
	t.add(r, t0)
}

// Copy in the backward pass sets a residual stream's gradient before
// LayerNorm's backward pass adds to it (transformer.Model.Backward): it is
// counted with the residual adds.
func (t *timedBackend) Copy(dst, src backend.Tensor) {
	t0 := time.Now()
	t.Backend.Copy(dst, src)
	r := RowOtherOps
	if t.bwd {
		r = RowResidualBwd
	}
	t.add(r, t0)
}

func (t *timedBackend) EncoderForward(out backend.Tensor, tok backend.Tokens, wte, pos backend.Tensor, B, T, C int) {
	t.bwd = false
	t0 := time.Now()
	t.Backend.EncoderForward(out, tok, wte, pos, B, T, C)
	t.add(RowEmbedFwd, t0)
}

func (t *timedBackend) EncoderBackward(dwte, dpos, dout backend.Tensor, tok backend.Tokens, B, T, C int) {
	t0 := time.Now()
	t.Backend.EncoderBackward(dwte, dpos, dout, tok, B, T, C)
	t.add(RowEmbedBwd, t0)
}

func (t *timedBackend) LayerNormForward(out, mean, rstd, inp, w, b backend.Tensor, rows, C int) {
	t0 := time.Now()
	t.Backend.LayerNormForward(out, mean, rstd, inp, w, b, rows, C)
	t.add(RowLayerNormFwd, t0)
}

func (t *timedBackend) LayerNormBackward(dinp, dw, db, dout, inp, w, mean, rstd backend.Tensor, rows, C int) {
	t0 := time.Now()
	t.Backend.LayerNormBackward(dinp, dw, db, dout, inp, w, mean, rstd, rows, C)
	t.add(RowLayerNormBwd, t0)
}

func (t *timedBackend) MatmulForward(out, inp, w, bias backend.Tensor, rows, C, OC int) {
	t0 := time.Now()
	t.Backend.MatmulForward(out, inp, w, bias, rows, C, OC)
	t.add(t.matmulRow(w, false), t0)
}

func (t *timedBackend) MatmulBackward(dinp, dw, dbias, dout, inp, w backend.Tensor, rows, C, OC int, setDinp bool) {
	t0 := time.Now()
	t.Backend.MatmulBackward(dinp, dw, dbias, dout, inp, w, rows, C, OC, setDinp)
	t.add(t.matmulRow(w, true), t0)
}

func (t *timedBackend) AttentionForward(out, lse, qkv backend.Tensor, B, T, C, NH int) {
	t0 := time.Now()
	t.Backend.AttentionForward(out, lse, qkv, B, T, C, NH)
	t.add(RowAttnFwd, t0)
}

func (t *timedBackend) AttentionBackward(dqkv, dout, qkv, lse backend.Tensor, B, T, C, NH int) {
	t0 := time.Now()
	t.Backend.AttentionBackward(dqkv, dout, qkv, lse, B, T, C, NH)
	t.add(RowAttnBwd, t0)
}

func (t *timedBackend) AttentionWeights(out, qkv backend.Tensor, B, T, C, NH int) {
	t0 := time.Now()
	t.Backend.AttentionWeights(out, qkv, B, T, C, NH)
	t.add(RowOtherOps, t0)
}

func (t *timedBackend) ActivationForward(act backend.Activation, out, inp backend.Tensor) {
	t0 := time.Now()
	t.Backend.ActivationForward(act, out, inp)
	t.add(RowActFwd, t0)
}

func (t *timedBackend) ActivationBackward(act backend.Activation, dinp, inp, dout backend.Tensor) {
	t0 := time.Now()
	t.Backend.ActivationBackward(act, dinp, inp, dout)
	t.add(RowActBwd, t0)
}

func (t *timedBackend) Add(out, a, b backend.Tensor) {
	t0 := time.Now()
	t.Backend.Add(out, a, b)
	r := RowResidualFwd
	if t.bwd {
		r = RowResidualBwd
	}
	t.add(r, t0)
}

func (t *timedBackend) CrossEntropyForward(probs, losses, logits backend.Tensor, tok backend.Tokens, B, T, A int) float64 {
	t0 := time.Now()
	s := t.Backend.CrossEntropyForward(probs, losses, logits, tok, B, T, A)
	t.add(RowLossFwd, t0)
	return s
}

func (t *timedBackend) CrossEntropyBackward(dlogits, probs backend.Tensor, tok backend.Tokens, scale float32, B, T, A int) {
	t.bwd = true
	t0 := time.Now()
	t.Backend.CrossEntropyBackward(dlogits, probs, tok, scale, B, T, A)
	t.add(RowLossBwd, t0)
}

func (t *timedBackend) SumSquares(x backend.Tensor) float64 {
	t0 := time.Now()
	s := t.Backend.SumSquares(x)
	t.add(RowGradNorm, t0)
	return s
}

func (t *timedBackend) Scale(x backend.Tensor, s float32) {
	t0 := time.Now()
	t.Backend.Scale(x, s)
	t.add(RowGradNorm, t0)
}

func (t *timedBackend) AdamW(params, grads, m, v backend.Tensor, h backend.AdamWStep) {
	t0 := time.Now()
	t.Backend.AdamW(params, grads, m, v, h)
	t.add(RowAdamW, t0)
}

// OpTime is one row of an OpProfile: the mean time per step of the op's
// calls and their number per step.
type OpTime struct {
	Op    string        `json:"op"`
	Time  time.Duration `json:"ns_per_step"`
	Calls float64       `json:"calls_per_step"`
}

// OpProfile is the per-op profile of a benchmark run: the mean time per
// step of each row (rows never called are left out), their sum, and the
// mean measured step, whose difference from the sum (Outside) is the time
// spent outside backend ops (the model's and trainer's own code, the
// timing itself).
type OpProfile struct {
	Ops     []OpTime      `json:"ops"`
	Sum     time.Duration `json:"sum_ns"`
	Step    time.Duration `json:"step_ns"`
	Outside time.Duration `json:"outside_ns"`
}

// profile returns the per-step means of t's times over steps steps of
// mean length step.
func (t *timedBackend) profile(steps int, step time.Duration) *OpProfile {
	p := &OpProfile{Step: step}
	for r := OpRow(0); r < numOpRows; r++ {
		if t.calls[r] == 0 {
			continue
		}
		d := t.times[r] / time.Duration(steps)
		p.Ops = append(p.Ops, OpTime{Op: r.String(), Time: d, Calls: float64(t.calls[r]) / float64(steps)})
		p.Sum += d
	}
	p.Outside = step - p.Sum
	return p
}

// OpTime returns the row named op (zero when absent).
func (p *OpProfile) OpTime(op string) OpTime {
	for _, o := range p.Ops {
		if o.Op == op {
			return o
		}
	}
	return OpTime{Op: op}
}

// WriteOpProfiles prints the profiles of one configuration's runs (one
// per thread count, the first normally 1 thread) side by side: per op the
// time per step in each run, the speed-up of each run over the first and
// the share of the step.
func WriteOpProfiles(w io.Writer, rs []*TrainReport) {
	if len(rs) == 0 {
		return
	}
	var ops []string
	seen := map[string]bool{}
	for _, r := range rs {
		for _, o := range r.Profile.Ops {
			if !seen[o.Op] {
				seen[o.Op] = true
				ops = append(ops, o.Op)
			}
		}
	}
	// in the order of a step
	order := map[string]int{}
	for r := OpRow(0); r < numOpRows; r++ {
		order[r.String()] = int(r)
	}
	slices.SortStableFunc(ops, func(a, b string) int { return order[a] - order[b] })
	fmt.Fprintf(w, "%s: per-op time per step (ms), %s\n", rs[0].Name, rs[0].Backend)
	fmt.Fprintf(w, "%-22s", "op")
	for _, r := range rs {
		fmt.Fprintf(w, " %10s", fmt.Sprintf("%d thr", r.Threads))
	}
	for _, r := range rs[1:] {
		fmt.Fprintf(w, " %9s", fmt.Sprintf("×%d thr", r.Threads))
	}
	for _, r := range rs {
		fmt.Fprintf(w, " %9s", fmt.Sprintf("%%@%d", r.Threads))
	}
	fmt.Fprintln(w)
	line := func(name string, get func(*TrainReport) time.Duration) {
		fmt.Fprintf(w, "%-22s", name)
		for _, r := range rs {
			fmt.Fprintf(w, " %10.3f", ms(get(r)))
		}
		for _, r := range rs[1:] {
			if d := get(r); d > 0 {
				fmt.Fprintf(w, " %8.2f×", float64(get(rs[0]))/float64(d))
			} else {
				fmt.Fprintf(w, " %9s", "-")
			}
		}
		for _, r := range rs {
			fmt.Fprintf(w, " %8.1f%%", 100*float64(get(r))/float64(r.Profile.Step))
		}
		fmt.Fprintln(w)
	}
	for _, op := range ops {
		line(op, func(r *TrainReport) time.Duration { return r.Profile.OpTime(op).Time })
	}
	line("sum of ops", func(r *TrainReport) time.Duration { return r.Profile.Sum })
	line("outside ops", func(r *TrainReport) time.Duration { return r.Profile.Outside })
	line("step (measured)", func(r *TrainReport) time.Duration { return r.Profile.Step })
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
