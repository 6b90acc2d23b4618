package explore

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestPositionIntervened: with ablate= and pattern=, the click answer
// carries the intervened model's distribution, loss row and excess over
// the reference, equal to what the transformer package's intervened model
// predicts and to the reference's losses in the same answer.
func TestPositionIntervened(t *testing.T) {
	s, f := newTestServer(t)
	h := s.Handler()
	const w, q = 3, 40
	x := f.ds.Window(w)
	m, err := transformer.LoadSafetensorsOn(cpu.NewDefault(), filepath.Join(f.model, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	iv := transformer.Intervention{Ablate: []transformer.Head{{Layer: 0, Head: 0}, {Layer: 1, Head: 1}}, Mode: transformer.AblateZero,
		Patterns: []transformer.HeadPattern{{Head: transformer.Head{Layer: 0, Head: 1}, Pattern: transformer.Pattern{Kind: transformer.PatternOffset, N: 1}}}}
	xm, err := m.Intervene(iv)
	if err != nil {
		t.Fatal(err)
	}
	A := 3
	rows := make([]float64, len(x)*A)
	xm.PredictSequence(x, rows)
	var p Position
	getJSON(t, h, fmt.Sprintf("/api/position?w=%d&t=%d&model=0&ablate=L1H1%%2BL2H2&pattern=L1H2=offset:1", w, q), &p)
	iv2 := p.Intervened
	if iv2 == nil {
		t.Fatal("no intervened model in the answer")
	}
	if iv2.Spec != "ablate=L1H1+L2H2:mode=zero:pattern=L1H2=offset:1" {
		t.Errorf("spec %q", iv2.Spec)
	}
	for a := range A {
		if iv2.Dist.P[a] != rows[(q+1)*A+a] {
			t.Errorf("intervened P(%d) = %v, the transformer's %v", a, iv2.Dist.P[a], rows[(q+1)*A+a])
		}
	}
	for i := range len(x) - 1 {
		if want := -math.Log(rows[(i+1)*A+int(x[i+1])]); iv2.Loss[i] != want {
			t.Fatalf("loss row at %d: %v, want %v", i, iv2.Loss[i], want)
		}
	}
	var ref, model *Dist
	for i := range p.Dist {
		if p.Dist[i].Name == iv2.Reference {
			ref = &p.Dist[i]
		}
		if p.Dist[i].Kind == "model" {
			model = &p.Dist[i]
		}
	}
	if ref == nil || model == nil {
		t.Fatalf("no reference %q or model in the answer", iv2.Reference)
	}
	if *iv2.Excess != *iv2.Dist.Loss-*ref.Loss || *iv2.ModelExcess != *model.Loss-*ref.Loss {
		t.Errorf("excess %v (model %v), want %v (%v)", *iv2.Excess, *iv2.ModelExcess, *iv2.Dist.Loss-*ref.Loss, *model.Loss-*ref.Loss)
	}
	if *iv2.Dist.Loss == *model.Loss {
		t.Error("the intervention did not move the loss at t")
	}
	// a '+' sent unescaped arrives as a space and is read as '+'
	var p2 Position
	getJSON(t, h, fmt.Sprintf("/api/position?w=%d&t=%d&model=0&ablate=L1H1+L2H2&pattern=L1H2=offset:1", w, q), &p2)
	if p2.Intervened == nil || p2.Intervened.Spec != iv2.Spec || p2.Intervened.MeanExcess != iv2.MeanExcess {
		t.Errorf("with an unescaped '+': %+v", p2.Intervened)
	}
	// without an intervention, none
	var p3 Position
	getJSON(t, h, fmt.Sprintf("/api/position?w=%d&t=%d&model=0", w, q), &p3)
	if p3.Intervened != nil {
		t.Error("an intervened model without ablate= or pattern=")
	}
	for _, c := range []struct{ url, want string }{
		{"/api/position?w=0&t=3&ablate=L3H1", "did you mean L2H1?"},
		{"/api/position?w=0&t=3&ablate=L1H9", "did you mean L1H2?"},
		{"/api/position?w=0&t=3&ablate=head1", "L<layer>H<head>"},
		{"/api/position?w=0&t=3&pattern=L1H1=ofset:1", `did you mean "offset"?`},
		{"/api/position?w=0&t=3&pattern=L1H1=offset:64", "outside 0..63"},
		{"/api/position?w=0&t=3&ablate=L1H1&pattern=L1H1=offset:1", "twice"},
	} {
		code, b := get(t, h, c.url)
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if code != 400 || !strings.Contains(e.Error, c.want) {
			t.Errorf("GET %s: %d %s, want 400 with %q", c.url, code, b, c.want)
		}
	}
}
