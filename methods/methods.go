// Package methods turns method specifications, as typed on vomc's command
// line, into predictors. A list is comma-separated; each method is a kind
// followed by colon-separated parameters:
//
//	bayes                                    (the exact Bayes predictor of the data set's own prior)
//	ctw[:D=5][:lambda=0.15][:alpha=0.5][:init=pad|condition|shorter][:form=blend|theorem1|ratio]
//	kn[:order=5][:delta=0.7][:cont]          (δ tuned on training windows when absent)
//	ppm[:order=5][:escape=A|C|D][:excl][:norm]
//	markov[:k=2][:alpha=0.5][:init=pad|shorter]
//	unigram[:alpha=0.5][:init=pad|shorter]
//	tf:path=DIR[:name=LABEL][:ablate=HEADS[:mode=zero|mean|resample][:refs=256|test][:seed=1]][:pattern=HEAD=PATTERN+…]
//	                                         (a transformer trained by `vomc train`; heads ablated or set to exact patterns, below)
//	construct[:D=5][:lambda=0.15][:alpha=0.5][:c=inf]  (the paper's (D+2)-layer CTW transformer)
//	synth:path=DIR[:name=LABEL]              (a Fig. 8 "TF 2-0" model trained by `vomc synth`)
//	npy:path=FILE.npy[:name=LABEL]           (any model's distributions, shape (windows, N, A); see LoadNPY)
//	torch:path=RUN[:name=LABEL]              (a model of 'vomc train --engine torch', any --arch, run by that engine)
//
// Parameters left out take the values of Defaults (the data set's prior for
// CTW; order = D for the others), so "ctw,kn,ppm" compares the three at the
// source's depth. A tf method loads DIR/model.safetensors (or DIR itself
// when it is a .safetensors file); its name is the model's, e.g.
// "TF(L=2,H=[4,4],E=64,N=256)@run1" with the directory's base name after
// the @, so that several runs of one architecture can be compared, or
// LABEL when given. Paths may not contain ':' or ','.
//
// A tf method may intervene on its model's attention heads
// (transformer.Intervention), which makes it one more method that every
// caller (vomc eval, its tables and paired excesses, reproduce, the
// explorer) takes unchanged:
//
//	tf:path=DIR:ablate=L1H2+L1H3[:mode=zero|mean|resample][:refs=256|test][:seed=1]
//	tf:path=DIR:pattern=L1H1=offset:1+L2H3=suffix:2
//
// ablate names heads (1-based, as attention maps label them) whose
// attention output, before the layer's output projection, is replaced:
// by 0 (mode=zero, the default; the projection's bias stays), by its mean
// at that position over refs reference windows (mode=mean), or by its
// value at that position in one of them (mode=resample; the window is a
// hash of seed and the symbols up to the position). The reference windows
// are drawn from the data's prior with seed (window i: a tree from
// stream 2i, its N symbols from stream 2i+1), not taken from the
// evaluated windows, so that an intervened model predicts each window
// from that window alone, like any predictor; with refs=test they are the
// evaluated windows themselves (Defaults.Windows: the mean over the
// evaluated windows at each position, at the cost of a pass over them;
// resample may then draw a window's own values, with probability 1/W).
// Their values are the intact model's. pattern replaces heads' attention weights by exact
// patterns: offset:d (weight 1 on key t−d, key 0 when t < d) or suffix:k
// (uniform over the keys j < t that follow an earlier occurrence of the
// length-k suffix x[t−k+1..t]; uniform over 0..t when there is none). A
// head may be named once. Heads that the model does not have are refused
// by List.Check, before any work, with the closest head that it has.
//
// A list is parsed once, at the edge (Parse, or List as a flag value),
// into a List of typed Specs; everything after reads that value: Check
// (the files exist), MemoryEstimate, Build, the labels and Find (which
// method a name such as --reference means). Kinds and parameter names are
// matched without regard to case, and so are keyword values (init, form,
// escape, booleans, inf); paths and labels are taken as typed. Every
// kind's parameters are one table (kinds), so a parameter added there is
// parsed, checked and offered as a did-you-mean before any work.
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
	"github.com/vomc/vomc/trainrun"
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
	// TuneProgress, when not nil, receives the progress of each δ tuning
	// (kn.TuneProgress): loss evaluations done of kn.TuneEvaluations.
	TuneProgress func(done, total int) `json:"-"`
	// Windows are the evaluated windows, which an npy method's
	// distributions are matched against (nil when not known).
	Windows [][]byte
	// Prior is the data set's prior, which the bayes method is the exact
	// Bayes predictor of (nil: unknown, and bayes is refused). It is not
	// part of the JSON form: the data behind it is.
	Prior *source.Prior `json:"-"`
	// Torch is the PyTorch engine that torch methods' models run on,
	// made once by the caller (its interpreter: Torch.Python, else
	// $VOMC_PYTHON, else the first with torch and numpy; nil: a torch
	// method is refused).
	Torch *trainrun.Torch `json:"-"`
	// Backend is the compute backend of tf and synth methods' models
	// (UsesBackend), chosen by the caller (nil: building one fails,
	// transformer.ErrNoBackend).
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

