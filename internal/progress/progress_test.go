package progress

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a manually advanced clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestBar(w *bytes.Buffer, label string, total int, tty bool) (*Bar, *fakeClock) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	b := New(w, label, total)
	b.now = clk.now
	b.start = clk.now()
	b.tty = tty
	return b, clk
}

func TestLineFormat(t *testing.T) {
	cases := []struct {
		name  string
		total int
		done  int
		after time.Duration
		extra string
		want  []string
	}{
		{"half", 200, 100, 10 * time.Second, "", []string{"eval  50% [############>...........] 100/200", "10.0/s", "ETA 10s"}},
		{"extra", 10, 1, time.Second, "loss=0.93", []string{" 10% [##>", "1/10", "1.00/s", "ETA 9.0s", "loss=0.93"}},
		{"unknown total", 0, 5000, 2 * time.Second, "", []string{"eval 5000  2.50k/s"}},
		{"over", 10, 12, time.Second, "", []string{"100% [########################] 12/10"}},
		{"long eta", 1000, 1, time.Second, "", []string{"ETA 16m39s"}},
		{"hours", 100000, 1, time.Second, "", []string{"ETA 27h47m"}},
		{"no time", 10, 0, 0, "", []string{"0% [>", "?/s", "ETA ?"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			b, clk := newTestBar(&buf, "eval", tc.total, false)
			clk.advance(tc.after)
			b.done = tc.done
			b.SetExtra(tc.extra)
			got := b.Line()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("line %q lacks %q", got, w)
				}
			}
		})
	}
}

func TestPlainThrottling(t *testing.T) {
	var buf bytes.Buffer
	b, clk := newTestBar(&buf, "job", 100, false)
	for range 100 {
		clk.advance(10 * time.Millisecond)
		b.Add(1)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	// One line per 10% (10%..90%); 100% is left to Done.
	if len(lines) != 9 {
		t.Fatalf("%d lines, want 9:\n%s", len(lines), buf.String())
	}
	if strings.Contains(buf.String(), "\r") {
		t.Fatal("carriage return in plain mode")
	}
	b.SetExtra("loss=0.50")
	b.Done()
	b.Done() // idempotent
	b.Add(5) // ignored after Done
	lines = strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines after Done, want 10:\n%s", len(lines), buf.String())
	}
	last := lines[9]
	for _, w := range []string{"job 100%", "100/100", "100/s", "in 1.0s", "loss=0.50"} {
		if !strings.Contains(last, w) {
			t.Errorf("final line %q lacks %q", last, w)
		}
	}

	// Slow progress: a line at least every LogInterval even within a tenth.
	buf.Reset()
	b, clk = newTestBar(&buf, "slow", 1000, false)
	for range 20 {
		clk.advance(time.Second)
		b.Add(1)
	}
	if n := strings.Count(buf.String(), "\n"); n != 4 {
		t.Fatalf("%d lines in 20 s of slow progress, want 4:\n%s", n, buf.String())
	}
}

func TestTerminalRedraw(t *testing.T) {
	var buf bytes.Buffer
	b, clk := newTestBar(&buf, "tty", 1000, true)
	for range 1000 {
		clk.advance(time.Millisecond) // 1 s in total
		b.Add(1)
	}
	draws := strings.Count(buf.String(), "\r")
	if draws < 9 || draws > 11 {
		t.Fatalf("%d redraws in 1 s, want about 10", draws)
	}
	if strings.Contains(buf.String(), "\n") {
		t.Fatal("newline before Done")
	}
	b.Done()
	out := buf.String()
	if !strings.HasSuffix(out, "\n") || !strings.Contains(out[strings.LastIndex(out, "\r"):], "100%") {
		t.Fatalf("bad final redraw: %q", out[strings.LastIndex(out, "\r"):])
	}

	// A shorter line is padded to erase the previous one.
	buf.Reset()
	b, clk = newTestBar(&buf, "x", 10, true)
	b.SetExtra(strings.Repeat("z", 30))
	b.Add(1)
	b.SetExtra("")
	clk.advance(time.Second)
	b.Add(1)
	parts := strings.Split(buf.String(), "\r")
	if len(parts) != 3 || len([]rune(parts[2])) != len([]rune(parts[1])) {
		t.Fatalf("no padding: %q", buf.String())
	}
}

func TestConcurrentAdd(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "conc", 8000)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				b.Add(1)
				if b.Line() == "" {
					t.Error("empty line")
				}
			}
		}()
	}
	wg.Wait()
	b.Done()
	if b.done != 8000 {
		t.Fatalf("done = %d, want 8000", b.done)
	}
	if !strings.Contains(buf.String(), "8000/8000") {
		t.Fatalf("final line missing: %q", buf.String())
	}
}

func TestSetUpdateNil(t *testing.T) {
	var buf bytes.Buffer
	b, _ := newTestBar(&buf, "u", 10, false)
	b.Set(3)
	if b.done != 3 {
		t.Fatal("Set")
	}
	b.Update(5, 20)
	if b.done != 5 || b.total != 20 {
		t.Fatal("Update")
	}
	var nb *Bar
	nb.Add(1)
	nb.Set(1)
	nb.Update(1, 2)
	nb.SetExtra("x")
	nb.Done()
	if nb.Line() != "" {
		t.Fatal("nil bar line")
	}
	New(nil, "discard", 3).Done()
}

func TestIsTerminal(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Fatal("buffer is a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Fatal("regular file is a terminal")
	}
	if IsTerminal((*os.File)(nil)) {
		t.Fatal("nil file is a terminal")
	}
	if d, err := os.OpenFile("/dev/null", os.O_WRONLY, 0); err == nil {
		defer d.Close()
		if !IsTerminal(d) {
			t.Log("/dev/null not a char device here")
		}
	}
}

func BenchmarkAddParallel(b *testing.B) {
	bar := New(io.Discard, "bench", b.N)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bar.Add(1)
		}
	})
	bar.Done()
}

func TestDelayStart(t *testing.T) {
	// A job that ends inside the delay prints nothing at all.
	var buf bytes.Buffer
	b, clk := newTestBar(&buf, "quick", 10, false)
	b.DelayStart(2 * time.Second)
	for i := 1; i <= 10; i++ {
		clk.advance(100 * time.Millisecond)
		b.Add(1)
	}
	b.Done()
	if buf.Len() != 0 {
		t.Fatalf("quick job printed %q", buf.String())
	}
	// A slow job prints once the delay has passed, and its final line.
	buf.Reset()
	b, clk = newTestBar(&buf, "slow", 10, false)
	b.DelayStart(2 * time.Second)
	for i := 1; i <= 10; i++ {
		clk.advance(time.Second)
		b.Add(1)
	}
	b.Done()
	if !strings.Contains(buf.String(), "slow") || !strings.Contains(buf.String(), "100%") {
		t.Fatalf("slow job printed %q", buf.String())
	}
}
