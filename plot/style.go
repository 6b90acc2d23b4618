package plot

import (
	"image/color"

	"gonum.org/v1/plot/vg"
)

// Style is the line style of the k-th method of a figure.
type Style struct {
	// Color is the line colour; the band uses it with alpha 0x38.
	Color color.Color
	// Dashes is the dash pattern (on, off, … lengths); nil is solid.
	Dashes []vg.Length
	// Width is the line width; 0 means 1.4 points.
	Width vg.Length
}

// palette is the one set of curve colours of vomc's figures: the seven
// colours of Okabe & Ito (2008) other than black (which is kept for the
// reference method), the darker ones first and their yellow last; then
// Paul Tol's 'muted' set less its cyan (close to Okabe–Ito's sky blue)
// and pale grey (too light for a line on white), then a mid grey. The
// colours that look alike (Okabe–Ito's bluish green and Tol's teal, the
// reddish purples, sand and yellow) get different dash patterns from
// MethodStyle.
var palette = []color.NRGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue (Okabe–Ito)
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x33, 0x22, 0x88, 0xFF}, // indigo (Tol muted)
	{0x88, 0x22, 0x55, 0xFF}, // wine
	{0x11, 0x77, 0x33, 0xFF}, // green
	{0x99, 0x99, 0x33, 0xFF}, // olive
	{0xAA, 0x44, 0x99, 0xFF}, // purple
	{0x44, 0xAA, 0x99, 0xFF}, // teal
	{0xCC, 0x66, 0x77, 0xFF}, // rose
	{0xDD, 0xCC, 0x77, 0xFF}, // sand
	{0xF0, 0xE4, 0x42, 0xFF}, // yellow (Okabe–Ito)
	{0x7F, 0x7F, 0x7F, 0xFF}, // grey
}

// Palette returns the curve colours in the order MethodStyle gives them
// (a copy): 16 distinct, colour-blind-safe colours, none of them black.
func Palette() []color.NRGBA {
	return append([]color.NRGBA(nil), palette...)
}

// dashes are the four basic dash patterns; DashPattern extends them.
var dashes = [][]vg.Length{
	nil,                          // solid
	{vg.Points(6), vg.Points(3)}, // dashed
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(7), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)}, // dash-dot
}

// DashPattern returns the j-th dash pattern (j ≥ 0; a negative j is 0):
// solid, dashed, dotted, dash-dot, then a dash followed by j−2 dots
// (dash-dot-dot, dash-dot-dot-dot, …), every one different.
func DashPattern(j int) []vg.Length {
	j = max(j, 0)
	if j < len(dashes) {
		return append([]vg.Length(nil), dashes[j]...)
	}
	d := []vg.Length{vg.Points(8), vg.Points(2.5)}
	for range j - 2 {
		d = append(d, vg.Points(1.5), vg.Points(2.5))
	}
	return d
}

// MethodStyle returns the style of a method: the reference is solid black;
// the k-th other method (k = 0, 1, …) gets colour Palette()[k mod 16] and,
// in the r-th round through the palette (r = ⌊k/16⌋), dash pattern
// (k + r) mod 4 for r < 4 (solid, dashed, dotted, dash-dot) and
// DashPattern(r) after that. So the first 16 methods differ in colour
// (with the dash patterns cycling among them too, so that the colours
// that look alike also differ in dash), the first 64 in the pair (colour,
// dash), and no two methods of a figure are ever drawn alike.
func MethodStyle(k int, reference bool) Style {
	if reference {
		return Style{Color: color.NRGBA{0, 0, 0, 0xFF}}
	}
	k = max(k, 0)
	r := k / len(palette)
	d := (k + r) % len(dashes)
	if r >= len(dashes) {
		d = r
	}
	var dash []vg.Length
	if d > 0 {
		dash = DashPattern(d)
	}
	return Style{Color: palette[k%len(palette)], Dashes: dash}
}
