package explore

import (
	"bytes"
	"embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/transformer"
)

//go:embed assets
var assets embed.FS

// assetNames are the files the page is made of (assets/NAME).
var assetNames = []string{"index.html", "app.js", "style.css"}

// Meta describes what the server shows: the data, the models and the
// references.
type Meta struct {
	Version     int         `json:"version"`
	Data        string      `json:"data"`
	A           int         `json:"A"`
	D           int         `json:"D"`
	T           int         `json:"T"`
	Windows     int         `json:"windows"`
	Prior       string      `json:"prior"`
	Fresh       bool        `json:"fresh"`
	MaxK        int         `json:"max_k"`
	HeadWindows int         `json:"head_windows"`
	MeanWindows int         `json:"mean_windows"`
	Refs        []RefMeta   `json:"refs"`
	Excess      string      `json:"excess"`
	CTW         string      `json:"ctw"`
	Models      []ModelMeta `json:"models"`
	Notes       []string    `json:"notes,omitempty"`
	Static      bool        `json:"static,omitempty"`
}

// RefMeta describes a reference method.
type RefMeta struct {
	Name string `json:"name"`
	Spec string `json:"spec"`
	Note string `json:"note,omitempty"`
}

// ModelMeta describes a model and its training run.
type ModelMeta struct {
	Name   string             `json:"name"`
	Dir    string             `json:"dir"`
	Config transformer.Config `json:"config"`
	Params int                `json:"params"`
	// Steps are the snapshot steps (empty: the run kept none).
	Steps []int `json:"steps"`
	// Dynamics are the run's 'vomc dynamics' results when its directory
	// holds dynamics/dynamics.json (phases, head emergence, excess by step).
	Dynamics *DynMeta `json:"dynamics,omitempty"`
}

// DynMeta is the part of a dynamics.Result the step slider marks.
type DynMeta struct {
	Excess     string               `json:"excess_reference"`
	Windows    int                  `json:"windows"`
	Phases     []dynamics.Phase     `json:"phases"`
	Emergences []dynamics.Emergence `json:"emergences"`
	Points     []DynPoint           `json:"points"`
}

// DynPoint is one measured snapshot.
type DynPoint struct {
	Step       int      `json:"step"`
	Excess     float64  `json:"excess"`
	ExcessHalf float64  `json:"excess_half"`
	Closest    string   `json:"closest"`
	Tied       []string `json:"tied_with,omitempty"`
	Labelled   int      `json:"labelled_heads"`
}

// Meta returns the description of the server's contents.
func (s *Server) Meta() *Meta {
	ds := s.data
	pr := s.prior
	prior := fmt.Sprintf("A=%d, D∈%v, λ=%g, α=%v, %s leaves", pr.A, pr.Depths, pr.Lambda, pr.Alpha, pr.Leaves)
	m := &Meta{Version: 1, Data: s.dataName(), A: pr.A, D: s.D, T: s.T, Windows: ds.Windows(), Prior: prior,
		Fresh: ds.Manifest.Fresh, MaxK: s.maxK, HeadWindows: min(s.opts.HeadWindows, ds.Windows()),
		MeanWindows: min(s.opts.MeanWindows, ds.Windows()), Excess: s.excess, CTW: s.ctw.Name(), Notes: s.notes}
	for _, r := range s.refs {
		m.Refs = append(m.Refs, RefMeta{Name: r.Name, Spec: r.Spec, Note: r.Note})
	}
	for _, md := range s.models {
		mm := ModelMeta{Name: md.Name, Dir: md.Dir, Config: md.Config, Params: md.Params, Steps: md.Steps}
		if mm.Steps == nil {
			mm.Steps = []int{}
		}
		if r := md.Dyn; r != nil {
			dm := &DynMeta{Excess: r.Excess, Windows: r.Windows, Phases: r.Phases, Emergences: r.Emergences}
			for _, p := range r.Points {
				n := 0
				for _, h := range p.Heads {
					if h.Labelled {
						n++
					}
				}
				dm.Points = append(dm.Points, DynPoint{Step: p.Step, Excess: p.Excess.Mean, ExcessHalf: p.ExcessHalf.Mean,
					Closest: p.Closest, Tied: p.Tied, Labelled: n})
			}
			mm.Dynamics = dm
		}
		m.Models = append(m.Models, mm)
	}
	return m
}

// Handler is the HTTP interface: the page (/), its assets (/assets/NAME)
// and the JSON API under /api/ (GET only; see the package documentation).
// Requests whose Host is not a loopback name or one of allowedHosts ("*":
// any) are refused, so that no other web page can read the API through
// DNS rebinding.
func (s *Server) Handler(allowedHosts ...string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.serveIndex)
	mux.HandleFunc("/assets/", s.serveAsset)
	mux.HandleFunc("/api/meta", s.api(func(r *http.Request) (any, error) { return s.Meta(), nil }))
	mux.HandleFunc("/api/refs", s.api(s.apiRefs))
	mux.HandleFunc("/api/model", s.api(s.apiModel))
	mux.HandleFunc("/api/position", s.api(s.apiPosition))
	mux.HandleFunc("/api/labels", s.api(s.apiLabels))
	mux.HandleFunc("/api/mean", s.api(s.apiMean))
	mux.HandleFunc("/api/map", s.serveMap)
	mux.HandleFunc("/api/static", s.serveStatic)
	return guard(mux, allowedHosts)
}

