package explore

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/vomc/vomc/transformer"
)

// ivView is what the page shows of an intervention: the intervened row's
// probability of the next symbol, the printed excesses (data-value) and
// the loss row it draws.
type ivView struct {
	Spec, P, Excess, ModelExcess, MeanExcess, ModelMeanExcess string
	Hidden                                                    bool
	Loss                                                      []float64
	Switch                                                    string
}

const readIntervention = `(() => {
  const S = window.vomcExplore.state, iv = S.pos.intervened, v = (id) => { const e = document.getElementById(id); return e ? e.dataset.value : ''; };
  const sw = document.querySelector('.head[data-layer="0"][data-head="0"] button.iv');
  if (!iv) return { hidden: document.getElementById('iv-info').classList.contains('hidden'), switch: sw ? sw.dataset.iv : '' };
  const td = document.querySelector('#dist tbody tr[data-method="' + CSS.escape(iv.dist.name) + '"] td[data-symbol="%d"]');
  return { spec: document.getElementById('iv-spec').textContent, p: td ? td.dataset.value : '', excess: v('iv-excess'), modelExcess: v('iv-model-excess'),
    meanExcess: v('iv-mean-excess'), modelMeanExcess: v('iv-model-mean-excess'), hidden: document.getElementById('iv-info').classList.contains('hidden'),
    loss: iv.loss, switch: sw ? sw.dataset.iv : '' };
})()`

// checkIntervention compares what the page shows of the intervention iv
// at position q with the server's numbers (IntervenedAt).
func checkIntervention(t *testing.T, b *browser, s *Server, win *window, q int, iv transformer.Intervention) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.waitFor(ctx, fmt.Sprintf(`!!(vomcExplore.state.pos && vomcExplore.state.pos.t === %d && vomcExplore.state.pos.intervened && vomcExplore.state.pos.intervened.spec === %q && document.getElementById('iv-spec'))`, q, iv.String())); err != nil {
		t.Fatal(err)
	}
	want, err := s.IntervenedAt(win, q, 0, FinalStep, iv)
	if err != nil {
		t.Fatal(err)
	}
	sym := int(win.X[q+1])
	var v ivView
	if err := b.eval(fmt.Sprintf(readIntervention, sym), &v); err != nil {
		t.Fatal(err)
	}
	if v.Spec != want.Spec || v.Hidden {
		t.Errorf("the page shows intervention %q (hidden %v), want %q", v.Spec, v.Hidden, want.Spec)
	}
	for _, c := range []struct {
		name, got string
		want      *float64
	}{
		{"P(next)", v.P, &want.Dist.P[sym]}, {"excess at t", v.Excess, want.Excess}, {"intact excess at t", v.ModelExcess, want.ModelExcess},
		{"window excess", v.MeanExcess, &want.MeanExcess}, {"intact window excess", v.ModelMeanExcess, &want.ModelMeanExcess},
	} {
		f, err := strconv.ParseFloat(c.got, 64)
		if err != nil || f != *c.want {
			t.Errorf("%s, t=%d: %s on the page %q, server %v", iv, q, c.name, c.got, *c.want)
		}
	}
	if len(v.Loss) != len(want.Loss) {
		t.Fatalf("loss row of %d positions on the page, %d on the server", len(v.Loss), len(want.Loss))
	}
	for i := range v.Loss {
		if v.Loss[i] != want.Loss[i] {
			t.Fatalf("loss row at %d: page %v, server %v", i, v.Loss[i], want.Loss[i])
		}
	}
}

// TestBrowserIntervene switches a head off with its switch on the page,
// sets heads to exact patterns, moves t, and checks that the page shows
// the server's numbers for the intervened model; switching back removes
// the intervention. It saves a screenshot.
func TestBrowserIntervene(t *testing.T) {
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
	// the switch of L1H1: off
	if err := b.eval(`document.querySelector('.head[data-layer="0"][data-head="0"] button.iv').click()`, nil); err != nil {
		t.Fatal(err)
	}
	off := transformer.Intervention{Ablate: []transformer.Head{{Layer: 0, Head: 0}}, Mode: transformer.AblateZero}
	checkIntervention(t, b, s, win, 40, off)
	// t moves: the intervention stays
	if err := b.key("ArrowRight", 39); err != nil {
		t.Fatal(err)
	}
	checkIntervention(t, b, s, win, 41, off)
	// exact patterns beside the ablation
	if err := b.eval(`vomcExplore.setIntervention({'0,0': 'off', '0,1': 'offset:1', '1,0': 'suffix:2'})`, nil); err != nil {
		t.Fatal(err)
	}
	both := off
	both.Patterns = []transformer.HeadPattern{{Head: transformer.Head{Layer: 0, Head: 1}, Pattern: transformer.Pattern{Kind: transformer.PatternOffset, N: 1}},
		{Head: transformer.Head{Layer: 1, Head: 0}, Pattern: transformer.Pattern{Kind: transformer.PatternSuffix, N: 2}}}
	checkIntervention(t, b, s, win, 41, both)
	png, err := b.screenshot()
	if err != nil {
		t.Fatal(err)
	}
	path := shotPath(t, "explore_intervene.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
	// every switch back on: no intervention, the box hidden
	if err := b.eval(`vomcExplore.setIntervention({})`, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.waitFor(ctx, `!!(vomcExplore.state.pos && !vomcExplore.state.pos.intervened)`); err != nil {
		t.Fatal(err)
	}
	var v ivView
	if err := b.eval(fmt.Sprintf(readIntervention, 0), &v); err != nil {
		t.Fatal(err)
	}
	if !v.Hidden || v.Switch != "on" {
		t.Errorf("after switching back: box hidden %v, L1H1's switch %q", v.Hidden, v.Switch)
	}
	checkPage(t, b, s, win, 41)
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("page errors: %v", errs)
	}
}