// Built is one constructed method: its spec, its predictor (whose Name is
// the method's label) and a note on how it was configured (e.g. the tuned
// δ).
type Built struct {
	Spec      Spec
	Predictor predict.Predictor
	Note      string
}

// Build constructs the predictors of list with the defaults d, tuning
// KN's discount on d.Tune where needed. It checks the whole list first
// (List.Check), so that a missing file in the fifth method is reported
// before the first is tuned, and refuses two methods with the same label.
func Build(list List, d Defaults) ([]Built, error) {
	if err := list.Check(); err != nil {
		return nil, err
	}
	out := make([]Built, 0, len(list))
	seen := map[string]string{}
	for _, s := range list {
		a := &args{Spec: s}
		b, err := kinds[s.Kind].build(a, d)
		b.Spec = s
		if err != nil {
			return nil, err
		}
		if err := a.unread(); err != nil {
			return nil, err
		}
		if prev, dup := seen[b.Predictor.Name()]; dup {
			return nil, fmt.Errorf("methods: %q and %q are the same method %s", prev, s.text, b.Predictor.Name())
		}
		seen[b.Predictor.Name()] = s.text
		out = append(out, b)
	}
	return out, nil
}

// Parameters shared by several kinds: the CTW prior's (ctw, construct),
// the fixed orders' (kn, ppm) and the model files' (tf, synth, npy).
var (
	depthParam  = paramDef{name: "D", value: intValue(0)}
	lambdaParam = paramDef{name: "lambda", value: floatValue}
	alphaParam  = paramDef{name: "alpha", value: floatValue}
	orderParam  = paramDef{name: "order", value: intValue(0)}
	labelParam  = paramDef{name: "name", value: textValue}
)

// kinds are the method kinds of Names: each one's parameters (in the
// order of the package documentation), whether its model runs on
// Defaults.Backend, its builder and its memory estimate (MemoryEstimate;
// nil: nothing counted). A parameter added here is parsed, checked,
// canonicalised and offered as a did-you-mean everywhere; its builder
// must read it (Build refuses a parameter its builder ignores).
var kinds = map[string]kindDef{
	"bayes": {build: buildBayes, memory: bayesMemory},
	"ctw": {params: []paramDef{depthParam, lambdaParam, alphaParam,
		{name: "init", value: keyword("pad", "condition", "shorter")},
		{name: "form", value: keyword("blend", "theorem1", "ratio")}},
		build: buildCTW, memory: stateMemory("D")},
	"kn": {params: []paramDef{orderParam, {name: "delta", value: floatValue}, {name: "cont", value: boolValue, flag: true}},
		build: buildKN, memory: knMemory},
	"ppm": {params: []paramDef{orderParam, {name: "escape", value: keyword("A", "C", "D")},
		{name: "excl", value: boolValue, flag: true}, {name: "norm", value: boolValue, flag: true}},
		build: buildPPM, memory: stateMemory("order")},
	"markov": {params: []paramDef{{name: "k", value: intValue(0)}, {name: "alpha", value: floatValue},
		{name: "init", value: keyword("pad", "shorter")}},
		build: buildMarkov, memory: stateMemory("k")},
	"unigram": {params: []paramDef{{name: "alpha", value: floatValue}, {name: "init", value: keyword("pad", "shorter")}},
		build: buildMarkov},
	"tf": {params: []paramDef{{name: "path", value: textValue, required: "DIR (a directory written by 'vomc train', or a .safetensors file)"}, labelParam,
		{name: "ablate", value: headsValue}, {name: "mode", value: modeValue},
		{name: "pattern", value: patternValue, colons: true}, {name: "refs", value: refsValue}, {name: "seed", value: intValue(0)}},
		backend: true, build: buildTF, memory: tfMemory, check: checkTF},
	"construct": {params: []paramDef{depthParam, lambdaParam, alphaParam, {name: "c", value: positiveOrInf}},
		build: buildConstruct, memory: stateMemory("D")},
	"synth": {params: []paramDef{{name: "path", value: textValue, required: "DIR (a directory written by 'vomc synth', or its model.safetensors)"}, labelParam},
		backend: true, build: buildSynth, memory: synthMemory},
	"npy": {params: []paramDef{{name: "path", value: textValue, required: "FILE.npy (shape (windows, N, A))"}, labelParam},
		build: buildNPY, memory: npyMemory},
	"torch": {params: []paramDef{{name: "path", value: textValue, required: "RUN (a directory written by 'vomc train --engine torch', or its model.safetensors)"}, labelParam},
		build: buildTorch, memory: torchMemory},
}

