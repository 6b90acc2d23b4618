// Package methods turns textual method specifications, as typed on vomc's
// command line, into predictors. A specification is a comma-separated list
// of methods, each a name followed by colon-separated parameters:
//
//	bayes                                    (the exact Bayes predictor of the data set's own prior)
//	ctw[:D=5][:lambda=0.15][:alpha=0.5][:init=pad|condition|shorter][:form=blend|theorem1|ratio]
//	kn[:order=5][:delta=0.7][:cont]          (δ tuned on training windows when absent)
//	ppm[:order=5][:escape=A|C|D][:excl][:norm]
//	markov[:k=2][:alpha=0.5][:init=pad|shorter]
//	unigram[:alpha=0.5][:init=pad|shorter]
//	tf:path=DIR[:name=LABEL]                 (a transformer trained by `vomc train`)
//	construct[:D=5][:lambda=0.15][:alpha=0.5][:c=inf]  (the paper's (D+2)-layer CTW transformer)
//	synth:path=DIR[:name=LABEL]              (a Fig. 8 "TF 2-0" model trained by `vomc synth`)
//	npy:path=FILE.npy[:name=LABEL]           (any model's distributions, shape (windows, N, A); see LoadNPY)
//
// Parameters left out take the values of Defaults (the data set's prior for
// CTW; order = D for the others), so "ctw,kn,ppm" compares the three at the
// source's depth. A tf method loads DIR/model.safetensors (or DIR itself
// when it is a .safetensors file); its name is the model's, e.g.
// "TF(L=2,H=[4,4],E=64,N=256)@run1" with the directory's base name after
// the @, so that several runs of one architecture can be compared, or
// LABEL when given. Paths may not contain ':' or ','.
package methods

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vomc/vomc/bayes"
	"github.com/vomc/vomc/construct"
	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/kn"
	"github.com/vomc/vomc/markov"
	"github.com/vomc/vomc/ppm"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// ErrUnfinished is returned (wrapped) for a tf method whose run has a
// checkpoint but no model yet: its training has not finished.
var ErrUnfinished = errors.New("its training has not finished")

// Defaults are the values used for parameters a specification leaves out.
type Defaults struct {
	A      int     // alphabet size
	D      int     // depth (CTW) and order (KN, PPM, Markov)
	Lambda float64 // CTW stop probability λ
	Alpha  float64 // CTW Dirichlet α
	// Tune are the training windows on which KN's discount δ is tuned when
	// a kn spec gives no delta; TuneNote says what they are (for reports).
	Tune     [][]byte
	TuneNote string
	// Windows are the evaluated windows, which an npy method's
	// distributions are matched against (nil when not known).
	Windows [][]byte
	// Prior is the data set's prior, which the bayes method is the exact
	// Bayes predictor of (nil: unknown, and bayes is refused). It is not
	// part of the JSON form: the data behind it is.
	Prior *source.Prior `json:"-"`
	// Backend is the compute backend of tf and synth methods' models
	// (UsesBackend), chosen by the caller (nil: each model makes a CPU
	// backend of its own).
	Backend backend.Backend `json:"-"`
}

// DefaultsFor returns the method defaults of a data set: its alphabet, the
// largest depth of its prior as D, and the prior's λ and (first) α, so that
// "ctw" is the Bayes-optimal predictor for the data set's prior when the
// prior has a single depth and Dirichlet leaves.
func DefaultsFor(p source.Prior) Defaults {
	prior := p
	prior.Depths = append([]int(nil), p.Depths...)
	prior.Alpha = append([]float64(nil), p.Alpha...)
	d := Defaults{A: p.A, Lambda: p.Lambda, Alpha: 0.5, Prior: &prior}
	for _, D := range p.Depths {
		d.D = max(d.D, D)
	}
	if len(p.Alpha) > 0 {
		d.Alpha = p.Alpha[0]
	}
	return d
}

// Built is one constructed method with a note on how it was configured
// (e.g. the tuned δ).
type Built struct {
	Spec      string
	Predictor predict.Predictor
	Note      string
}

// spec is one parsed method: name and parameters.
type spec struct {
	text, name string
	params     map[string]string
	used       map[string]bool
}

func parseOne(s string) (*spec, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	sp := &spec{text: s, name: strings.ToLower(parts[0]), params: map[string]string{}, used: map[string]bool{}}
	if sp.name == "" {
		return nil, fmt.Errorf("methods: empty method name in %q", s)
	}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			v = "true"
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if _, dup := sp.params[k]; dup {
			return nil, fmt.Errorf("methods: %q gives %s twice", s, k)
		}
		sp.params[k] = strings.TrimSpace(v)
	}
	return sp, nil
}