// guard refuses other methods than GET and HEAD, foreign Host headers, and
// turns a panic into a 500 answer.
func guard(next http.Handler, allowed []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				writeError(w, panicError(v))
			}
		}()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "vomc explore is read-only: GET requests only"})
			return
		}
		if !hostAllowed(r.Host, allowed) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": fmt.Sprintf("host %q is not allowed (start vomc explore with --host to serve other names)", r.Host)})
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; connect-src 'self'")
		next.ServeHTTP(w, r)
	})
}

func hostAllowed(hostport string, allowed []string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || host == "" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" && r.URL.Path != "/index.html" {
		writeError(w, fmt.Errorf("%w: %s (the page is /, its data under /api/)", ErrNotFound, r.URL.Path))
		return
	}
	b, _ := assets.ReadFile("assets/index.html")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}

// serveAsset serves the embedded assets by exact name: nothing else, and
// no file of the disk, is reachable.
func (s *Server) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/assets/")
	for _, a := range assetNames {
		if name == a {
			b, _ := assets.ReadFile("assets/" + a)
			w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(a)))
			w.Header().Set("Cache-Control", "no-store")
			w.Write(b)
			return
		}
	}
	writeError(w, fmt.Errorf("%w: asset %q (assets: %s)", ErrNotFound, name, strings.Join(assetNames, ", ")))
}