// buildBayes makes the exact Bayes predictor of the data's prior d.Prior
// (bayes): the posterior mixture over its (depth, leaf kind) components.
func buildBayes(a *args, d Defaults) (Built, error) {
	var b Built
	if d.Prior == nil {
		return b, fmt.Errorf("methods: %q: bayes needs the data's prior, read from a vomc data set's manifest (this data has none)", a.text)
	}
	if d.Prior.A != d.A {
		return b, fmt.Errorf("methods: %q: the prior has alphabet size %d, the data %d", a.text, d.Prior.A, d.A)
	}
	p, err := bayes.New(*d.Prior)
	if err != nil {
		return b, fmt.Errorf("methods: %q: %w", a.text, err)
	}
	b.Predictor = p
	b.Note = fmt.Sprintf("the exact Bayes predictor of the data's prior: a posterior mixture over %d (depth, leaf kind) component(s)", p.Components())
	return b, nil
}

// prior reads the CTW prior parameters D, lambda and alpha of a ctw or
// construct spec, defaulting to d's.
func (a *args) prior(d Defaults) (D int, lambda, alpha float64) {
	D = a.int("D", d.D)
	lambda, _ = a.float("lambda", d.Lambda)
	alpha, _ = a.float("alpha", d.Alpha)
	return D, lambda, alpha
}

// buildCTW makes a CTW predictor
// (ctw[:D=][:lambda=][:alpha=][:init=pad|condition|shorter][:form=blend|theorem1|ratio]).
func buildCTW(a *args, d Defaults) (Built, error) {
	var b Built
	D, lam, alpha := a.prior(d)
	init, err := ctw.ParseInit(a.str("init", "pad"))
	if err != nil {
		return b, err
	}
	form := map[string]ctw.Form{"blend": ctw.Blend, "theorem1": ctw.Theorem1, "ratio": ctw.Ratio}[a.str("form", "blend")]
	p, err := ctw.New(ctw.Config{A: d.A, D: D, Lambda: lam, Alpha: alpha, Init: init, Form: form})
	b.Predictor = p
	return b, err
}

