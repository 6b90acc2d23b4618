package eval

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/vomc/vomc/jsonfloat"
)

// JSONFormat is the value of the "format" field of WriteJSON's output.
const JSONFormat = "vomc-eval/1"

// CSVHeader lists the columns written by WriteCSV, in order.
var CSVHeader = []string{
	"method", "position",
	"mean_nats", "sd_nats", "ci_lo_nats", "ci_hi_nats",
	"mean_bits", "ci_lo_bits", "ci_hi_bits",
	"excess_nats", "excess_sd_nats", "excess_ci_lo_nats", "excess_ci_hi_nats",
	"reference",
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WriteCSV writes the per-position results in long format: a header row
// (CSVHeader) and one row per method and position (methods in order,
// positions 1..N):
//
//	method, position (1-based),
//	mean_nats, sd_nats, ci_lo_nats, ci_hi_nats   – loss across windows (nats),
//	mean_bits, ci_lo_bits, ci_hi_bits            – the same in bits,
//	excess_nats, excess_sd_nats,
//	excess_ci_lo_nats, excess_ci_hi_nats         – paired excess over the reference (nats),
//	reference                                    – the reference method's name.
//
// Then, for each pair (A, B) of Result.Pairs whose B is not the
// reference, one row per position for method A with reference B: A's
// loss, and in the excess columns the paired difference A − B. A row is
// thus keyed by (method, reference, position); the rows whose reference is
// the result's are the methods' own. (A pair whose B is the reference
// would repeat A's own rows, to the last bit, so it is not written.)
//
// Numbers are printed with the shortest representation that parses back to
// the same float64; undefined values (single window) are "NaN".
func (r *Result) WriteCSV(w io.Writer) error {
	if err := r.check(); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	row := make([]string, len(CSVHeader))
	rows := func(m *MethodResult, excess []Interval, ref string) error {
		for i := range r.N {
			p, e := m.Position[i], excess[i]
			b := p.Bits()
			row[0] = m.Name
			row[1] = strconv.Itoa(i + 1)
			row[2], row[3], row[4], row[5] = fmtFloat(p.Mean), fmtFloat(p.SD), fmtFloat(p.Lo), fmtFloat(p.Hi)
			row[6], row[7], row[8] = fmtFloat(b.Mean), fmtFloat(b.Lo), fmtFloat(b.Hi)
			row[9], row[10], row[11], row[12] = fmtFloat(e.Mean), fmtFloat(e.SD), fmtFloat(e.Lo), fmtFloat(e.Hi)
			row[13] = ref
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		return nil
	}
	for k := range r.Methods {
		if err := rows(&r.Methods[k], r.Methods[k].Excess, r.Ref().Name); err != nil {
			return err
		}
	}
	for _, p := range r.Pairs {
		if p.B == r.Ref().Name {
			continue
		}
		if err := rows(r.Method(p.A), p.Position, p.B); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteSummaryTable writes a plain, space-aligned text table with one row
// per method: the window mean, the second-half mean, and their paired
// excesses over the reference, each as "mean ± half-width" of the
// confidence interval, all in nats per symbol. The reference is marked
// with "*". A header line states the sample size and interval type. The
// pairs (Result.Pairs) follow, one row "A − B" each with the paired
// differences over the window and its second half.
func (r *Result) WriteSummaryTable(w io.Writer) error {
	if err := r.check(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	df := r.Windows - 1
	fmt.Fprintf(bw, "%d windows × %d positions, A=%d; nats/symbol; %g%% CI across windows (%s, df=%d); excess paired vs %s\n",
		r.Windows, r.N, r.AlphabetSize, 100*r.Confidence, r.CIMethod, df, r.Ref().Name)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "method\twindow (1..%d)\tsecond half (%d..%d)\texcess window\texcess second half\n", r.N, r.SecondHalfStart, r.N)
	pm := func(iv Interval) string {
		return fmt.Sprintf("%.4f ± %.4f", iv.Mean, iv.HalfWidth())
	}
	for k, m := range r.Methods {
		name := m.Name
		ew, es := pm(m.ExcessWindow), pm(m.ExcessSecondHalf)
		if k == r.Reference {
			name += " *"
			ew, es = "(reference)", "(reference)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, pm(m.Window), pm(m.SecondHalf), ew, es)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Pairs) > 0 {
		fmt.Fprintf(bw, "paired differences A − B (nats/symbol, %g%% CI across windows, paired like the excesses)\n", 100*r.Confidence)
		tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "pair\twindow (1..%d)\tsecond half (%d..%d)\n", r.N, r.SecondHalfStart, r.N)
		for _, p := range r.Pairs {
			fmt.Fprintf(tw, "%s − %s\t%s\t%s\n", p.A, p.B, pm(p.Window), pm(p.SecondHalf))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// check verifies the internal consistency of a Result (as built by hand or
// read from JSON).
func (r *Result) check() error {
	if r == nil {
		return fmt.Errorf("eval: nil result")
	}
	if r.N <= 0 {
		return fmt.Errorf("eval: result has window length %d", r.N)
	}
	if len(r.Methods) == 0 {
		return fmt.Errorf("eval: result has no methods")
	}
	if r.Reference < 0 || r.Reference >= len(r.Methods) {
		return fmt.Errorf("eval: result reference index %d outside 0..%d", r.Reference, len(r.Methods)-1)
	}
	for _, m := range r.Methods {
		if len(m.Position) != r.N || len(m.Excess) != r.N {
			return fmt.Errorf("eval: method %q has %d positions and %d excesses, want %d", m.Name, len(m.Position), len(m.Excess), r.N)
		}
	}
	for _, p := range r.Pairs {
		if r.Method(p.A) == nil || r.Method(p.B) == nil || len(p.Position) != r.N {
			return fmt.Errorf("eval: pair %q − %q: not two of the result's methods, or %d positions, want %d", p.A, p.B, len(p.Position), r.N)
		}
	}
	return nil
}

// jsonDoc is the JSON document of WriteJSON (layout documented there).
type jsonDoc struct {
	Format  string       `json:"format"`
	Config  jsonConfig   `json:"config"`
	Methods []jsonMethod `json:"methods"`
	Pairs   []jsonPair   `json:"pairs,omitempty"`
}

type jsonPair struct {
	A          string       `json:"a"`
	B          string       `json:"b"`
	Window     jsonInterval `json:"window"`
	SecondHalf jsonInterval `json:"second_half"`
	Position   jsonSeries   `json:"position"`
}

type jsonConfig struct {
	Windows         int               `json:"windows"`
	WindowLength    int               `json:"window_length"`
	AlphabetSize    int               `json:"alphabet_size"`
	Confidence      float64           `json:"confidence"`
	CIMethod        string            `json:"ci_method"`
	Critical        jfloat            `json:"critical_value"`
	SecondHalfStart int               `json:"second_half_start"`
	Reference       string            `json:"reference"`
	Units           string            `json:"units"`
	Labels          map[string]string `json:"labels,omitempty"`
}

type jsonInterval struct {
	Mean jfloat `json:"mean"`
	SD   jfloat `json:"sd"`
	Lo   jfloat `json:"lo"`
	Hi   jfloat `json:"hi"`
}

type jsonSeries struct {
	Mean jfloats `json:"mean"`
	SD   jfloats `json:"sd"`
	Lo   jfloats `json:"lo"`
	Hi   jfloats `json:"hi"`
}

type jsonMethod struct {
	Name             string       `json:"name"`
	Window           jsonInterval `json:"window"`
	SecondHalf       jsonInterval `json:"second_half"`
	ExcessWindow     jsonInterval `json:"excess_window"`
	ExcessSecondHalf jsonInterval `json:"excess_second_half"`
	Position         jsonSeries   `json:"position"`
	Excess           jsonSeries   `json:"excess"`
	// SecondHalfWindows is optional (absent in files written before it).
	SecondHalfWindows jfloats `json:"second_half_windows,omitempty"`
	// FirstHalfWindows likewise.
	FirstHalfWindows jfloats `json:"first_half_windows,omitempty"`
}

// jfloat and jfloats write floats by vomc's JSON convention (jsonfloat:
// finite values in the shortest exact form, NaN and ±Inf as the strings
// "NaN", "+Inf", "-Inf"; null, as files of before wrote them, reads as
// NaN).
type (
	jfloat  = jsonfloat.Float
	jfloats = jsonfloat.Floats
)

func toJSONInterval(iv Interval) jsonInterval {
	return jsonInterval{jfloat(iv.Mean), jfloat(iv.SD), jfloat(iv.Lo), jfloat(iv.Hi)}
}

func fromJSONInterval(j jsonInterval) Interval {
	return Interval{Mean: float64(j.Mean), SD: float64(j.SD), Lo: float64(j.Lo), Hi: float64(j.Hi)}
}

func toJSONSeries(ivs []Interval) jsonSeries {
	s := jsonSeries{
		Mean: make(jfloats, len(ivs)), SD: make(jfloats, len(ivs)),
		Lo: make(jfloats, len(ivs)), Hi: make(jfloats, len(ivs)),
	}
	for i, iv := range ivs {
		s.Mean[i], s.SD[i], s.Lo[i], s.Hi[i] = iv.Mean, iv.SD, iv.Lo, iv.Hi
	}
	return s
}

func fromJSONSeries(s jsonSeries, what string, N int) ([]Interval, error) {
	if len(s.Mean) != N || len(s.SD) != N || len(s.Lo) != N || len(s.Hi) != N {
		return nil, fmt.Errorf("%s series have lengths %d/%d/%d/%d, want %d", what, len(s.Mean), len(s.SD), len(s.Lo), len(s.Hi), N)
	}
	out := make([]Interval, N)
	for i := range out {
		out[i] = Interval{Mean: s.Mean[i], SD: s.SD[i], Lo: s.Lo[i], Hi: s.Hi[i]}
	}
	return out, nil
}

// WriteJSON writes the whole Result (configuration, per-method summaries
// and per-position series) as one compact JSON document (layout below)
// followed by a newline. Losses are in nats ("units":"nats"); NaN and
// ±Inf values are written as the strings "NaN", "+Inf", "-Inf"
// (jsonfloat). Numbers round-trip exactly through LoadJSON.
//
//	{"format":"vomc-eval/1",
//	 "config":{"windows":n,"window_length":N,"alphabet_size":A,
//	   "confidence":0.95,"ci_method":"student-t"|"normal","critical_value":c,
//	   "second_half_start":⌊N/2⌋+1,"reference":name,"units":"nats","labels":{…}},
//	 "methods":[{"name":…,
//	   "window":{"mean","sd","lo","hi"},"second_half":{…},
//	   "excess_window":{…},"excess_second_half":{…},
//	   "position":{"mean":[N],"sd":[N],"lo":[N],"hi":[N]},
//	   "excess":{"mean":[N],"sd":[N],"lo":[N],"hi":[N]},
//	   "second_half_windows":[n]}, …],
//	 "pairs":[{"a":name,"b":name,"window":{…},"second_half":{…},
//	   "position":{"mean":[N],"sd":[N],"lo":[N],"hi":[N]}}, …]}
//
// pairs (the paired differences a − b of Result.Pairs) is absent when
// none was asked for.
//
// second_half_windows (each window's second-half mean loss, for paired
// comparisons between methods) is absent in files written before it was
// kept; LoadJSON reads both.
//
// Index k of a series is position k+1.
func (r *Result) WriteJSON(w io.Writer) error {
	if err := r.check(); err != nil {
		return err
	}
	doc := jsonDoc{
		Format: JSONFormat,
		Config: jsonConfig{
			Windows:         r.Windows,
			WindowLength:    r.N,
			AlphabetSize:    r.AlphabetSize,
			Confidence:      r.Confidence,
			CIMethod:        r.CIMethod,
			Critical:        jfloat(r.Critical),
			SecondHalfStart: r.SecondHalfStart,
			Reference:       r.Ref().Name,
			Units:           "nats",
			Labels:          r.Labels,
		},
		Methods: make([]jsonMethod, len(r.Methods)),
	}
	for k, m := range r.Methods {
		doc.Methods[k] = jsonMethod{
			Name:              m.Name,
			Window:            toJSONInterval(m.Window),
			SecondHalf:        toJSONInterval(m.SecondHalf),
			ExcessWindow:      toJSONInterval(m.ExcessWindow),
			ExcessSecondHalf:  toJSONInterval(m.ExcessSecondHalf),
			Position:          toJSONSeries(m.Position),
			Excess:            toJSONSeries(m.Excess),
			SecondHalfWindows: jfloats(m.SecondHalfWindows),
			FirstHalfWindows:  jfloats(m.FirstHalfWindows),
		}
	}
	for _, p := range r.Pairs {
		doc.Pairs = append(doc.Pairs, jsonPair{A: p.A, B: p.B, Window: toJSONInterval(p.Window),
			SecondHalf: toJSONInterval(p.SecondHalf), Position: toJSONSeries(p.Position)})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// LoadJSON reads a Result written by WriteJSON, checking its format tag and
// internal consistency (series lengths, reference name).
func LoadJSON(r io.Reader) (*Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("eval: reading JSON: %w", err)
	}
	var doc jsonDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("eval: decoding JSON: %w", err)
	}
	if doc.Format != JSONFormat {
		return nil, fmt.Errorf("eval: JSON format is %q, want %q", doc.Format, JSONFormat)
	}
	c := doc.Config
	if c.WindowLength <= 0 {
		return nil, fmt.Errorf("eval: JSON window_length %d must be positive", c.WindowLength)
	}
	if c.Units != "nats" {
		return nil, fmt.Errorf("eval: JSON units %q, want \"nats\"", c.Units)
	}
	res := &Result{
		Windows:         c.Windows,
		N:               c.WindowLength,
		AlphabetSize:    c.AlphabetSize,
		Confidence:      c.Confidence,
		Critical:        float64(c.Critical),
		CIMethod:        c.CIMethod,
		SecondHalfStart: c.SecondHalfStart,
		Reference:       -1,
		Labels:          c.Labels,
		Methods:         make([]MethodResult, len(doc.Methods)),
	}
	if len(doc.Methods) == 0 {
		return nil, fmt.Errorf("eval: JSON has no methods")
	}
	for k, jm := range doc.Methods {
		m := &res.Methods[k]
		m.Name = jm.Name
		if jm.Name == c.Reference && res.Reference < 0 {
			res.Reference = k
		}
		m.Window = fromJSONInterval(jm.Window)
		m.SecondHalf = fromJSONInterval(jm.SecondHalf)
		m.ExcessWindow = fromJSONInterval(jm.ExcessWindow)
		m.ExcessSecondHalf = fromJSONInterval(jm.ExcessSecondHalf)
		if m.Position, err = fromJSONSeries(jm.Position, fmt.Sprintf("eval: JSON method %q position", jm.Name), res.N); err != nil {
			return nil, err
		}
		if m.Excess, err = fromJSONSeries(jm.Excess, fmt.Sprintf("eval: JSON method %q excess", jm.Name), res.N); err != nil {
			return nil, err
		}
		if n := len(jm.SecondHalfWindows); n > 0 {
			if n != res.Windows {
				return nil, fmt.Errorf("eval: JSON method %q has %d per-window second-half losses, want %d", jm.Name, n, res.Windows)
			}
			m.SecondHalfWindows = []float64(jm.SecondHalfWindows)
		}
		if n := len(jm.FirstHalfWindows); n > 0 {
			if n != res.Windows {
				return nil, fmt.Errorf("eval: JSON method %q has %d per-window first-half losses, want %d", jm.Name, n, res.Windows)
			}
			m.FirstHalfWindows = []float64(jm.FirstHalfWindows)
		}
	}
	if res.Reference < 0 {
		return nil, fmt.Errorf("eval: JSON reference %q is not among its methods", c.Reference)
	}
	for _, jp := range doc.Pairs {
		p := PairResult{A: jp.A, B: jp.B, Window: fromJSONInterval(jp.Window), SecondHalf: fromJSONInterval(jp.SecondHalf)}
		if p.Position, err = fromJSONSeries(jp.Position, fmt.Sprintf("eval: JSON pair %q − %q position", jp.A, jp.B), res.N); err != nil {
			return nil, err
		}
		res.Pairs = append(res.Pairs, p)
	}
	if err := res.check(); err != nil {
		return nil, err
	}
	return res, nil
}

// LoadJSONFile is LoadJSON on the named file.
func LoadJSONFile(path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	res, err := LoadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return res, nil
}

// String returns the summary table (see WriteSummaryTable).
func (r *Result) String() string {
	var sb strings.Builder
	if err := r.WriteSummaryTable(&sb); err != nil {
		return "eval: " + err.Error()
	}
	return sb.String()
}
