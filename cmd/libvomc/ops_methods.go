package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/source"
)

// methodsReq are the defaults of method specs (methods.Defaults) and the
// windows' shape: W windows of N symbols in array 0, and TW training
// windows of TN symbols (KN's tuning) in the array after the others when
// TW > 0.
type methodsReq struct {
	A       int           `json:"A"`
	D       *int          `json:"D"`
	Lambda  *float64      `json:"lambda"`
	Alpha   *float64      `json:"alpha"`
	Prior   *source.Prior `json:"prior"`
	W       int           `json:"W"`
	N       int           `json:"N"`
	TW      int           `json:"TW"`
	TN      int           `json:"TN"`
	Workers int           `json:"workers"`
}

// defaults are the methods' defaults: the prior's (methods.DefaultsFor)
// when given, else D = 3, λ = 0.15, α = 0.5 as 'vomc eval --file', each
// replaced by the request's where it gives one; windows are the evaluated
// windows, and KN tunes on the training windows (array tune), else on the
// evaluated ones, as 'vomc eval' does.
func (r methodsReq) defaults(arrays [][]byte, tune int) (methods.Defaults, error) {
	d := methods.Defaults{A: r.A, D: 3, Lambda: 0.15, Alpha: 0.5, Backend: compute(), Torch: torchEngine()}
	if r.Prior != nil {
		if err := r.Prior.Validate(); err != nil {
			return d, err
		}
		if r.A != 0 && r.A != r.Prior.A {
			return d, fmt.Errorf("alphabet %d, but the prior's is %d", r.A, r.Prior.A)
		}
		d = methods.DefaultsFor(*r.Prior)
		d.Backend, d.Torch = compute(), torchEngine()
	}
	if r.D != nil {
		d.D = *r.D
	}
	if r.Lambda != nil {
		d.Lambda = *r.Lambda
	}
	if r.Alpha != nil {
		d.Alpha = *r.Alpha
	}
	if d.A < 2 || d.A > source.MaxAlphabet {
		return d, fmt.Errorf("alphabet size %d, want 2..%d", d.A, source.MaxAlphabet)
	}
	var err error
	if d.Windows, err = windowsOf(arrays, 0, r.W, r.N, d.A, "windows"); err != nil {
		return d, err
	}
	if r.TW > 0 {
		if d.Tune, err = windowsOf(arrays, tune, r.TW, r.TN, d.A, "train"); err != nil {
			return d, err
		}
		d.TuneNote = fmt.Sprintf("%d training windows", r.TW)
	} else {
		d.Tune = d.Windows
		d.TuneNote = fmt.Sprintf("the %d evaluated windows (oracle tuning)", len(d.Windows))
	}
	return d, nil
}

