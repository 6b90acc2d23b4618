package explore

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vomc/vomc/models"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// shotPath is where a browser test saves its screenshot: into
// $VOMC_EXPLORE_SHOTS when set (to look at it), else the test's temporary
// directory.
func shotPath(t *testing.T, name string) string {
	if d := os.Getenv("VOMC_EXPLORE_SHOTS"); d != "" {
		return filepath.Join(d, name)
	}
	return filepath.Join(t.TempDir(), name)
}

// pageView is what the page shows at its position, read from the DOM (the
// data-value attributes behind the printed numbers) and from its state.
type pageView struct {
	T      int
	Text   string            // the t label's text
	Dist   map[string]string // method → data-value of P(symbol)
	DistTx map[string]string // method → printed P(symbol)
	Omega  []string
	Top    []struct {
		Layer, Head, Key int
		Weight           string
	}
	State struct {
		T     int
		Heads []struct {
			Layer, Head int
			Row         []float64
		}
		Matches [2][][]int
	}
}

const readPage = `(() => {
  const S = window.vomcExplore.state, sym = %d;
  const v = { t: +document.getElementById('t-label').dataset.t, text: document.getElementById('t-label').textContent, dist: {}, disttx: {}, omega: [], top: [] };
  document.querySelectorAll('#dist tbody tr').forEach((tr) => {
    const td = tr.querySelector('td[data-symbol="' + sym + '"]');
    v.dist[tr.dataset.method] = td.dataset.value; v.disttx[tr.dataset.method] = td.textContent;
  });
  document.querySelectorAll('#omega .b').forEach((b) => v.omega.push(b.dataset.value));
  document.querySelectorAll('.head').forEach((h) => v.top.push({ layer: +h.dataset.layer, head: +h.dataset.head, key: +h.dataset.topKey, weight: h.dataset.topWeight }));
  v.state = { t: S.pos.t, heads: S.pos.heads.map((h) => ({ layer: h.layer, head: h.head, row: h.row })), matches: S.pos.matches };
  return v;
})()`

// checkPage compares the page at position q with the server's answer.
func checkPage(t *testing.T, b *browser, s *Server, win *window, q int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.waitFor(ctx, fmt.Sprintf(`!!(window.vomcExplore && vomcExplore.state.pos && vomcExplore.state.pos.t === %d && +document.getElementById('t-label').dataset.t === %d && document.querySelectorAll('.head').length > 0)`, q, q)); err != nil {
		t.Fatal(err)
	}
	want, err := s.PositionAt(win, q, 0, FinalStep)
	if err != nil {
		t.Fatal(err)
	}
	sym := want.Next
	var v pageView
	if err := b.eval(fmt.Sprintf(readPage, sym), &v); err != nil {
		t.Fatal(err)
	}
	if v.T != q || v.State.T != q || v.Text != fmt.Sprintf("t = %d", q) {
		t.Fatalf("the page shows t = %d (%q, state %d), want %d", v.T, v.Text, v.State.T, q)
	}
	// every method's probability of the next symbol, exactly and as printed
	for _, d := range want.Dist {
		got, ok := v.Dist[d.Name]
		if !ok {
			t.Errorf("t=%d: the page shows no row for %s", q, d.Name)
			continue
		}
		f, err := strconv.ParseFloat(got, 64)
		if err != nil || f != d.P[sym] {
			t.Errorf("t=%d: %s P(%d) on the page %q, server %v", q, d.Name, sym, got, d.P[sym])
		}
		if tx := v.DistTx[d.Name]; tx != strconv.FormatFloat(d.P[sym], 'f', 4, 64) && math.Abs(d.P[sym]) >= 1e-4 {
			t.Errorf("t=%d: %s P(%d) printed %q, want %.4f", q, d.Name, sym, tx, d.P[sym])
		}
	}
	// ω
	if len(v.Omega) != len(want.Omega) {
		t.Fatalf("t=%d: %d ω bars, want %d", q, len(v.Omega), len(want.Omega))
	}
	for l, w := range want.Omega {
		if f, err := strconv.ParseFloat(v.Omega[l], 64); err != nil || f != w {
			t.Errorf("t=%d: ω_%d on the page %q, server %v", q, l, v.Omega[l], w)
		}
	}
	// attention: every weight of every head's row (state), and the top key
	// of each head's panel (DOM)
	if len(v.State.Heads) != len(want.Heads) {
		t.Fatalf("t=%d: %d heads on the page, want %d", q, len(v.State.Heads), len(want.Heads))
	}
	for i, h := range want.Heads {
		ph := v.State.Heads[i]
		if ph.Layer != h.Layer || ph.Head != h.Head || len(ph.Row) != len(h.Row) {
			t.Fatalf("t=%d: head %d is L%dH%d with %d weights, want L%dH%d with %d", q, i, ph.Layer, ph.Head, len(ph.Row), h.Layer, h.Head, len(h.Row))
		}
		top := 0
		for j, a := range h.Row {
			if float32(ph.Row[j]) != a {
				t.Fatalf("t=%d: L%dH%d weight of key %d on the page %v, server %v", q, h.Layer+1, h.Head+1, j, ph.Row[j], a)
			}
			if a > h.Row[top] {
				top = j
			}
		}
		dom := v.Top[i]
		f, err := strconv.ParseFloat(dom.Weight, 64)
		if dom.Layer != h.Layer || dom.Head != h.Head || err != nil || float32(f) != h.Row[top] {
			t.Errorf("t=%d: L%dH%d panel's top key %d weight %q, server key %d weight %v", q, h.Layer+1, h.Head+1, dom.Key, dom.Weight, top, h.Row[top])
		}
	}
	if fmt.Sprint(v.State.Matches) != fmt.Sprint(want.Matches) {
		t.Errorf("t=%d: suffix matches on the page %v, server %v", q, v.State.Matches, want.Matches)
	}
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("page errors: %v", errs)
	}
}