func (sp *spec) str(k, def string) string {
	sp.used[k] = true
	if v, ok := sp.params[k]; ok {
		return v
	}
	return def
}

func (sp *spec) int(k string, def int) (int, error) {
	sp.used[k] = true
	v, ok := sp.params[k]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("methods: %q: %s=%q is not an integer", sp.text, k, v)
	}
	return n, nil
}

func (sp *spec) float(k string, def float64) (float64, bool, error) {
	sp.used[k] = true
	v, ok := sp.params[k]
	if !ok {
		return def, false, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false, fmt.Errorf("methods: %q: %s=%q is not a number", sp.text, k, v)
	}
	return f, true, nil
}

func (sp *spec) flag(k string) (bool, error) {
	sp.used[k] = true
	v, ok := sp.params[k]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("methods: %q: %s=%q is not a boolean", sp.text, k, v)
	}
	return b, nil
}

// prior reads the CTW prior parameters D, lambda and alpha of a ctw or
// construct spec, defaulting to d's.
func (sp *spec) prior(d Defaults) (D int, lambda, alpha float64, err error) {
	if D, err = sp.int("d", d.D); err != nil {
		return
	}
	if lambda, _, err = sp.float("lambda", d.Lambda); err != nil {
		return
	}
	alpha, _, err = sp.float("alpha", d.Alpha)
	return
}

// unused reports a parameter the method does not know.
func (sp *spec) unused() error {
	for k := range sp.params {
		if !sp.used[k] {
			return fmt.Errorf("methods: %q: unknown parameter %q for %s", sp.text, k, sp.name)
		}
	}
	return nil
}

// Build parses a comma-separated list of specifications and constructs the
// predictors, tuning KN's discount on d.Tune where needed.
func Build(list string, d Defaults) ([]Built, error) {
	if err := Check(list); err != nil {
		return nil, err
	}
	var out []Built
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		sp, err := parseOne(s)
		if err != nil {
			return nil, err
		}
		b, err := build(sp, d)
		if err != nil {
			return nil, err
		}
		if err := sp.unused(); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("methods: no method in %q", list)
	}
	seen := map[string]string{}
	for _, b := range out {
		if prev, dup := seen[b.Predictor.Name()]; dup {
			return nil, fmt.Errorf("methods: %q and %q are the same method %s", prev, b.Spec, b.Predictor.Name())
		}
		seen[b.Predictor.Name()] = b.Spec
	}
	return out, nil
}

// UsesBackend reports whether a method of list loads a model onto
// Defaults.Backend (tf and synth), so that a caller opens a compute device
// only for a list that has one. It parses the names only: a list with a
// bad method is an error here or in Build.
func UsesBackend(list string) (bool, error) {
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		sp, err := parseOne(s)
		if err != nil {
			return false, err
		}
		if sp.name == "tf" || sp.name == "synth" {
			return true, nil
		}
	}
	return false, nil
}

// builders construct each method from its parsed spec and the defaults;
// unigram is markov with k = 0.
var builders = map[string]func(*spec, Defaults) (Built, error){
	"bayes":     buildBayes,
	"ctw":       buildCTW,
	"kn":        buildKN,
	"ppm":       buildPPM,
	"markov":    buildMarkov,
	"unigram":   buildMarkov,
	"tf":        buildTF,
	"construct": buildConstruct,
	"synth":     buildSynth,
	"npy":       buildNPY,
}

// build constructs the method sp names with its builder.
func build(sp *spec, d Defaults) (Built, error) {
	f, ok := builders[sp.name]
	if !ok {
		return Built{Spec: sp.text}, fmt.Errorf("methods: unknown method %q (bayes, ctw, kn, ppm, markov, unigram, tf, construct, synth, npy)", sp.name)
	}
	return f(sp, d)
}

// buildBayes makes the exact Bayes predictor of the data's prior d.Prior
// (bayes): the posterior mixture over its (depth, leaf kind) components.
func buildBayes(sp *spec, d Defaults) (Built, error) {
	b := Built{Spec: sp.text}
	if d.Prior == nil {
		return b, fmt.Errorf("methods: %q: bayes needs the data's prior, read from a vomc data set's manifest (this data has none)", sp.text)
	}
	if d.Prior.A != d.A {
		return b, fmt.Errorf("methods: %q: the prior has alphabet size %d, the data %d", sp.text, d.Prior.A, d.A)
	}
	p, err := bayes.New(*d.Prior)
	if err != nil {
		return b, fmt.Errorf("methods: %q: %w", sp.text, err)
	}
	b.Predictor = p
	b.Note = fmt.Sprintf("the exact Bayes predictor of the data's prior: a posterior mixture over %d (depth, leaf kind) component(s)", p.Components())
	return b, nil
}

