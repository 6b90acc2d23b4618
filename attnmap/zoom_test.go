package attnmap

import (
	"fmt"
	"image"
	"image/color"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vomc/vomc/plot/plottest"
)

// offsetHead is a head that puts all its weight d positions back (on key
// 0 for the first d queries).
func offsetHead(T, d int) []float32 {
	return headFrom(T, func(i int) []int { return []int{max(0, i-d)} })
}

// renderFigure draws f at its DPI and returns the image and the data
// areas of its panels.
func renderFigure(f *figure) (image.Image, [][]*draw.Canvas) {
	c := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(f.dpi))
	dc := draw.New(c)
	f.draw(dc)
	return c.Image(), f.dataAreas(dc)
}

// cellPixel returns the colour of the image at the centre of cell (r, c)
// of an n×n heatmap drawn on the data area da of an image at dpi.
func cellPixel(img image.Image, da *draw.Canvas, dpi, n, r, c int, h vg.Length) color.NRGBA {
	w := da.Max.X - da.Min.X
	hh := da.Max.Y - da.Min.Y
	x := da.Min.X + (vg.Length(c)+0.5)/vg.Length(n)*w
	y := da.Max.Y - (vg.Length(r)+0.5)/vg.Length(n)*hh // row 0 at the top
	px := int(float64(x) / 72 * float64(dpi))
	py := int(float64(h-y) / 72 * float64(dpi))
	return color.NRGBAModel.Convert(img.At(px, py)).(color.NRGBA)
}

// TestZoomPixels draws maps whose heads attend a fixed offset back and
// checks, cell by cell, that the zoom panels' pixels show the window of
// the weights asked for: the default window (the last 64 queries and
// keys) of a head attending 3 back has its dark cells on the third
// diagonal below the main one, white cells elsewhere below the diagonal
// and grey (masked) cells above it; a window of 32 queries from 268 and
// keys from 168 of a head attending 100 back has its dark cells on its
// diagonal. In the full 512-position map one cell is under a pixel wide;
// in the zoom it is several.
func TestZoomPixels(t *testing.T) {
	const T = 512
	dark, white := heatColor(1), heatColor(0)
	for _, tc := range []struct {
		name       string
		d          int
		zoom       Zoom
		q0, k0, n  int
		wantTitle  string
		wantOnDiag func(r, c int) bool
	}{
		{"default", 3, Zoom{}, T - 64, T - 64, 64, "queries and keys 448–511", func(r, c int) bool { return c == r-3 }},
		{"window", 100, Zoom{Size: 32, QueryEnd: 300, KeyEnd: 200}, 268, 168, 32, "queries 268–299, keys 168–199", func(r, c int) bool { return c == r }},
	} {
		maps := [][][]float32{{offsetHead(T, tc.d), offsetHead(T, tc.d)}}
		f, err := heatmapFigure(maps, Options{Title: "offset heads", Zoom: tc.zoom})
		if err != nil {
			t.Fatal(err)
		}
		boxes := plottest.Check(t, tc.name, f.w, f.h, f.draw)
		if got := plottest.Find(boxes, tc.wantTitle); len(got) != 2 {
			t.Errorf("%s: want the zoom range %q in both zoom titles, have %q", tc.name, tc.wantTitle, plottest.Texts(boxes))
		}
		img, areas := renderFigure(f)
		if len(areas) != 2 {
			t.Fatalf("%s: %d rows of panels, want the full maps and the zooms", tc.name, len(areas))
		}
		for h := range 2 {
			za := areas[1][h]
			if px := float64(za.Max.X-za.Min.X) / 72 * float64(f.dpi) / float64(tc.n); px < 4 {
				t.Errorf("%s: a zoom cell is %.1f pixels wide, want ≥ 4", tc.name, px)
			}
			bad := 0
			for r := range tc.n {
				for c := range tc.n {
					i, j := tc.q0+r, tc.k0+c
					want := white
					switch {
					case j > i:
						want = maskColor
					case tc.wantOnDiag(r, c):
						want = dark
					}
					if got := cellPixel(img, za, f.dpi, tc.n, r, c, f.h); got != want {
						if bad++; bad <= 5 {
							t.Errorf("%s: head %d zoom cell (query %d, key %d): pixel %v, want %v", tc.name, h+1, i, j, got, want)
						}
					}
				}
			}
			if bad > 5 {
				t.Errorf("%s: head %d: %d zoom cells wrong in all", tc.name, h+1, bad)
			}
		}
	}
}

// TestZoomDefaults: the zoom panels are drawn by default above 128
// positions and not at or below it, nor with a negative Size; windows
// outside the maps are errors; and at the default sizes every full map
// is at least 250 pixels a side, as are the zooms.
func TestZoomDefaults(t *testing.T) {
	for _, tc := range []struct {
		L, H, T int
		zoom    Zoom
		rows    int // rows of panels per layer
	}{
		{2, 4, 512, Zoom{}, 2},
		{2, 4, 256, Zoom{}, 2},
		{1, 8, 1536, Zoom{}, 2},
		{4, 4, 129, Zoom{}, 2},
		{2, 4, 128, Zoom{}, 1},
		{2, 2, 64, Zoom{}, 1},
		{2, 2, 64, Zoom{Size: 16}, 2},
		{2, 4, 512, Zoom{Size: -1}, 1},
	} {
		name := fmt.Sprintf("%dx%d T=%d %+v", tc.L, tc.H, tc.T, tc.zoom)
		maps := make([][][]float32, tc.L)
		for l := range maps {
			for h := range tc.H {
				maps[l] = append(maps[l], offsetHead(tc.T, h+1))
			}
		}
		f, err := heatmapFigure(maps, Options{Title: name, Labels: testLabels(tc.L, tc.H), Zoom: tc.zoom})
		if err != nil {
			t.Fatal(err)
		}
		plottest.Check(t, name, f.w, f.h, f.draw)
		c := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(f.dpi))
		areas := f.dataAreas(draw.New(c))
		if len(areas) != tc.rows*tc.L {
			t.Errorf("%s: %d rows of panels, want %d", name, len(areas), tc.rows*tc.L)
		}
		for r := range areas {
			for h, da := range areas[r] {
				if da == nil {
					continue
				}
				w := float64(da.Max.X-da.Min.X) / 72 * float64(f.dpi)
				hgt := float64(da.Max.Y-da.Min.Y) / 72 * float64(f.dpi)
				if w < 250 || hgt < 250 {
					t.Errorf("%s: panel row %d head %d is %.0f×%.0f pixels, want ≥ 250", name, r, h+1, w, hgt)
				}
			}
		}
		if dir := writeFigures(t); dir != "" && tc.T == 512 {
			if err := Heatmaps(filepath.Join(dir, fmt.Sprintf("zoom_%dx%d_T%d_rows%d.png", tc.L, tc.H, tc.T, tc.rows)), maps, Options{Title: name, Labels: testLabels(tc.L, tc.H), Zoom: tc.zoom}); err != nil {
				t.Fatal(err)
			}
		}
	}
	maps := [][][]float32{{offsetHead(256, 1)}}
	for _, z := range []Zoom{{Size: 300}, {Size: 64, QueryEnd: 300}, {Size: 64, QueryEnd: 32}, {Size: 64, KeyEnd: 10}, {Size: 8, KeyEnd: 257}} {
		if _, err := heatmapFigure(maps, Options{Zoom: z}); err == nil || !strings.Contains(err.Error(), "zoom") {
			t.Errorf("zoom %+v: error %v, want one about the zoom window", z, err)
		}
	}
}
