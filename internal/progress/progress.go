// Package progress is a small, dependency-free terminal progress bar for
// vomc's command-line tools.
//
// A Bar prints a label, the percentage, a bar, done/total, the rate
// (items/s, averaged since the start) and the ETA, plus an optional extra
// field (e.g. "loss=0.93"):
//
//	eval  42% [##########>..............] 3441/8192  57.3/s  ETA 1m23s  loss=0.93
//
// When the writer is a terminal (an *os.File whose mode has
// os.ModeCharDevice) the line is redrawn in place with '\r' at most 10
// times a second. Otherwise (a log file, a pipe, a bytes.Buffer) it prints
// a plain line whenever another 10% is completed or at least 5 s have passed
// since the last line, so logs stay short. Done prints the final line.
//
// All methods are safe for concurrent use (workers may call Add from many
// goroutines) and are no-ops on a nil *Bar, so callers can make progress
// reporting optional without branching.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

const (
	// RedrawInterval is the minimum time between in-place redraws on a
	// terminal (at most 10 redraws per second).
	RedrawInterval = 100 * time.Millisecond
	// LogInterval is the longest time between two plain lines when the
	// writer is not a terminal (lines are also printed at every 10%).
	LogInterval = 5 * time.Second
	// barWidth is the number of cells of the bar itself.
	barWidth = 24
)

// Bar is a progress bar. Create it with New.
type Bar struct {
	mu       sync.Mutex
	w        io.Writer
	label    string
	total    int
	done     int
	extra    string
	tty      bool
	now      func() time.Time
	start    time.Time
	lastDraw time.Time
	lastTen  int           // last tenth (0..10) reported in plain mode
	delay    time.Duration // silence after start (DelayStart)
	lastLen  int           // rune length of the last in-place line
	drawn    bool
	finished bool
}

// New returns a bar writing to w (nil means discard) for total items; a
// total ≤ 0 means unknown (no percentage, bar or ETA is shown). The clock
// starts now; nothing is printed until progress is made.
func New(w io.Writer, label string, total int) *Bar {
	if w == nil {
		w = io.Discard
	}
	b := &Bar{w: w, label: label, total: total, tty: IsTerminal(w), now: time.Now}
	b.start = b.now()
	return b
}

// IsTerminal reports whether w is an *os.File attached to a character
// device (a terminal), the condition under which a Bar redraws in place.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Add records n more items done (n may be negative to correct a count).
func (b *Bar) Add(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	b.maybeDraw()
}

// Set records that done items are complete in total.
func (b *Bar) Set(done int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = done
	b.maybeDraw()
}

// Update sets both the count done and the total. Its signature matches
// progress callbacks such as eval.Config.Progress, so bar.Update can be
// passed directly.
func (b *Bar) Update(done, total int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done, b.total = done, total
	b.maybeDraw()
}

// SetExtra sets a free-form field shown at the end of the line, such as
// "loss=0.93"; "" removes it. It is shown from the next redraw on.
func (b *Bar) SetExtra(s string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.extra = s
}

// Done prints the final state (with the total elapsed time instead of the
// ETA) and, on a terminal, ends the line. Later calls to any method print
// nothing.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.finished = true
	now := b.now()
	if !b.drawn && now.Sub(b.start) < b.delay {
		return
	}
	line := b.line(now, true)
	if b.tty {
		b.writeInPlace(line)
		io.WriteString(b.w, "\n")
	} else {
		io.WriteString(b.w, line+"\n")
	}
}

// DelayStart keeps the bar silent for the first d after it was created:
// a job that finishes sooner prints nothing at all (not even from Done), so
// only jobs that take a while show progress. It returns b.
func (b *Bar) DelayStart(d time.Duration) *Bar {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.delay = d
	return b
}

// SetClock makes the bar read the time from now instead of time.Now and
// restarts its clock at now(), so that rates, ETAs and the throttling
// follow a simulated clock (for tests and reproducible output). It
// returns b.
func (b *Bar) SetClock(now func() time.Time) *Bar {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now = now
	b.start = now()
	return b
}