// buildCTW makes a CTW predictor
// (ctw[:D=][:lambda=][:alpha=][:init=pad|condition|shorter][:form=blend|theorem1|ratio]).
func buildCTW(sp *spec, d Defaults) (Built, error) {
	b := Built{Spec: sp.text}
	D, lam, alpha, err := sp.prior(d)
	if err != nil {
		return b, err
	}
	init, err := ctw.ParseInit(sp.str("init", "pad"))
	if err != nil {
		return b, err
	}
	form, err := sp.ctwForm()
	if err != nil {
		return b, err
	}
	p, err := ctw.New(ctw.Config{A: d.A, D: D, Lambda: lam, Alpha: alpha, Init: init, Form: form})
	b.Predictor = p
	return b, err
}

// ctwForm reads the form parameter of a ctw spec (default blend).
func (sp *spec) ctwForm() (ctw.Form, error) {
	switch f := sp.str("form", "blend"); f {
	case "blend":
		return ctw.Blend, nil
	case "theorem1":
		return ctw.Theorem1, nil
	case "ratio":
		return ctw.Ratio, nil
	default:
		return 0, fmt.Errorf("methods: %q: unknown CTW form %q (blend, theorem1, ratio)", sp.text, f)
	}
}

// buildKN makes an interpolated Kneser-Ney predictor
// (kn[:order=][:delta=][:cont]); without delta the discount δ is the one
// of least mean loss (nats per symbol) on the training windows d.Tune,
// which the note records.
func buildKN(sp *spec, d Defaults) (Built, error) {
	b := Built{Spec: sp.text}
	order, err := sp.int("order", d.D)
	if err != nil {
		return b, err
	}
	cont, err := sp.flag("cont")
	if err != nil {
		return b, err
	}
	opts := kn.Options{Continuation: cont}
	delta, given, err := sp.float("delta", 0)
	if err != nil {
		return b, err
	}
	if !given {
		if len(d.Tune) == 0 {
			return b, fmt.Errorf("methods: %q: no delta given and no training windows to tune it on", sp.text)
		}
		var loss float64
		delta, loss, err = kn.Tune(d.Tune, d.A, order, opts)
		if err != nil {
			return b, err
		}
		b.Note = fmt.Sprintf("δ=%.4f tuned on %s (mean loss %.4f nats)", delta, d.TuneNote, loss)
	}
	p, err := kn.New(d.A, order, delta, opts)
	b.Predictor = p
	return b, err
}

// buildPPM makes a PPM predictor (ppm[:order=][:escape=A|C|D][:excl][:norm]).
func buildPPM(sp *spec, d Defaults) (Built, error) {
	b := Built{Spec: sp.text}
	order, err := sp.int("order", d.D)
	if err != nil {
		return b, err
	}
	esc, err := sp.ppmEscape()
	if err != nil {
		return b, err
	}
	excl, err := sp.flag("excl")
	if err != nil {
		return b, err
	}
	norm, err := sp.flag("norm")
	if err != nil {
		return b, err
	}
	p, err := ppm.New(d.A, order, ppm.Options{Method: esc, Exclusion: excl, Normalize: norm})
	b.Predictor = p
	return b, err
}

// ppmEscape reads the escape parameter of a ppm spec (A, C or D, in any
// case; default A).
func (sp *spec) ppmEscape() (ppm.Method, error) {
	switch e := strings.ToUpper(sp.str("escape", "A")); e {
	case "A":
		return ppm.MethodA, nil
	case "C":
		return ppm.MethodC, nil
	case "D":
		return ppm.MethodD, nil
	default:
		return 0, fmt.Errorf("methods: %q: unknown PPM escape method %q (A, C, D)", sp.text, e)
	}
}

// buildMarkov makes the order-k Dirichlet(α) Markov estimator
// (markov[:k=][:alpha=0.5][:init=pad|shorter]), or the unigram one
// (k = 0; unigram[:alpha=0.5][:init=…]).
func buildMarkov(sp *spec, d Defaults) (Built, error) {
	b := Built{Spec: sp.text}
	k := 0
	var err error
	if sp.name == "markov" {
		if k, err = sp.int("k", d.D); err != nil {
			return b, err
		}
	}
	alpha, _, err := sp.float("alpha", 0.5)
	if err != nil {
		return b, err
	}
	var opts markov.Options
	switch v := sp.str("init", "pad"); v {
	case "pad":
	case "shorter":
		opts.Init = markov.Shorter
	default:
		return b, fmt.Errorf("methods: %q: unknown init %q (pad, shorter)", sp.text, v)
	}
	p, err := markov.New(d.A, k, alpha, opts)
	b.Predictor = p
	return b, err
}

