package explore

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/models"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// fixture is a small data set and a randomly initialised model with two
// snapshots and a dynamics.json, on disk.
type fixture struct {
	dir, model, data string
	ds               *dataset.Dataset
}

var (
	fixOnce sync.Once
	fix     fixture
	fixErr  error
)

func testFixture(t testing.TB) fixture {
	t.Helper()
	fixOnce.Do(func() {
		dir, err := os.MkdirTemp("", "explore-test-")
		if err != nil {
			fixErr = err
			return
		}
		fix, fixErr = makeFixture(dir)
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fix.dir != "" {
		os.RemoveAll(fix.dir)
	}
	os.Exit(code)
}

func makeFixture(dir string) (fixture, error) {
	f := fixture{dir: dir, model: filepath.Join(dir, "run"), data: filepath.Join(dir, "test")}
	cfg := dataset.Config{Prior: source.PaperPrior(3), K: 24, NK: 64, N: 64, Fresh: true, Seed: 5}
	ds, err := dataset.Build(cfg, 1, nil)
	if err != nil {
		return f, err
	}
	if err := ds.Write(f.data, false); err != nil {
		return f, err
	}
	if f.ds, err = dataset.Read(f.data); err != nil {
		return f, err
	}
	if err := os.MkdirAll(filepath.Join(f.model, "snapshots"), 0o755); err != nil {
		return f, err
	}
	mc := transformer.DefaultConfig(2, 2, 16, 64, 3)
	for i, step := range []int{10, 100, -1} {
		m, err := transformer.NewOn(cpu.NewDefault(), mc, uint64(7+i))
		if err != nil {
			return f, err
		}
		path := filepath.Join(f.model, "model.safetensors")
		if step >= 0 {
			path = filepath.Join(f.model, "snapshots", fmt.Sprintf("step-%09d.safetensors", step))
		}
		if err := m.SaveSafetensors(path); err != nil {
			return f, err
		}
	}
	dyn := `{"run":"run","data":"test","windows":4,"N":64,"references":["unigram","CTW(D=3,λ=0.15,α=0.5)"],"excess_reference":"CTW(D=3,λ=0.15,α=0.5)",
	"points":[{"step":10,"excess":{"mean":0.3},"excess_half":{"mean":0.2},"closest":"unigram"},{"step":100,"excess":{"mean":0.1},"excess_half":{"mean":0.05},"closest":"CTW(D=3,λ=0.15,α=0.5)","heads":[{"layer":1,"head":1,"labelled":true,"hypothesis":"previous-token d=1"}]}],
	"phases":[{"closest":"unigram","from_step":10,"to_step":10},{"closest":"CTW(D=3,λ=0.15,α=0.5)","from_step":100,"to_step":100}],
	"emergences":[{"layer":1,"head":1,"hypothesis":"previous-token d=1","label":"previous-token d=1","step":100}]}`
	if err := os.MkdirAll(filepath.Join(f.model, "dynamics"), 0o755); err != nil {
		return f, err
	}
	if err := os.WriteFile(filepath.Join(f.model, "dynamics", "dynamics.json"), []byte(dyn), 0o644); err != nil {
		return f, err
	}
	return f, nil
}

func newTestServer(t testing.TB) (*Server, fixture) {
	t.Helper()
	f := testFixture(t)
	src, err := OpenDir(f.model)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Backend: cpu.NewDefault(), Models: []ModelSource{src}, Data: f.ds, DataName: "test", HeadWindows: 6, MeanWindows: 5})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

func get(t testing.TB, h http.Handler, url string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, url, nil)
	req.Host = "127.0.0.1:8000"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func getJSON(t testing.TB, h http.Handler, url string, v any) {
	t.Helper()
	code, b := get(t, h, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestPositionNumbers checks the click answer against the packages it is
// built from: every reference's and the model's distribution, CTW's ω, the
// MAP context, the suffix matches and each head's attention row.
func TestPositionNumbers(t *testing.T) {
	s, f := newTestServer(t)
	h := s.Handler()
	const w, q = 3, 40
	var p Position
	getJSON(t, h, fmt.Sprintf("/api/position?w=%d&t=%d&model=0&step=final", w, q), &p)
	x := f.ds.Window(w)
	if p.T != q || p.Symbol != int(x[q]) || p.Next != int(x[q+1]) {
		t.Fatalf("position %d: symbol %d next %d", p.T, p.Symbol, p.Next)
	}
	A := 3
	// the model's distribution = PredictSequence row q+1
	m, err := transformer.LoadSafetensorsOn(cpu.NewDefault(), filepath.Join(f.model, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]float64, len(x)*A)
	m.PredictSequence(x, rows)
	last := p.Dist[len(p.Dist)-1]
	if last.Kind != "model" {
		t.Fatalf("last distribution is %q, want the model", last.Name)
	}
	for a := range A {
		if last.P[a] != rows[(q+1)*A+a] {
			t.Errorf("model P(%d) = %v, PredictSequence %v", a, last.P[a], rows[(q+1)*A+a])
		}
	}
	// CTW: distribution and ω from a state of its own
	c, err := ctw.New(ctw.Config{A: 3, D: 3, Lambda: 0.15, Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	st := c.NewCTWState()
	for _, a := range x[:q+1] {
		st.Observe(a)
	}
	want := make([]float64, A)
	st.Predict(want)
	omega := make([]float64, 4)
	st.Weights(omega)
	found := false
	for _, d := range p.Dist {
		if d.Name == c.Name() {
			found = true
			for a := range A {
				if math.Abs(d.P[a]-want[a]) > 1e-12 {
					t.Errorf("CTW P(%d) = %v, want %v", a, d.P[a], want[a])
				}
			}
			if l := -math.Log(want[x[q+1]]); math.Abs(*d.Loss-l) > 1e-12 {
				t.Errorf("CTW loss %v, want %v", *d.Loss, l)
			}
		}
	}
	if !found {
		t.Errorf("no %s among %v", c.Name(), p.Dist)
	}
	for l := range omega {
		if math.Abs(p.Omega[l]-omega[l]) > 1e-12 {
			t.Errorf("ω_%d = %v, want %v", l, p.Omega[l], omega[l])
		}
	}
	// the MAP context: a leaf of the MAP tree of x[0..q]
	counts, err := ctw.CountSequence(ctw.Config{A: 3, D: 3, Lambda: 0.15, Alpha: 0.5}, x[:q+1])
	if err != nil {
		t.Fatal(err)
	}
	mp := counts.MAPTree()
	leaf, err := mp.Tree.LeafFor(append(make([]byte, 3), x[:q+1]...))
	if err != nil {
		t.Fatal(err)
	}
	if p.MAP == nil || p.MAPLogPosterior != mp.LogPosterior {
		t.Fatalf("MAP context %+v (log posterior %v), want %v", p.MAP, p.MAPLogPosterior, mp.LogPosterior)
	}
	if fmt.Sprint(leaf.P) != fmt.Sprint(mapLeafP(t, mp.Tree, p.MAP)) {
		t.Errorf("MAP context %v does not lead to the MAP tree's leaf", p.MAP.Suffix)
	}
	// suffix matches and attention rows
	for k := range p.MaxK + 1 {
		for o := range 2 {
			if got, want := fmt.Sprint(p.Matches[o][k]), fmt.Sprint(nonNil(attnmap.SuffixMatches(x, q, k, o))); got != want {
				t.Errorf("matches k=%d offset %d: %s, want %s", k, o, got, want)
			}
		}
	}
	maps, err := m.AttentionMaps(x)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Heads) != 4 {
		t.Fatalf("%d heads, want 4", len(p.Heads))
	}
	for _, hd := range p.Heads {
		want := maps[hd.Layer][hd.Head][q*64 : q*64+q+1]
		if fmt.Sprint(hd.Row) != fmt.Sprint(want) {
			t.Errorf("L%dH%d row differs", hd.Layer+1, hd.Head+1)
		}
	}
	// the same rows as base64
	var pb Position
	getJSON(t, h, fmt.Sprintf("/api/position?w=%d&t=%d&model=0&step=final&rows=b64", w, q), &pb)
	for i, hd := range pb.Heads {
		raw, err := base64.StdEncoding.DecodeString(hd.RowB64)
		if err != nil || hd.Row != nil || len(raw) != 4*len(p.Heads[i].Row) {
			t.Fatalf("rows=b64: head %d: %v, %d bytes", i, err, len(raw))
		}
		for j, a := range p.Heads[i].Row {
			if math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:])) != a {
				t.Fatalf("rows=b64: head %d key %d differs", i, j)
			}
		}
	}
	// the source tree's context
	if p.True == nil || p.True.Depth > 3 {
		t.Errorf("true context %+v", p.True)
	} else {
		tree := f.ds.Trees[f.ds.TreeOf[w]]
		leaf, err := tree.LeafFor(append(make([]byte, tree.D), x[:q+1]...))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(leaf.P) != fmt.Sprint(p.True.P) {
			t.Errorf("true context's p %v, want %v", p.True.P, leaf.P)
		}
	}
}

func nonNil(a []int) []int {
	if a == nil {
		return []int{}
	}
	return a
}

func mapLeafP(t *testing.T, tree *source.Tree, c *Context) []float64 {
	n := tree.Root
	for i := range c.Depth {
		if n.IsLeaf() {
			t.Fatalf("context %v is deeper than the MAP tree", c.Suffix)
		}
		n = n.Children[c.Suffix[len(c.Suffix)-1-i]]
	}
	if !n.IsLeaf() {
		t.Fatalf("context %v ends at an inner node", c.Suffix)
	}
	return n.P
}

// TestRequestErrors: bad windows, models, steps, positions, heads, ranges,
// paths and methods get clear errors with the right status, never a panic.
func TestRequestErrors(t *testing.T) {
	s, _ := newTestServer(t)
	h := s.Handler()
	for _, c := range []struct {
		url  string
		code int
		text string
	}{
		{"/api/refs?w=24", 404, "window 24: the data set has windows 0..23"},
		{"/api/refs?w=-1", 404, "window -1"},
		{"/api/refs?w=abc", 400, `w="abc" is not an integer`},
		{"/api/refs", 400, "parameter w is missing"},
		{"/api/refs?seq=0129", 400, "pasted symbol 3 is \"9\": symbols are 0..2"},
		{"/api/refs?seq=1", 400, "2 or more symbols"},
		{"/api/model?w=0&model=1", 404, "model 1: there are models 0..0"},
		{"/api/model?w=0&model=-3", 404, "model -3"},
		{"/api/model?w=0&model=0&step=55", 404, "no snapshot at step 55 (steps: [10 100])"},
		{"/api/model?w=0&model=0&step=x", 400, "not a training step"},
		{"/api/position?w=0&t=64", 404, "position 64: the window has positions 0..63"},
		{"/api/position?w=0&t=-1", 404, "position -1"},
		{"/api/position?w=0", 400, "parameter t is missing"},
		{"/api/map?w=0&layer=2&head=0", 404, "layer 2"},
		{"/api/map?w=0&layer=0&head=2", 404, "head 2"},
		{"/api/map?w=0&layer=0&head=0&q0=5&q1=3", 400, "not inside the 64×64 map"},
		{"/api/map?w=0&layer=0&head=0&k1=65", 400, "not inside"},
		{"/api/labels?model=4", 404, "model 4"},
		{"/api/mean?model=0&step=7", 404, "no snapshot at step 7"},
		{"/assets/../../../../etc/passwd", 404, ""},
		{"/assets/..%2f..%2f..%2fetc%2fpasswd", 404, "asset"},
		{"/assets/%2e%2e/explore.go", 404, ""},
		{"/../../etc/passwd", 404, ""},
		{"/api/../../model.safetensors", 404, ""},
		{"/model.safetensors", 404, "the page is /"},
		{"/snapshots/step-000000010.safetensors", 404, ""},
		{"/api/nothing", 404, ""},
		{"/api/position?w=0&t=3&rows=xml", 400, `rows="xml"`},
	} {
		code, b := get(t, h, c.url)
		if code == 301 || code == 307 || code == 308 { // the mux cleans "..": follow once
			req := httptest.NewRequest(http.MethodGet, c.url, nil)
			req.Host = "localhost:8000"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			code, b = get(t, h, rec.Header().Get("Location"))
		}
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if code != c.code || !strings.Contains(e.Error, c.text) || code != 200 && e.Error == "" {
			t.Errorf("GET %s: %d %s, want %d with %q", c.url, code, b, c.code, c.text)
		}
		if strings.Contains(string(b), "root:") || strings.Contains(string(b), "package explore") {
			t.Errorf("GET %s served a file of the disk", c.url)
		}
	}
	// read-only and Host checks
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		req := httptest.NewRequest(m, "/api/meta", strings.NewReader("{}"))
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s /api/meta: %d, want 405", m, rec.Code)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/api/meta", nil)
	req.Host = "evil.example:80"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("foreign Host: %d, want 403", rec.Code)
	}
	rec = httptest.NewRecorder()
	s.Handler("evil.example").ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("allowed Host: %d, want 200", rec.Code)
	}
}

