package main

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unsafe"
)

// answer decodes part 0 of an answer.
func answer(t *testing.T, parts [][]byte) (res json.RawMessage, errMsg, kind string) {
	t.Helper()
	var a struct {
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
		Kind   string          `json:"kind"`
	}
	if err := json.Unmarshal(parts[0], &a); err != nil {
		t.Fatalf("answer %q: %v", parts[0], err)
	}
	return a.Result, a.Error, a.Kind
}

func f64bytes(v []float64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v))
}

// TestDispatchErrors checks that errors and panics become error answers
// of the right kind, never a crash.
func TestDispatchErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		op, req    string
		arrays     [][]byte
		kind, want string
	}{
		{"nosuch", `{}`, nil, "value", `no operation "nosuch"`},
		{"panic", `{}`, nil, "internal", "internal error in panic: assignment to entry in nil map"},
		// on a worker goroutine of a pool: recovered there, with its stack
		{"panic", `{"in":"predict"}`, nil, "internal", "internal error in panic: distributions: panicky on window "},
		{"panic", `{"in":"predict"}`, nil, "internal", "assignment to entry in nil map\n\ngoroutine stack of the panic:\n"},
		{"panic", `{"in":"evaluate"}`, nil, "internal", "internal error in panic: eval: panic: assignment to entry in nil map"},
		{"panic", `{"in":"evaluate"}`, nil, "internal", "libvomc.panicky.Predict"},
		{"panic", `{"in":"elsewhere"}`, nil, "value", `in "elsewhere": want predict or evaluate`},
		{"prior", `{"A":1,"depths":[3],"lambda":0.15,"alpha":[0.5]}`, nil, "value", "alphabet"},
		{"prior", `{"A":3,"depth":[3]}`, nil, "value", `unknown field "depth"`},
		{"data_read", `{"dir":"/nonexistent/vomc"}`, nil, "not_found", "/nonexistent/vomc"},
		{"predict", `{"A":3,"W":1,"N":4,"spec":"ctw"}`, [][]byte{{0, 1, 2}}, "value", "windows: 3 bytes, want 4"},
		{"predict", `{"A":3,"W":1,"N":4,"spec":"ctw"}`, [][]byte{{0, 1, 2, 3}, make([]byte, 96)}, "value", "window 0 position 3: symbol 3 outside the alphabet 0..2"},
		{"predict", `{"A":3,"W":1,"N":4,"spec":"ctw"}`, [][]byte{{0, 1, 2, 0}, make([]byte, 95)}, "value", "out: 95 bytes, want 96"},
		{"predict", `{"A":3,"W":1,"N":4,"spec":"ctw,kn"}`, [][]byte{{0, 1, 2, 0}, make([]byte, 96)}, "value", "one method"},
	}
	for _, c := range cases {
		_, msg, kind := answer(t, dispatch(ctx, c.op, []byte(c.req), c.arrays))
		if kind != c.kind || !strings.Contains(msg, c.want) {
			t.Errorf("%s %s: error %q (%s), want %q (%s)", c.op, c.req, msg, kind, c.want, c.kind)
		}
	}
}

// TestEvaluateArrays checks the evaluate operation on distributions held
// in memory: a NaN row is refused naming its place, a cancelled context
// answers "cancelled", and good rows give eval's JSON.
func TestEvaluateArrays(t *testing.T) {
	const W, N, A = 3, 5, 2
	x := []byte{0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1}
	p := make([]float64, W*N*A)
	for i := range p {
		p[i] = 0.5
	}
	req := []byte(`{"A":2,"W":3,"N":5,"spec":"ctw:D=1","names":["mine"],"ref_index":1}`)
	res := dispatch(context.Background(), "evaluate", req, [][]byte{x, f64bytes(p)})
	if _, msg, _ := answer(t, res); msg != "" {
		t.Fatal(msg)
	}
	var doc struct {
		Config struct{ Reference string } `json:"config"`
	}
	if err := json.Unmarshal(res[1], &doc); err != nil || doc.Config.Reference != "mine" {
		t.Errorf("results.json %q: reference %q (%v), want mine", res[1], doc.Config.Reference, err)
	}
	if !strings.Contains(string(res[2]), "mine *") {
		t.Errorf("summary table without the reference marked:\n%s", res[2])
	}
	p[7] = math.NaN()
	if _, msg, _ := answer(t, dispatch(context.Background(), "evaluate", req, [][]byte{x, f64bytes(p)})); !strings.Contains(msg, "mine: window 0 position 3 symbol 1: NaN is not a probability") {
		t.Errorf("NaN row: %q", msg)
	}
	p[7] = 0.5
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, msg, kind := answer(t, dispatch(ctx, "evaluate", req, [][]byte{x, f64bytes(p)})); kind != "cancelled" {
		t.Errorf("cancelled context: %q (%s), want kind cancelled", msg, kind)
	}
}

// TestRegistry checks handles, parts, release and a cancel that comes
// before its call.
func TestRegistry(t *testing.T) {
	r := &registry{answers: map[int64][][]byte{}, running: map[int64]context.CancelFunc{}, cancelled: map[int64]bool{}}
	h := r.run(1, "version", []byte(`{}`), nil)
	if b, ok := r.part(h, 0); !ok || !strings.Contains(string(b), `"go":"go`) {
		t.Errorf("version answer %q", b)
	}
	if _, ok := r.part(h, 1); ok {
		t.Error("a part beyond the answer")
	}
	r.release(h)
	if _, ok := r.part(h, 0); ok {
		t.Error("a released answer is still there")
	}
	r.cancel(2)
	x := make([]byte, 4)
	out := make([]float64, 12)
	h = r.run(2, "predict", []byte(`{"A":3,"W":1,"N":4,"spec":"ctw"}`), [][]byte{x, f64bytes(out)})
	b, _ := r.part(h, 0)
	if !strings.Contains(string(b), `"kind":"cancelled"`) {
		t.Errorf("a call cancelled before it began: %s", b)
	}
	if len(r.running) != 0 || len(r.cancelled) != 0 {
		t.Errorf("left behind: %d running, %d cancelled", len(r.running), len(r.cancelled))
	}
}