// buildKN makes an interpolated Kneser-Ney predictor
// (kn[:order=][:delta=][:cont]); without delta the discount δ is the one
// of least mean loss (nats per symbol) on the training windows d.Tune,
// which the note records.
func buildKN(a *args, d Defaults) (Built, error) {
	var b Built
	order := a.int("order", d.D)
	opts := kn.Options{Continuation: a.flag("cont")}
	delta, given := a.float("delta", 0)
	if !given {
		if len(d.Tune) == 0 {
			return b, fmt.Errorf("methods: %q: no delta given and no training windows to tune it on", a.text)
		}
		var loss float64
		var err error
		delta, loss, err = kn.TuneProgress(d.Tune, d.A, order, opts, d.TuneProgress)
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
func buildPPM(a *args, d Defaults) (Built, error) {
	var b Built
	esc := map[string]ppm.Method{"A": ppm.MethodA, "C": ppm.MethodC, "D": ppm.MethodD}[a.str("escape", "A")]
	p, err := ppm.New(d.A, a.int("order", d.D), ppm.Options{Method: esc, Exclusion: a.flag("excl"), Normalize: a.flag("norm")})
	b.Predictor = p
	return b, err
}

// buildMarkov makes the order-k Dirichlet(α) Markov estimator
// (markov[:k=][:alpha=0.5][:init=pad|shorter]), or the unigram one
// (k = 0; unigram[:alpha=0.5][:init=…]).
func buildMarkov(a *args, d Defaults) (Built, error) {
	var b Built
	k := 0
	if a.Kind == "markov" {
		k = a.int("k", d.D)
	}
	alpha, _ := a.float("alpha", 0.5)
	var opts markov.Options
	if a.str("init", "pad") == "shorter" {
		opts.Init = markov.Shorter
	}
	p, err := markov.New(d.A, k, alpha, opts)
	b.Predictor = p
	return b, err
}

// buildConstruct makes the paper's (D+2)-layer CTW transformer
// (construct[:D=][:lambda=][:alpha=][:c=inf]); c, the factor of every W_K,
// is a positive number (softmax attention) or inf (the exact hard-attention
// limit).
func buildConstruct(a *args, d Defaults) (Built, error) {
	var b Built
	D, lam, alpha := a.prior(d)
	c := math.Inf(1)
	if v := a.str("c", "inf"); v != "inf" {
		c, _ = strconv.ParseFloat(v, 64) // a positive number (ParseSpec)
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
func buildTF(a *args, d Defaults) (Built, error) {
	var b Built
	path := a.str("path", "") // required (ParseSpec)
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "model.safetensors")
		if _, err := os.Stat(file); err != nil {
			if _, cerr := os.Stat(filepath.Join(path, "checkpoint.safetensors")); cerr == nil {
				return b, fmt.Errorf("methods: %q: %s has a checkpoint but no model.safetensors: %w", a.text, path, ErrUnfinished)
			}
		}
	}
	m, err := transformer.LoadSafetensorsOn(d.Backend, file)
	ckptStep := -1 // a checkpoint file's step (its current parameters)
	if errors.Is(err, transformer.ErrCheckpointFile) {
		m, ckptStep, err = transformer.LoadCheckpointModelOn(d.Backend, file)
	}
	if err != nil {
		if strings.Contains(err.Error(), `"vomc-torch-module"`) {
			return b, fmt.Errorf("methods: %q: %w; this is a model of the PyTorch engine's own module (--arch lstm or MODULE:FACTORY), which tf cannot run: evaluate it as torch:path=%s (run by the torch engine)", a.text, err, path)
		}
		return b, fmt.Errorf("methods: %q: %w", a.text, err)
	}
	if m.Config.Alphabet != d.A {
		return b, fmt.Errorf("methods: %q: the model has alphabet size %d, the data %d", a.text, m.Config.Alphabet, d.A)
	}
	// the run's directory names the model; a loose file its base name
	base := filepath.Base(filepath.Clean(path))
	if base == "model.safetensors" {
		base = filepath.Base(filepath.Dir(filepath.Clean(path)))
	}
	base = strings.TrimSuffix(base, ".safetensors")
	if ckptStep >= 0 { // the run's directory and the checkpoint's step
		base = fmt.Sprintf("%s-step%d", filepath.Base(filepath.Dir(filepath.Clean(file))), ckptStep)
	}
	b.Note = fmt.Sprintf("%s: %d parameters, context N=%d (longer windows slide)", file, m.Config.NumParams(), m.Config.Context)
	if ckptStep >= 0 {
		b.Note += fmt.Sprintf("; the current parameters of a training checkpoint at step %d", ckptStep)
	}
	if !intervened(a.Spec) {
		b.Predictor = namedModel{m, a.str("name", m.Name()+"@"+base)}
		return b, nil
	}
	x, err := intervene(a, m, d)
	if err != nil {
		return b, err
	}
	b.Predictor = namedIntervened{x, a.str("name", m.Name()+"@"+base+"["+interventionLabel(a.Spec, x.Intervention())+"]")}
	b.Note += "; intervened: " + x.Intervention().String()
	if x.Intervention().NeedsReferences() {
		b.Note += fmt.Sprintf(" (%d reference windows, seed=%d)", len(x.Intervention().References), x.Intervention().Seed)
	}
	return b, nil
}

// buildSynth loads a synthetic "TF 2-0" model (synth:path=DIR[:name=LABEL]):
// DIR/model.safetensors, or DIR itself when it is a file. Its name is the
// paper's label of its variant (e.g. "TF 2-0 w/ all counts"), or LABEL.
func buildSynth(a *args, d Defaults) (Built, error) {
	var b Built
	path := a.str("path", "") // required (ParseSpec)
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "model.safetensors")
	}
	m, err := synth.LoadOn(d.Backend, file)
	if err != nil {
		return b, fmt.Errorf("methods: %q: %w", a.text, err)
	}
	if m.Config.A != d.A {
		return b, fmt.Errorf("methods: %q: the model has alphabet size %d, the data %d", a.text, m.Config.A, d.A)
	}
	m.DisplayName = a.str("name", "")
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