// TestBrowser loads the page in headless chromium, chooses positions by the
// URL, a click on the loss curve and the arrow key, and checks that what the
// page shows equals the server's numbers; it saves a screenshot. The
// browser tests run in parallel: each waits on its own chromium.
func TestBrowser(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, 1400, 1000)
	s, _ := newTestServer(t)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	const w = 3
	win, err := s.Window(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.navigate(fmt.Sprintf("%s/#w=%d&t=40", ts.URL, w)); err != nil {
		t.Fatal(err)
	}
	checkPage(t, b, s, win, 40)

	// a click on the loss curve at t = 50
	var rect struct{ Left, Top, Width, Height float64 }
	if err := b.eval(`(() => { const c = document.getElementById('loss'); c.scrollIntoView(); const r = c.getBoundingClientRect(); return {left: r.left, top: r.top, width: r.width, height: r.height}; })()`, &rect); err != nil {
		t.Fatal(err)
	}
	T := len(win.X)
	x := rect.Left + PADl + (rect.Width-PADl-PADr)*50/float64(T-2)
	if err := b.click(x, rect.Top+rect.Height/2); err != nil {
		t.Fatal(err)
	}
	checkPage(t, b, s, win, 50)

	// the arrow key: t = 51
	if err := b.key("ArrowRight", 39); err != nil {
		t.Fatal(err)
	}
	checkPage(t, b, s, win, 51)

	checkMap(t, b, s, win, 51)

	// the mean curves over windows
	if err := b.eval(`(() => { const c = document.getElementById('curve-mode'); c.value = 'mean'; c.dispatchEvent(new Event('change')); })()`, nil); err != nil {
		t.Fatal(err)
	}
	ctx0, cancel0 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel0()
	if err := b.waitFor(ctx0, `!!vomcExplore.state.mean`); err != nil {
		t.Fatal(err)
	}
	mean, _, err := s.Mean(0, FinalStep, true)
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	if err := b.eval(`vomcExplore.state.mean.loss[0][20]`, &got); err != nil || got != mean.Loss[0][20] {
		t.Errorf("mean curve on the page %v (%v), server %v", got, err, mean.Loss[0][20])
	}

	// a pasted sequence
	if err := b.eval(`(() => { document.getElementById('paste').value = '0 1 2 2 1 0 0 1 2 2 1 0 2'; document.getElementById('paste-go').click(); })()`, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.waitFor(ctx0, `vomcExplore.state.refs.key === 'seq:0122100122102' && vomcExplore.state.pos && vomcExplore.state.pos.key === 'seq:0122100122102'`); err != nil {
		t.Fatal(err)
	}

	// another window and a snapshot step: the page follows
	if err := b.eval(`vomcExplore.setWindow(5)`, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.waitFor(ctx, `vomcExplore.state.refs.index === 5 && vomcExplore.state.pos.key === 'w5'`); err != nil {
		t.Fatal(err)
	}
	if err := b.eval(`vomcExplore.setStep(0)`, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.waitFor(ctx, `vomcExplore.state.pos.step === 10 && vomcExplore.state.views[0].step === 10`); err != nil {
		t.Fatal(err)
	}
	if err := b.eval(`window.scrollTo(0, 0)`, nil); err != nil {
		t.Fatal(err)
	}
	png, err := b.screenshot()
	if err != nil {
		t.Fatal(err)
	}
	path := shotPath(t, "explore_test.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if len(png) < 10000 {
		t.Errorf("screenshot of %d bytes: the page did not render", len(png))
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("page errors: %v", errs)
	}
}

// TestBrowserStatic opens a static page from a file (no server) and checks
// it as TestBrowser does: its numbers, computed in the page from the bundle,
// equal the server's. -short skips it (a second browser; TestBrowser checks
// the page, the explore tests the static bundle).
func TestBrowserStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the static page in the browser is checked in the full suite (without -short)")
	}
	t.Parallel()
	b := startBrowser(t, 1400, 1000)
	s, _ := newTestServer(t)
	const w, q = 2, 30
	path := filepath.Join(t.TempDir(), "window.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteStatic(f, w, q, true); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := b.navigate("file://" + path); err != nil {
		t.Fatal(err)
	}
	win, _ := s.Window(w)
	checkPage(t, b, s, win, q)
	if err := b.key("ArrowLeft", 37); err != nil {
		t.Fatal(err)
	}
	checkPage(t, b, s, win, q-1)
	png, err := b.screenshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shotPath(t, "explore_static_test.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// the loss chart's padding (app.js PAD.l and PAD.r)
const PADl, PADr = 46, 10

// TestBrowserDemo opens the demo (the shipped models on generated test
// data) as 'vomc explore --demo' does, checks the page at one position and
// saves a screenshot with the head labels in place (the README's, when
// $VOMC_EXPLORE_SHOTS is set). -short skips it (TestDemoModels checks the
// demo's models, TestBrowser the page).
func TestBrowserDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the demo in the browser is checked in the full suite (without -short)")
	}
	t.Parallel()
	b := startBrowser(t, 1400, 1000)
	o, err := Demo(nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	o.Backend = cpu.NewDefault()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	const w, q = 0, 236
	if err := b.navigate(fmt.Sprintf("%s/#w=%d&t=%d", ts.URL, w, q)); err != nil {
		t.Fatal(err)
	}
	win, _ := s.Window(w)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if err := b.waitFor(ctx, `!!(window.vomcExplore && vomcExplore.state.pos && !vomcExplore.state.pos.labels_pending && vomcExplore.state.map)`); err != nil {
		t.Fatal(err)
	}
	checkPage(t, b, s, win, q)
	// the map coloured per row, as for the README
	if err := b.eval(`(async () => { const c = document.getElementById('scale'); c.value = 'row'; c.dispatchEvent(new Event('change')); window.scrollTo(0, 0); await new Promise((f) => setTimeout(f, 300)); })()`, nil); err != nil {
		t.Fatal(err)
	}
	png, err := b.screenshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shotPath(t, "explore_demo.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	// back to step 1500 (the second snapshot): the model's view and its
	// head labels follow the slider
	if err := b.eval(`vomcExplore.setStep(1)`, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.waitFor(ctx, `vomcExplore.state.views[0].step === 1500 && vomcExplore.state.pos.step === 1500 && !vomcExplore.state.pos.labels_pending && document.getElementById('step-label').textContent === '1500'`); err != nil {
		t.Fatal(err)
	}
	p1500, err := s.PositionAt(win, q, 0, 1500)
	if err != nil {
		t.Fatal(err)
	}
	var row []float64
	if err := b.eval(`vomcExplore.state.pos.heads[1].row`, &row); err != nil || len(row) != len(p1500.Heads[1].Row) || float32(row[q]) != p1500.Heads[1].Row[q] {
		t.Errorf("step 1500: L1H2's weight on key t on the page %v, server %v (%v)", row[min(q, len(row)-1)], p1500.Heads[1].Row[q], err)
	}
	if png, err = b.screenshot(); err == nil {
		os.WriteFile(shotPath(t, "explore_demo_step1500.png"), png, 0o644)
	}
}

// TestBrowserDemoDepth5 opens the depth-5 demo set (models.Demos[1]: the
// ladder's TF(4,4)-x4 and TF(4,4)-sin-x4 beside the undertrained
// d5-tf44-e32, on the first windows of the ladder's test set) as 'vomc
// explore --demo --model SET' does, checks the page at a late position and
// saves a screenshot. -short skips it, as TestBrowserDemo.
func TestBrowserDemoDepth5(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the depth-5 demo in the browser is checked in the full suite (without -short)")
	}
	t.Parallel()
	b := startBrowser(t, 1400, 1000)
	o, err := Demo(models.Demos[1], nil, "")
	if err != nil {
		t.Fatal(err)
	}
	o.Backend = cpu.NewDefault()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.ModelNames(); len(got) != len(models.Demos[1]) {
		t.Fatalf("models %v, want %v", got, models.Demos[1])
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	const w, q = 0, 400
	if err := b.navigate(fmt.Sprintf("%s/#w=%d&t=%d", ts.URL, w, q)); err != nil {
		t.Fatal(err)
	}
	win, _ := s.Window(w)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if err := b.waitFor(ctx, `!!(window.vomcExplore && vomcExplore.state.pos && !vomcExplore.state.pos.labels_pending && vomcExplore.state.map)`); err != nil {
		t.Fatal(err)
	}
	checkPage(t, b, s, win, q)
	if png, err := b.screenshot(); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(shotPath(t, "explore_demo_d5.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkMap hovers over a cell of the selected head's attention map and
// checks the weight the page reads out against the server's map, then drags
// a rectangle and checks the zoomed view.
func checkMap(t *testing.T, b *browser, s *Server, win *window, q int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.waitFor(ctx, `!!(vomcExplore.state.map && vomcExplore.state.view && vomcExplore.state.head)`); err != nil {
		t.Fatal(err)
	}
	var g struct {
		Left, Top, Width, Height float64
		Q0, Q1, K0, K1, L, H     int
	}
	if err := b.eval(`(() => { const c = document.getElementById('map'); c.scrollIntoView(); const r = c.getBoundingClientRect(), S = vomcExplore.state, v = S.view;
	  return {left: r.left, top: r.top, width: r.width, height: r.height, q0: v.q0, q1: v.q1, k0: v.k0, k1: v.k1, l: S.head.l, h: S.head.h}; })()`, &g); err != nil {
		t.Fatal(err)
	}
	at := func(qq, kk int) (float64, float64) {
		return g.Left + (float64(kk-g.K0)+0.5)/float64(g.K1-g.K0)*g.Width, g.Top + (float64(qq-g.Q0)+0.5)/float64(g.Q1-g.Q0)*g.Height
	}
	k := q - 3
	x, y := at(q, k)
	if err := b.mouse("mouseMoved", x, y, false); err != nil {
		t.Fatal(err)
	}
	var text string
	if err := b.eval(`document.getElementById('map-hover').textContent`, &text); err != nil {
		t.Fatal(err)
	}
	mv, err := s.ModelWindow(win, 0, FinalStep)
	if err != nil {
		t.Fatal(err)
	}
	T := len(win.X)
	w := mv.Maps[g.L][g.H][q*T+k]
	want := fmt.Sprintf("query q = %d", q)
	if !strings.Contains(text, want) || !strings.Contains(text, fmt.Sprintf("key   k = %d", k)) || !strings.Contains(text, "weight  = "+strconv.FormatFloat(float64(w), 'g', 6, 32)) {
		t.Errorf("map read-out %q, want q %d k %d weight %.6g", text, q, k, w)
	}
	// drag from (q0+2, k0+1) to (q0+9, k0+7)
	x0, y0 := at(g.Q0+2, g.K0+1)
	x1, y1 := at(g.Q0+9, g.K0+7)
	for _, e := range []struct {
		typ  string
		x, y float64
	}{{"mousePressed", x0, y0}, {"mouseMoved", (x0 + x1) / 2, (y0 + y1) / 2}, {"mouseMoved", x1, y1}, {"mouseReleased", x1, y1}} {
		if err := b.mouse(e.typ, e.x, e.y, true); err != nil {
			t.Fatal(err)
		}
	}
	var v struct{ Q0, Q1, K0, K1 int }
	if err := b.eval(`vomcExplore.state.view`, &v); err != nil {
		t.Fatal(err)
	}
	if v.Q0 != g.Q0+2 || v.Q1 != g.Q0+10 || v.K0 != g.K0+1 || v.K1 != g.K0+8 {
		t.Errorf("zoomed view %+v, want queries %d..%d × keys %d..%d", v, g.Q0+2, g.Q0+9, g.K0+1, g.K0+7)
	}
}

// TestBrowserLarge measures, in the browser, a click's round trip at the
// paper's size (N = 1536, 4 layers × 8 heads): from the arrow key to the
// page showing the new position, heads drawn. It runs only with
// VOMC_EXPLORE_LARGE=1 (it needs ≈ 1 GB and tens of seconds).
func TestBrowserLarge(t *testing.T) {
	if os.Getenv("VOMC_EXPLORE_LARGE") == "" {
		t.Skip("set VOMC_EXPLORE_LARGE=1 to measure a click in the browser at N = 1536, 4×8 heads")
	}
	b := startBrowser(t, 1400, 1000)
	s, _, _ := benchServerT(t)
	h := s.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		if r.URL.Path == "/api/position" {
			t.Logf("server: %s in %v", r.URL.RawQuery, time.Since(start))
		}
	}))
	defer ts.Close()
	if err := b.navigate(ts.URL + "/#w=0&t=1400"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	start := time.Now()
	if err := b.waitFor(ctx, `!!(window.vomcExplore && vomcExplore.state.pos && vomcExplore.state.pos.t === 1400 && vomcExplore.state.map && !vomcExplore.state.pos.labels_pending)`); err != nil {
		t.Fatal(err)
	}
	t.Logf("first view of the window (references, forward pass, maps, labels): %v", time.Since(start))
	var times []time.Duration
	for i := range 5 {
		start := time.Now()
		if err := b.key("ArrowRight", 39); err != nil {
			t.Fatal(err)
		}
		if err := b.waitFor(ctx, fmt.Sprintf(`vomcExplore.state.pos.t === %d && +document.getElementById('t-label').dataset.t === %d && !vomcExplore.state.busy`, 1401+i, 1401+i)); err != nil {
			t.Fatal(err)
		}
		times = append(times, time.Since(start))
		var tm map[string]float64
		if err := b.eval(`vomcExplore.state.timing`, &tm); err == nil {
			t.Logf("in the page: answer %.0f ms, render %.0f ms, map %.0f ms", tm["fetch"], tm["render"], tm["map"])
		}
	}
	t.Logf("arrow key to the new position shown (server and page): %v", times)
	png, err := b.screenshot()
	if err == nil {
		os.WriteFile(shotPath(t, "explore_large.png"), png, 0o644)
	}
}