// buildConstruct makes the paper's (D+2)-layer CTW transformer
// (construct[:D=][:lambda=][:alpha=][:c=inf]); c, the factor of every W_K,
// is a positive number (softmax attention) or inf (the exact hard-attention
// limit).
func buildConstruct(sp *spec, d Defaults) (Built, error) {
	b := Built{Spec: sp.text}
	D, lam, alpha, err := sp.prior(d)
	if err != nil {
		return b, err
	}
	c := math.Inf(1)
	if v := sp.str("c", "inf"); v != "inf" {
		if c, err = strconv.ParseFloat(v, 64); err != nil || !(c > 0) {
			return b, fmt.Errorf("methods: %q: c=%q is not a positive number or inf", sp.text, v)
		}
	}
	p, err := construct.New(construct.Config{A: d.A, D: D, Lambda: lam, Alpha: alpha, C: c})
	b.Predictor = p
	return b, err
}

// namedModel is a trained transformer under another name; it keeps the
// model's PredictSequence (one forward pass per window).
type namedModel struct {
	*transformer.Model
	name string
}

// Name is the label given to the model.
func (n namedModel) Name() string { return n.name }

var _ predict.SequencePredictor = namedModel{}

// buildTF loads a trained transformer (tf:path=DIR[:name=LABEL]).
func buildTF(sp *spec, d Defaults) (Built, error) {
	b := Built{Spec: sp.text}
	path := sp.str("path", "")
	if path == "" {
		return b, fmt.Errorf("methods: %q: tf needs path=DIR (a directory written by 'vomc train', or a .safetensors file)", sp.text)
	}
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "model.safetensors")
		if _, err := os.Stat(file); err != nil {
			if _, cerr := os.Stat(filepath.Join(path, "checkpoint.safetensors")); cerr == nil {
				return b, fmt.Errorf("methods: %q: %s has a checkpoint but no model.safetensors: %w", sp.text, path, ErrUnfinished)
			}
		}
	}
	m, err := transformer.LoadSafetensorsOn(d.Backend, file)
	if err != nil {
		if strings.Contains(err.Error(), `"vomc-torch-module"`) {
			return b, fmt.Errorf("methods: %q: %w; this is a model of the PyTorch engine's own module (e.g. --arch lstm), which tf cannot run: write its predictions with 'vomc predict --model %s --data DATA --out P.npy' and evaluate them as npy:path=P.npy", sp.text, err, path)
		}
		return b, fmt.Errorf("methods: %q: %w", sp.text, err)
	}
	if m.Config.Alphabet != d.A {
		return b, fmt.Errorf("methods: %q: the model has alphabet size %d, the data %d", sp.text, m.Config.Alphabet, d.A)
	}
	// the run's directory names the model; a loose file its base name
	base := filepath.Base(filepath.Clean(path))
	if base == "model.safetensors" {
		base = filepath.Base(filepath.Dir(filepath.Clean(path)))
	}
	base = strings.TrimSuffix(base, ".safetensors")
	b.Predictor = namedModel{m, sp.str("name", m.Name()+"@"+base)}
	b.Note = fmt.Sprintf("%s: %d parameters, context N=%d (longer windows slide)", file, m.Config.NumParams(), m.Config.Context)
	return b, nil
}

// buildSynth loads a synthetic "TF 2-0" model (synth:path=DIR[:name=LABEL]):
// DIR/model.safetensors, or DIR itself when it is a file. Its name is the
// paper's label of its variant (e.g. "TF 2-0 w/ all counts"), or LABEL.
func buildSynth(sp *spec, d Defaults) (Built, error) {
	b := Built{Spec: sp.text}
	path := sp.str("path", "")
	if path == "" {
		return b, fmt.Errorf("methods: %q: synth needs path=DIR (a directory written by 'vomc synth', or its model.safetensors)", sp.text)
	}
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "model.safetensors")
	}
	m, err := synth.LoadOn(d.Backend, file)
	if err != nil {
		return b, fmt.Errorf("methods: %q: %w", sp.text, err)
	}
	if m.Config.A != d.A {
		return b, fmt.Errorf("methods: %q: the model has alphabet size %d, the data %d", sp.text, m.Config.A, d.A)
	}
	m.DisplayName = sp.str("name", "")
	b.Predictor = m
	b.Note = fmt.Sprintf("%s: %s, D=%d, %d features, %d parameters, context %d (longer windows slide)",
		file, synth.ShortName(m.Config.Variant), m.Config.D, m.Config.Features(), m.Config.NumParams(), m.Config.Context)
	return b, nil
}

// Predictors returns the predictors of built methods.
func Predictors(bs []Built) []predict.Predictor {
	out := make([]predict.Predictor, len(bs))
	for i, b := range bs {
		out[i] = b.Predictor
	}
	return out
}