// TestConfined: a model directory's symbolic link to a file outside it is
// not followed (os.Root).
func TestConfined(t *testing.T) {
	f := testFixture(t)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(f.model, "model.safetensors"), filepath.Join(dir, "model.safetensors")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	src, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{Backend: cpu.NewDefault(), Models: []ModelSource{src}, Data: f.ds})
	if err == nil || !strings.Contains(err.Error(), "escapes") && !strings.Contains(err.Error(), "outside") {
		t.Errorf("a link out of the model directory: %v, want an error", err)
	}
	if _, err := OpenDir(filepath.Join(f.model, "model.safetensors")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as model: %v", err)
	}
	if _, err := OpenDir(filepath.Join(dir, "nothing")); err == nil {
		t.Error("a missing model directory: no error")
	}
	empty := t.TempDir()
	src, _ = OpenDir(empty)
	if _, err := New(Options{Backend: cpu.NewDefault(), Models: []ModelSource{src}, Data: f.ds}); err == nil || !strings.Contains(err.Error(), "no model.safetensors") {
		t.Errorf("an empty directory: %v", err)
	}
	// no backend of its own (issue 46, item 3): none given, none made
	src, _ = OpenDir(f.model)
	if _, err := New(Options{Models: []ModelSource{src}, Data: f.ds}); !errors.Is(err, transformer.ErrNoBackend) {
		t.Errorf("no backend: %v, want transformer.ErrNoBackend", err)
	}
}

