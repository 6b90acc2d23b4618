package explore

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// MaxStaticBytes bounds the attention maps a static page carries (their
// lower triangles as float32, before base64).
const MaxStaticBytes = 96 << 20

// Bundle is what a static page carries: one window, every model at its
// final parameters, their attention maps, head labels and mean curves, and
// CTW's MAP context at every position.
type Bundle struct {
	Meta   *Meta          `json:"meta"`
	Refs   *RefView       `json:"refs"`
	Models []StaticModel  `json:"models"`
	T0     int            `json:"t"`
	MAP    []*Context     `json:"map"`
	MAPLog []float64      `json:"map_log_posterior"`
	Extra  map[string]any `json:"extra,omitempty"`
}

// StaticModel is one model in a Bundle; Maps[l][h] is the base64 of the
// map's lower triangle (row i: keys 0..i) as little-endian float32.
type StaticModel struct {
	View   *ModelView `json:"view"`
	Labels [][]Label  `json:"labels"`
	Maps   [][]string `json:"maps"`
	Mean   *Mean      `json:"mean,omitempty"`
}

// StaticBundle computes the bundle of window w with t0 the position first
// shown (−1: near the end); it waits for the head labels and, when mean is
// true, the mean curves.
func (s *Server) StaticBundle(w, t0 int, mean bool) (*Bundle, error) {
	win, err := s.Window(w)
	if err != nil {
		return nil, err
	}
	T := len(win.X)
	if t0 < 0 {
		t0 = min(T-2, T*94/100)
	}
	if t0 >= T {
		return nil, fmt.Errorf("%w: position %d: the window has positions 0..%d", ErrNotFound, t0, T-1)
	}
	var total int64
	for _, m := range s.models {
		for _, H := range m.Config.Heads {
			total += int64(H) * int64(T) * int64(T+1) / 2 * 4
		}
	}
	if total > MaxStaticBytes {
		return nil, fmt.Errorf("explore: the attention maps of one window take %d MiB (> %d MiB): a static page for a model this large is too heavy to share; use the server (vomc explore without --static)", total>>20, MaxStaticBytes>>20)
	}
	meta := s.Meta()
	meta.Static = true
	for i := range meta.Models {
		meta.Models[i].Steps = []int{}
	}
	rv, err := s.Refs(win)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Meta: meta, Refs: rv, T0: t0}
	for mi := range s.models {
		mv, err := s.ModelWindow(win, mi, FinalStep)
		if err != nil {
			return nil, err
		}
		labels, _, err := s.Labels(mi, FinalStep, true)
		if err != nil {
			return nil, err
		}
		sm := StaticModel{View: mv, Labels: labels}
		for _, hs := range mv.Maps {
			var row []string
			for _, mp := range hs {
				row = append(row, triangle(mp, T))
			}
			sm.Maps = append(sm.Maps, row)
		}
		if mean {
			if sm.Mean, _, err = s.Mean(mi, FinalStep, true); err != nil {
				return nil, err
			}
		}
		b.Models = append(b.Models, sm)
	}
	b.MAP, b.MAPLog = make([]*Context, T), make([]float64, T)
	for t := range T {
		if b.MAP[t], b.MAPLog[t], err = s.mapContext(win.X[:t+1]); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// triangle encodes the lower triangle of a T×T map.
func triangle(mp []float32, T int) string {
	buf := make([]byte, 0, 4*T*(T+1)/2)
	for i := range T {
		for _, v := range mp[i*T : i*T+i+1] {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	return base64.StdEncoding.EncodeToString(buf)
}

// WriteStatic writes one self-contained HTML page for window w (see
// StaticBundle): the page's script and style inline, the data in a JSON
// script element; it opens no connection.
func (s *Server) WriteStatic(out io.Writer, w, t0 int, mean bool) error {
	b, err := s.StaticBundle(w, t0, mean)
	if err != nil {
		return err
	}
	return WriteBundle(out, b)
}

// WriteBundle writes the page of a bundle.
func WriteBundle(out io.Writer, b *Bundle) error {
	page, err := assets.ReadFile("assets/index.html")
	if err != nil {
		return err
	}
	css, _ := assets.ReadFile("assets/style.css")
	js, _ := assets.ReadFile("assets/app.js")
	var data bytes.Buffer
	enc := json.NewEncoder(&data) // escapes <, > and & (no "</script>" inside)
	if err := enc.Encode(b); err != nil {
		return fmt.Errorf("explore: static page: %w", err)
	}
	html := string(page)
	for _, r := range []struct{ old, new string }{
		{`<link rel="stylesheet" href="assets/style.css">`, "<style>\n" + string(css) + "</style>"},
		{`<script src="assets/app.js"></script>`, `<script id="vomc-bundle" type="application/json">` + strings.TrimSpace(data.String()) +
			"</script>\n<script>\n" + strings.ReplaceAll(string(js), "</script", `<\/script`) + "</script>"},
		{`<title>vomc explore</title>`, fmt.Sprintf("<title>vomc explore — %s, window %d</title>", htmlEscape(b.Meta.Data), b.Refs.Index)},
	} {
		if !strings.Contains(html, r.old) {
			return fmt.Errorf("explore: static page: the page template lacks %q", r.old)
		}
		html = strings.Replace(html, r.old, r.new, 1)
	}
	_, err = io.WriteString(out, html)
	return err
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