// api wraps a JSON endpoint.
func (s *Server) api(f func(r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := f(r)
		if err != nil {
			writeError(w, err)
			return
		}
		if p, ok := v.(pending); ok {
			writeJSON(w, http.StatusAccepted, map[string]any{"pending": true, "what": string(p)})
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// pending answers a request whose result is being computed (HTTP 202).
type pending string

func writeJSON(w http.ResponseWriter, code int, v any) {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		code = http.StatusInternalServerError
		b.Reset()
		json.NewEncoder(&b).Encode(map[string]string{"error": "explore: encoding the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, ErrBadRequest):
		code = http.StatusBadRequest
	}
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

// query reads the request's parameters.
type query struct{ r *http.Request }

func (q query) int(name string, def int, required bool) (int, error) {
	v := q.r.URL.Query().Get(name)
	if v == "" {
		if required {
			return 0, badf("parameter %s is missing", name)
		}
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, badf("parameter %s=%q is not an integer", name, v)
	}
	return n, nil
}

func (q query) step() (int, error) {
	v := q.r.URL.Query().Get("step")
	if v == "" || v == "final" {
		return FinalStep, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badf("parameter step=%q is not a training step (a number ≥ 0, or final)", v)
	}
	return n, nil
}

// window resolves w= (a data set window) or seq= (a pasted sequence).
func (s *Server) window(q query) (*window, error) {
	if seq := q.r.URL.Query().Get("seq"); seq != "" {
		return s.Pasted(seq)
	}
	w, err := q.int("w", 0, true)
	if err != nil {
		return nil, err
	}
	return s.Window(w)
}

func (s *Server) modelStep(q query) (int, int, error) {
	mi, err := q.int("model", 0, false)
	if err != nil {
		return 0, 0, err
	}
	step, err := q.step()
	if err != nil {
		return 0, 0, err
	}
	m, err := s.model(mi)
	if err != nil {
		return 0, 0, err
	}
	if _, err := m.at(step); err != nil {
		return 0, 0, err
	}
	return mi, step, nil
}

func (s *Server) apiRefs(r *http.Request) (any, error) {
	win, err := s.window(query{r})
	if err != nil {
		return nil, err
	}
	return s.Refs(win)
}

func (s *Server) apiModel(r *http.Request) (any, error) {
	q := query{r}
	win, err := s.window(q)
	if err != nil {
		return nil, err
	}
	mi, step, err := s.modelStep(q)
	if err != nil {
		return nil, err
	}
	return s.ModelWindow(win, mi, step)
}

func (s *Server) apiPosition(r *http.Request) (any, error) {
	q := query{r}
	win, err := s.window(q)
	if err != nil {
		return nil, err
	}
	mi, step, err := s.modelStep(q)
	if err != nil {
		return nil, err
	}
	t, err := q.int("t", 0, true)
	if err != nil {
		return nil, err
	}
	p, err := s.PositionAt(win, t, mi, step)
	if err != nil {
		return nil, err
	}
	m, _ := s.model(mi) // checked by modelStep
	iv, err := q.intervention(m.Config)
	if err != nil {
		return nil, err
	}
	if iv != nil {
		if p.Intervened, err = s.IntervenedAt(win, t, mi, step, *iv); err != nil {
			return nil, err
		}
	}
	switch f := r.URL.Query().Get("rows"); f {
	case "", "json":
	case "b64":
		for i := range p.Heads {
			h := &p.Heads[i]
			buf := make([]byte, 0, 4*len(h.Row))
			for _, v := range h.Row {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
			h.RowB64, h.Row = base64.StdEncoding.EncodeToString(buf), nil
		}
	default:
		return nil, badf("rows=%q: json (numbers) or b64 (base64 of little-endian float32)", f)
	}
	return p, nil
}

func (s *Server) apiLabels(r *http.Request) (any, error) {
	return pendingAPI(s, r, "head labels", s.Labels)
}

func (s *Server) apiMean(r *http.Request) (any, error) {
	return pendingAPI(s, r, "mean curves", s.Mean)
}

// pendingAPI answers a request for a value computed in the background per
// (model, step) (get: Labels or Mean): the value, or a pending answer
// naming what while it is computed (?wait=1 waits for it).
func pendingAPI[T any](s *Server, r *http.Request, what string, get func(mi, step int, wait bool) (T, bool, error)) (any, error) {
	q := query{r}
	mi, step, err := s.modelStep(q)
	if err != nil {
		return nil, err
	}
	v, p, err := get(mi, step, q.r.URL.Query().Get("wait") == "1")
	if err != nil {
		return nil, err
	}
	if p {
		return pending(what), nil
	}
	return v, nil
}

// serveMap answers /api/map: head (layer, head)'s attention map on a window
// as little-endian float32, rows q0..q1−1 × columns k0..k1−1 (default the
// whole T×T map), with the shape in the X-Rows and X-Cols headers.
func (s *Server) serveMap(w http.ResponseWriter, r *http.Request) {
	b, rows, cols, err := s.mapBytes(query{r})
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Rows", strconv.Itoa(rows))
	w.Header().Set("X-Cols", strconv.Itoa(cols))
	w.Write(b)
}

// serveStatic answers /api/static?w=W&t=T with the static page of window W
// (WriteStatic) as a download.
func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	q := query{r}
	win, err := q.int("w", 0, true)
	if err == nil {
		_, err = s.Window(win)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	t, err := q.int("t", -1, false)
	if err != nil {
		writeError(w, err)
		return
	}
	var b bytes.Buffer
	if err := s.WriteStatic(&b, win, t, true); err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="explore-window%d.html"`, win))
	w.Write(b.Bytes())
}

func (s *Server) mapBytes(q query) ([]byte, int, int, error) {
	win, err := s.window(q)
	if err != nil {
		return nil, 0, 0, err
	}
	mi, step, err := s.modelStep(q)
	if err != nil {
		return nil, 0, 0, err
	}
	l, err := q.int("layer", 0, true)
	if err != nil {
		return nil, 0, 0, err
	}
	h, err := q.int("head", 0, true)
	if err != nil {
		return nil, 0, 0, err
	}
	cfg := s.models[mi].Config
	if l < 0 || l >= cfg.Layers {
		return nil, 0, 0, fmt.Errorf("%w: layer %d: %s has layers 0..%d", ErrNotFound, l, s.models[mi].Name, cfg.Layers-1)
	}
	if h < 0 || h >= cfg.Heads[l] {
		return nil, 0, 0, fmt.Errorf("%w: head %d: layer %d of %s has heads 0..%d", ErrNotFound, h, l, s.models[mi].Name, cfg.Heads[l]-1)
	}
	T := len(win.X)
	var rg [4]int
	for i, name := range []string{"q0", "q1", "k0", "k1"} {
		def := 0
		if i%2 == 1 {
			def = T
		}
		if rg[i], err = q.int(name, def, false); err != nil {
			return nil, 0, 0, err
		}
	}
	if rg[0] < 0 || rg[0] >= rg[1] || rg[1] > T || rg[2] < 0 || rg[2] >= rg[3] || rg[3] > T {
		return nil, 0, 0, badf("range q%d..%d × k%d..%d is not inside the %d×%d map", rg[0], rg[1], rg[2], rg[3], T, T)
	}
	mv, err := s.ModelWindow(win, mi, step)
	if err != nil {
		return nil, 0, 0, err
	}
	mp := mv.Maps[l][h]
	rows, cols := rg[1]-rg[0], rg[3]-rg[2]
	b := make([]byte, 4*rows*cols)
	for i := range rows {
		row := mp[(rg[0]+i)*T+rg[2] : (rg[0]+i)*T+rg[3]]
		for j, v := range row {
			binary.LittleEndian.PutUint32(b[4*(i*cols+j):], math.Float32bits(v))
		}
	}
	return b, rows, cols, nil
}