func TestWindowsAndPasted(t *testing.T) {
	s, f := newTestServer(t)
	h := s.Handler()
	var r RefView
	getJSON(t, h, "/api/refs?seq=0,1,2,2,1,0,0,1,2", &r)
	if r.T != 9 || r.Index != -1 || r.True != nil || fmt.Sprint([]byte(r.X)) != "[0 1 2 2 1 0 0 1 2]" {
		t.Errorf("pasted: T %d index %d x %v", r.T, r.Index, r.X)
	}
	var r2 RefView
	getJSON(t, h, "/api/refs?seq=012210012", &r2)
	if r2.Key != r.Key {
		t.Errorf("digits and commas give keys %q and %q", r2.Key, r.Key)
	}
	var p Position
	getJSON(t, h, "/api/position?seq=012210012&t=8", &p)
	if p.Next != -1 || p.Dist[0].P != nil || len(p.Heads[0].Row) != 9 {
		t.Errorf("last position of a pasted sequence: next %d, dist %v", p.Next, p.Dist[0].P)
	}
	// every reference loss matches predict.LogLoss
	getJSON(t, h, "/api/refs?w=2", &r)
	x := f.ds.Window(2)
	for i, ref := range s.refs {
		loss := make([]float64, len(x))
		if _, err := predict.LogLoss(ref.P, x, loss); err != nil {
			t.Fatal(err)
		}
		for q := range len(x) - 1 {
			if math.Abs(r.Refs[i].Loss[q]-loss[q+1]) > 1e-12 {
				t.Fatalf("%s loss at %d: %v, want %v", ref.Name, q, r.Refs[i].Loss[q], loss[q+1])
			}
		}
	}
	if r.Excess == "" || !strings.HasPrefix(r.Excess, "Bayes") {
		t.Errorf("excess reference %q, want Bayes", r.Excess)
	}
}

