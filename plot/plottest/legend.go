package plottest

import (
	"fmt"
	"image/color"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Mark is a path stroked (Fill false) or filled on the canvas: its colour,
// the line width and dash pattern of a stroke (Dashes nil when solid), and
// its bounding box in canvas coordinates (arcs by their whole circle).
type Mark struct {
	Fill     bool
	Color    color.NRGBA
	Width    vg.Length
	Dashes   []vg.Length
	Min, Max vg.Point
	// Points is the number of points (and arcs) of the path.
	Points int
}

// Style describes how the mark looks, whatever its place: "stroke
// #RRGGBBAA 1.4pt dash [6 3]" or "fill #RRGGBBAA".
func (m Mark) Style() string {
	c := fmt.Sprintf("#%02X%02X%02X%02X", m.Color.R, m.Color.G, m.Color.B, m.Color.A)
	if m.Fill {
		return "fill " + c
	}
	s := fmt.Sprintf("stroke %s %.2gpt", c, float64(m.Width))
	if len(m.Dashes) > 0 {
		d := make([]string, len(m.Dashes))
		for i, l := range m.Dashes {
			d[i] = fmt.Sprintf("%.2g", float64(l))
		}
		s += " dash [" + strings.Join(d, " ") + "]"
	}
	return s
}

// Op is one thing drawn, in drawing order: a string or image (Box) or a
// stroke or fill (Mark); exactly one of them is set.
type Op struct {
	Box  *Box
	Mark *Mark
}

// Entry is a legend entry found by LegendEntries: its text's box and its
// key, the marks drawn for it next to the text.
type Entry struct {
	Box
	Key []Mark
}

// Style is the key's look: the distinct styles of its marks (Mark.Style),
// sorted, joined by " + ". Two entries of one style cannot be told apart.
func (e Entry) Style() string {
	var s []string
	for _, m := range e.Key {
		s = append(s, m.Style())
	}
	slices.Sort(s)
	return strings.Join(slices.Compact(s), " + ")
}

// Colours are the opaque colours of the key's marks (its line and glyphs,
// not a translucent band), or all its colours when none is opaque, as
// sorted, distinct #RRGGBB strings joined by " + ".
func (e Entry) Colours() string {
	var all, opaque []string
	for _, m := range e.Key {
		c := fmt.Sprintf("#%02X%02X%02X", m.Color.R, m.Color.G, m.Color.B)
		all = append(all, c)
		if m.Color.A == 0xFF {
			opaque = append(opaque, c)
		}
	}
	if len(opaque) == 0 {
		opaque = all
	}
	slices.Sort(opaque)
	return strings.Join(slices.Compact(opaque), " + ")
}

// LegendEntries finds the legend entries among ops (as RecordOps returns
// them): a legend draws each entry's key (gonum's thumbnails: a short
// line, a band's swatch, a glyph) and then its text beside it. So an
// entry is a string preceded, since the previous string or image, by
// marks that are small (at most 6 em wide and 1.5 em tall, em being the
// string's font size), level with the string (their vertical centre
// within its box, give or take a quarter em) and beside it (ending at
// most 1.5 em before its left edge or starting at most 1.5 em after its
// right edge); those marks are its key. Strings without such marks (titles,
// tick labels) are no entries.
func LegendEntries(ops []Op) []Entry {
	var out []Entry
	var pending []Mark
	for _, op := range ops {
		if op.Mark != nil {
			pending = append(pending, *op.Mark)
			continue
		}
		b := *op.Box
		if !b.Image {
			var key []Mark
			for _, m := range pending {
				if isKey(m, b) {
					key = append(key, m)
				}
			}
			if len(key) > 0 {
				out = append(out, Entry{Box: b, Key: key})
			}
		}
		pending = pending[:0]
	}
	return out
}

// isKey reports whether m is drawn as the key of the string b.
func isKey(m Mark, b Box) bool {
	em := b.Size
	if m.Max.X-m.Min.X > 6*em || m.Max.Y-m.Min.Y > 1.5*em {
		return false
	}
	cy := (m.Min.Y + m.Max.Y) / 2
	if cy < b.Min.Y-em/4 || cy > b.Max.Y+em/4 {
		return false
	}
	left := m.Max.X <= b.Min.X+tol && b.Min.X-m.Max.X <= 1.5*em
	right := m.Min.X >= b.Max.X-tol && m.Min.X-b.Max.X <= 1.5*em
	return left || right
}

// AlikeEntries lists the pairs of entries whose keys look the same
// (Entry.Style: the same colours, line widths and dash patterns), so that
// a reader cannot tell their curves apart.
func AlikeEntries(entries []Entry) []string {
	return pairs(entries, Entry.Style, "are drawn alike")
}

// SharedColours lists the pairs of entries whose keys have the same
// colours (Entry.Colours), whatever their dash patterns: a figure with no
// more curves than its palette has colours should have none.
func SharedColours(entries []Entry) []string {
	return pairs(entries, Entry.Colours, "share a colour")
}

// pairs lists the pairs of entries with the same key(e).
func pairs(entries []Entry, key func(Entry) string, what string) []string {
	var out []string
	for i, a := range entries {
		for _, b := range entries[i+1:] {
			if k := key(a); k == key(b) {
				out = append(out, fmt.Sprintf("legend entries %q and %q %s (%s)", a.Text, b.Text, what, k))
			}
		}
	}
	return out
}

// CheckLegend renders fn on a w × h canvas and reports as test errors of
// the figure called name the legend entries (LegendEntries) drawn alike
// and, with distinctColours, those that share a colour; it is an error
// too when the figure has no legend entries. It returns the entries, in
// drawing order, for further checks (their number, their texts).
func CheckLegend(t testing.TB, name string, w, h vg.Length, fn func(draw.Canvas), distinctColours bool) []Entry {
	t.Helper()
	ops, err := RecordOps(w, h, fn)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return nil
	}
	entries := LegendEntries(ops)
	if len(entries) == 0 {
		t.Errorf("%s: no legend entries found", name)
	}
	problems := AlikeEntries(entries)
	if distinctColours {
		problems = append(problems, SharedColours(entries)...)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", name, p)
	}
	return entries
}