// opPredict writes one method's distributions on the windows into array
// 1 (float64, (W, N, A)): methods.Distributions, the rows 'vomc eval
// --export' writes.
func opPredict(ctx context.Context, req []byte, arrays [][]byte) (any, [][]byte, error) {
	var r struct {
		methodsReq
		Spec string `json:"spec"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	d, err := r.defaults(arrays, 2)
	if err != nil {
		return nil, nil, err
	}
	list, err := methods.Parse(r.Spec)
	if err != nil {
		return nil, nil, err
	}
	built, err := methods.Build(list, d)
	if err != nil {
		return nil, nil, err
	}
	if len(built) != 1 {
		return nil, nil, fmt.Errorf("predict takes one method, %q has %d", r.Spec, len(built))
	}
	p := built[0].Predictor
	b, err := array(arrays, 1, 8*int64(r.W)*int64(r.N)*int64(d.A), "out")
	if err != nil {
		return nil, nil, err
	}
	out, err := float64s(b)
	if err != nil {
		return nil, nil, err
	}
	if err := methods.Distributions(ctx, p, d.Windows, out, r.Workers); err != nil {
		return nil, nil, err
	}
	return map[string]string{"name": p.Name(), "note": built[0].Note}, nil, nil
}

// opCTWTrace writes CTW's ω_{t,l} before every symbol (array 1, float64,
// (W, N, D+1)) and ln P(x) of every window (array 2, float64, (W,)), in
// nats: ctw.State's Weights and LogML.
func opCTWTrace(ctx context.Context, req []byte, arrays [][]byte) (any, [][]byte, error) {
	var r struct {
		A      int     `json:"A"`
		D      int     `json:"D"`
		Lambda float64 `json:"lambda"`
		Alpha  float64 `json:"alpha"`
		Init   string  `json:"init"`
		W      int     `json:"W"`
		N      int     `json:"N"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	cfg := ctw.Config{A: r.A, D: r.D, Lambda: r.Lambda, Alpha: r.Alpha}
	if r.Init != "" {
		in, err := ctw.ParseInit(r.Init)
		if err != nil {
			return nil, nil, err
		}
		cfg.Init = in
	}
	pr, err := ctw.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	xs, err := windowsOf(arrays, 0, r.W, r.N, r.A, "windows")
	if err != nil {
		return nil, nil, err
	}
	ob, err := array(arrays, 1, 8*int64(r.W)*int64(r.N)*int64(r.D+1), "omega")
	if err != nil {
		return nil, nil, err
	}
	lb, err := array(arrays, 2, 8*int64(r.W), "logml")
	if err != nil {
		return nil, nil, err
	}
	omega, err := float64s(ob)
	if err != nil {
		return nil, nil, err
	}
	logml, err := float64s(lb)
	if err != nil {
		return nil, nil, err
	}
	k := r.D + 1
	for w, x := range xs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		st := pr.NewCTWState()
		for t, a := range x {
			st.Weights(omega[(w*r.N+t)*k : (w*r.N+t+1)*k])
			st.Observe(a)
		}
		logml[w] = st.LogML()
	}
	return map[string]string{"name": pr.Name()}, nil, nil
}

// opEvaluate evaluates in context (eval.Evaluate) the methods of spec
// and the caller's distributions (arrays 1..len(names), float64 (W, N,
// A), each checked as an npy method's file: methods.NewNPYPredictor).
// The answer holds eval's results.json and summary table, the bytes
// 'vomc eval' writes for the same methods.
func opEvaluate(ctx context.Context, req []byte, arrays [][]byte) (any, [][]byte, error) {
	var r struct {
		methodsReq
		Spec      string   `json:"spec"`
		Names     []string `json:"names"`
		Reference string   `json:"reference"`
		// RefIndex, when set, names the reference by its place among
		// the methods (spec's, then the arrays).
		RefIndex   *int    `json:"ref_index"`
		Confidence float64 `json:"confidence"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	d, err := r.defaults(arrays, 1+len(r.Names))
	if err != nil {
		return nil, nil, err
	}
	var built []methods.Built
	if r.Spec != "" {
		list, err := methods.Parse(r.Spec)
		if err != nil {
			return nil, nil, err
		}
		if built, err = methods.Build(list, d); err != nil {
			return nil, nil, err
		}
	}
	preds := methods.Predictors(built)
	shape := []int{r.W, r.N, d.A}
	for i, name := range r.Names {
		b, err := array(arrays, 1+i, 8*int64(r.W)*int64(r.N)*int64(d.A), name)
		if err != nil {
			return nil, nil, err
		}
		rows, err := float64s(b)
		if err != nil {
			return nil, nil, err
		}
		p, err := methods.NewNPYPredictor(name, rows, shape, d.Windows, d.A)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		preds = append(preds, p)
	}
	if r.RefIndex != nil {
		if *r.RefIndex < 0 || *r.RefIndex >= len(preds) {
			return nil, nil, fmt.Errorf("reference %d: there are %d methods", *r.RefIndex, len(preds))
		}
		r.Reference = preds[*r.RefIndex].Name()
	}
	labels := map[string]string{}
	for _, b := range built {
		if b.Note != "" {
			labels[b.Predictor.Name()] = b.Note
		}
	}
	res, err := eval.Evaluate(ctx, d.Windows, d.A, preds, eval.Config{Workers: r.Workers, Reference: r.Reference, Confidence: r.Confidence, Labels: labels})
	if err != nil {
		return nil, nil, err
	}
	var js, table bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		return nil, nil, err
	}
	if err := res.WriteSummaryTable(&table); err != nil {
		return nil, nil, err
	}
	return nil, [][]byte{js.Bytes(), table.Bytes()}, nil
}