func TestMapAndSnapshots(t *testing.T) {
	s, f := newTestServer(t)
	h := s.Handler()
	var meta Meta
	getJSON(t, h, "/api/meta", &meta)
	if len(meta.Models) != 1 || fmt.Sprint(meta.Models[0].Steps) != "[10 100]" || meta.Models[0].Dynamics == nil ||
		len(meta.Models[0].Dynamics.Phases) != 2 || meta.Models[0].Dynamics.Emergences[0].Step != 100 {
		t.Fatalf("meta: %+v", meta.Models)
	}
	code, b := get(t, h, "/api/map?w=1&model=0&step=10&layer=1&head=1&q0=2&q1=6&k0=0&k1=3")
	if code != 200 || len(b) != 4*4*3 {
		t.Fatalf("map: %d, %d bytes", code, len(b))
	}
	m, err := transformer.LoadSafetensorsOn(cpu.NewDefault(), filepath.Join(f.model, "snapshots", "step-000000010.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	maps, _ := m.AttentionMaps(f.ds.Window(1))
	for i := range 4 {
		for j := range 3 {
			got := math.Float32frombits(binary.LittleEndian.Uint32(b[4*(i*3+j):]))
			if got != maps[1][1][(2+i)*64+j] {
				t.Fatalf("map[%d][%d] = %v, want %v", 2+i, j, got, maps[1][1][(2+i)*64+j])
			}
		}
	}
	// snapshots differ from the final model
	var a, z ModelView
	getJSON(t, h, "/api/model?w=1&model=0&step=10", &a)
	getJSON(t, h, "/api/model?w=1&model=0", &z)
	if a.Step != 10 || z.Step != FinalStep || fmt.Sprint(a.Loss) == fmt.Sprint(z.Loss) {
		t.Errorf("snapshot and final model give the same losses")
	}
	// labels and mean curves (wait for them)
	var labels [][]Label
	getJSON(t, h, "/api/labels?model=0&step=100&wait=1", &labels)
	if len(labels) != 2 || len(labels[1]) != 2 || labels[0][0].Text == "" {
		t.Errorf("labels: %+v", labels)
	}
	var mean Mean
	getJSON(t, h, "/api/mean?model=0&wait=1", &mean)
	if mean.Windows != 5 || len(mean.Loss) != len(s.refs)+1 || len(mean.Loss[0]) != 63 {
		t.Errorf("mean: %d windows, %d curves", mean.Windows, len(mean.Loss))
	}
}

func TestStaticPage(t *testing.T) {
	s, _ := newTestServer(t)
	var b strings.Builder
	if err := s.WriteStatic(&b, 2, 30, true); err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(b.String(), "'http://www.w3.org/2000/svg'", "SVG") // a name, not an address
	for _, want := range []string{`<script id="vomc-bundle" type="application/json">`, "<style>", "vomcExplore"} {
		if !strings.Contains(page, want) {
			t.Errorf("static page lacks %q", want)
		}
	}
	for _, bad := range []string{`src="assets/`, `href="assets/`, "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("static page refers to %q", bad)
		}
	}
	if err := s.WriteStatic(io.Discard, 99, 0, false); err == nil {
		t.Error("static page of window 99: no error")
	}
	h := s.Handler()
	code, body := get(t, h, "/api/static?w=2&t=30")
	if code != 200 || !strings.Contains(string(body), `<script id="vomc-bundle"`) {
		t.Errorf("/api/static: %d", code)
	}
	if code, _ := get(t, h, "/api/static?w=24"); code != 404 {
		t.Errorf("/api/static?w=24: %d, want 404", code)
	}
}

func TestParseSequence(t *testing.T) {
	for _, c := range []struct {
		in   string
		A    int
		want string
		err  string
	}{
		{"0120", 3, "[0 1 2 0]", ""},
		{"0, 1, 2", 3, "[0 1 2]", ""},
		{"0 1\n2", 3, "[0 1 2]", ""},
		{"10,11", 12, "[10 11]", ""},
		{"1011", 12, "", "symbols are 0..11"},
		{"01a", 3, "", `pasted symbol 2 is "a"`},
		{"0,-1", 3, "", `"-1"`},
	} {
		x, err := ParseSequence(c.in, c.A)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(x) != c.want {
			t.Errorf("%q: %v %v, want %s", c.in, x, err, c.want)
		}
	}
}

func TestListen(t *testing.T) {
	l, err := Listen("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Warning != "" || l.Allowed != nil || !strings.HasPrefix(l.URL, "http://127.0.0.1:") || strings.HasSuffix(l.URL, ":0/") {
		t.Errorf("loopback: %+v", l)
	}
	// a second server on the same port is refused
	port := l.Addr().(*net.TCPAddr).Port
	if _, err := Listen("127.0.0.1", port); err == nil || !strings.Contains(err.Error(), fmt.Sprint(port)) {
		t.Errorf("a taken port: %v", err)
	}
	if _, err := Listen("127.0.0.1", 70000); err == nil {
		t.Error("port 70000: no error")
	}
	all, err := Listen("0.0.0.0", 0)
	if err != nil {
		t.Skip("cannot listen on 0.0.0.0:", err)
	}
	defer all.Close()
	if !strings.Contains(all.Warning, "anyone who can reach this machine") || fmt.Sprint(all.Allowed) != "[*]" || !strings.HasPrefix(all.URL, "http://127.0.0.1:") {
		t.Errorf("0.0.0.0: %+v", all)
	}
}

func TestLossesJSON(t *testing.T) {
	b, err := json.Marshal(Series{Loss: Losses{0.5, math.Inf(1), math.NaN(), 1e-300}})
	if err != nil || !strings.Contains(string(b), `"loss":[0.5,"+Inf","NaN",1e-300]`) {
		t.Errorf("%s %v", b, err)
	}
	var back Series
	if err := json.Unmarshal(b, &back); err != nil || back.Loss[0] != 0.5 || !math.IsInf(back.Loss[1], 1) || !math.IsNaN(back.Loss[2]) || back.Loss[3] != 1e-300 {
		t.Errorf("read back: %v %v", back.Loss, err)
	}
}

// TestDemoModels opens every shipped model as --demo does (its recipe's
// test data generated in memory) and answers a click, and each demo set
// (models.Demos) together.
func TestDemoModels(t *testing.T) {
	for _, name := range models.Names() {
		o, err := Demo([]string{name}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		o.Backend = cpu.NewDefault()
		o.MeanWindows, o.HeadWindows = 2, 2
		s, err := New(o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var p Position
		getJSON(t, s.Handler(), "/api/position?w=1&t=100&model=0", &p)
		if len(p.Heads) != 8 || len(p.Omega) != s.D+1 || p.Posterior == nil {
			t.Errorf("%s: %d heads, %d ω", name, len(p.Heads), len(p.Omega))
		}
	}
	for _, set := range models.Demos {
		if _, err := Demo(set, nil, ""); err != nil {
			t.Errorf("demo set %v: %v", set, err)
		}
	}
	if _, err := Demo([]string{"d3-tf44", "d5-tf44-x4"}, nil, ""); err == nil || !strings.Contains(err.Error(), "different data") {
		t.Errorf("models of different data together: %v", err)
	}
}