// Line returns the line the bar would print now (without '\r' or newline).
func (b *Bar) Line() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.line(b.now(), b.finished)
}

// maybeDraw prints the current state if the throttling rules allow it.
// b.mu must be held.
func (b *Bar) maybeDraw() {
	if b.finished {
		return
	}
	now := b.now()
	if now.Sub(b.start) < b.delay {
		return
	}
	if b.tty {
		if b.drawn && now.Sub(b.lastDraw) < RedrawInterval {
			return
		}
		b.writeInPlace(b.line(now, false))
		b.lastDraw, b.drawn = now, true
		return
	}
	ten := 0
	if b.total > 0 {
		ten = min(10, max(0, b.done*10/b.total))
	}
	// 100% is left to Done, which adds the elapsed time.
	newTenth := ten > b.lastTen && ten < 10
	last := b.lastDraw
	if !b.drawn {
		last = b.start
	}
	if !newTenth && now.Sub(last) < LogInterval {
		return
	}
	if ten > b.lastTen {
		b.lastTen = ten
	}
	io.WriteString(b.w, b.line(now, false)+"\n")
	b.lastDraw, b.drawn = now, true
}

// writeInPlace returns to the start of the line and overwrites it, padding
// with spaces to erase a longer previous line. b.mu must be held.
func (b *Bar) writeInPlace(line string) {
	n := len([]rune(line))
	pad := ""
	if b.lastLen > n {
		pad = strings.Repeat(" ", b.lastLen-n)
	}
	b.lastLen = n
	io.WriteString(b.w, "\r"+line+pad)
}

// line formats the progress line at time now. b.mu must be held.
func (b *Bar) line(now time.Time, final bool) string {
	var sb strings.Builder
	elapsed := now.Sub(b.start)
	if b.label != "" {
		sb.WriteString(b.label)
		sb.WriteString(" ")
	}
	if b.total > 0 {
		frac := float64(b.done) / float64(b.total)
		frac = min(1, max(0, frac))
		fmt.Fprintf(&sb, "%3d%% [", int(frac*100))
		full := int(frac * barWidth)
		sb.WriteString(strings.Repeat("#", full))
		if full < barWidth {
			sb.WriteString(">")
			sb.WriteString(strings.Repeat(".", barWidth-full-1))
		}
		fmt.Fprintf(&sb, "] %d/%d", b.done, b.total)
	} else {
		fmt.Fprintf(&sb, "%d", b.done)
	}
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(b.done) / s
	}
	sb.WriteString("  ")
	sb.WriteString(formatRate(rate, elapsed > 0))
	switch {
	case final:
		sb.WriteString("  in ")
		sb.WriteString(formatDuration(elapsed))
	case b.total > 0 && rate > 0 && b.done < b.total:
		eta := time.Duration(float64(b.total-b.done) / rate * float64(time.Second))
		sb.WriteString("  ETA ")
		sb.WriteString(formatDuration(eta))
	case b.total > 0 && b.done < b.total:
		sb.WriteString("  ETA ?")
	}
	if b.extra != "" {
		sb.WriteString("  ")
		sb.WriteString(b.extra)
	}
	return sb.String()
}

// formatRate prints items per second with k/M/G suffixes.
func formatRate(rate float64, known bool) string {
	if !known {
		return "?/s"
	}
	suffix := ""
	for _, s := range []string{"k", "M", "G"} {
		if rate < 1000 {
			break
		}
		rate /= 1000
		suffix = s
	}
	switch {
	case rate >= 100:
		return fmt.Sprintf("%.0f%s/s", rate, suffix)
	case rate >= 10:
		return fmt.Sprintf("%.1f%s/s", rate, suffix)
	default:
		return fmt.Sprintf("%.2f%s/s", rate, suffix)
	}
}

// formatDuration prints d as 12s, 3m04s or 2h05m (rounded to seconds; to
// one decimal below ten seconds).
func formatDuration(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		s := int(d.Round(time.Second).Seconds())
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		m := int(d.Round(time.Minute).Minutes())
		return fmt.Sprintf("%dh%02dm", m/60, m%60)
	}
}
