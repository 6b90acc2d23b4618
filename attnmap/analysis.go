package attnmap

import "fmt"

// Mapper computes a model's attention maps of a window: maps[l][h] is the
// T×T matrix of layer l+1, head h+1 (e.g. *transformer.Model).
type Mapper interface {
	AttentionMaps(x []byte) ([][][]float32, error)
}

// Analysis is the attention of a model on the windows xs: the maps of
// xs[0] and every head's scores over all of xs (ScoreWindows).
type Analysis struct {
	Maps   [][][]float32
	Scores []HeadScore
}

// Analyze computes the maps of xs[0] and scores every head over xs with
// hypotheses up to maxK and the null test of null (see ScoreWindows).
func Analyze(m Mapper, xs [][]byte, maxK int, null NullOptions) (*Analysis, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("attnmap: no windows")
	}
	maps, err := m.AttentionMaps(xs[0])
	if err != nil {
		return nil, err
	}
	scores, err := ScoreWindows(xs, func(w int) ([][][]float32, error) {
		if w == 0 {
			return maps, nil
		}
		return m.AttentionMaps(xs[w])
	}, maxK, null)
	if err != nil {
		return nil, err
	}
	return &Analysis{Maps: maps, Scores: scores}, nil
}

// Labels are the heads' labels, [layer][head], for Options.Labels.
func (a *Analysis) Labels() [][]string {
	lab := make([][]string, len(a.Maps))
	for l := range a.Maps {
		lab[l] = make([]string, len(a.Maps[l]))
	}
	for _, s := range a.Scores {
		lab[s.Layer-1][s.Head-1] = s.Label
	}
	return lab
}

// Figure describes a suffix-match figure (SuffixMatchFigure): the head,
// the hypothesis and the queries.
type Figure struct {
	Layer   int     `json:"layer"`
	Head    int     `json:"head"`
	K       int     `json:"k"`
	Offset  int     `json:"offset"`
	Queries []Query `json:"queries"`
	Score   Score   `json:"score"`
}

// Query is one panel of a suffix-match figure.
type Query struct {
	Position int   `json:"position"`
	Matches  []int `json:"matches"`
	// Mass is the head's attention on the matches from this query.
	Mass float64 `json:"mass"`
}

// SuffixFigure chooses the head of the suffix-match figure of x = xs[0]
// (SuffixPanel with k, offset, layer, head; see there) and describes it
// for the query positions qs. ok is false when no head fits.
func (a *Analysis) SuffixFigure(x []byte, k, offset, layer, head int, qs []int) (fig Figure, ok bool) {
	sel, off, ok := SuffixPanel(a.Scores, k, offset, layer, head)
	if !ok {
		return Figure{}, false
	}
	h := a.Scores[sel]
	fig = Figure{Layer: h.Layer, Head: h.Head, K: k, Offset: off}
	fig.Score, _ = h.SuffixScore(k, off)
	att, T := a.Maps[h.Layer-1][h.Head-1], len(x)
	for _, q := range qs {
		mt := SuffixMatches(x, q, k, off)
		mass := 0.0
		for _, j := range mt {
			mass += float64(att[q*T+j])
		}
		fig.Queries = append(fig.Queries, Query{Position: q, Matches: mt, Mass: mass})
	}
	return fig, true
}

// Attention is the map of the figure's head.
func (a *Analysis) Attention(fig Figure) []float32 { return a.Maps[fig.Layer-1][fig.Head-1] }

// DefaultQueries are the query positions of a suffix-match figure of a
// window of T symbols: T−14 and T−2, late but not the last position
// (position T−1 predicts nothing in training, a window has T−1 targets,
// so its attention is never trained).
func DefaultQueries(T int) []int {
	qs := []int{max(0, T-14), max(0, T-2)}
	if qs[0] == qs[1] {
		qs = qs[1:]
	}
	return qs
}

// Windows prepares the windows of an analysis: the first is cut to at
// most N symbols (T = its length), the others to T, and a last window
// shorter than T is dropped with its entry in ids (the windows' names,
// e.g. indices or offsets).
func Windows(xs [][]byte, ids []int, N int) ([][]byte, []int) {
	T := min(len(xs[0]), N)
	out := make([][]byte, len(xs))
	for i := range xs {
		out[i] = xs[i][:min(len(xs[i]), T)]
	}
	if len(out[len(out)-1]) < T {
		out, ids = out[:len(out)-1], ids[:len(ids)-1]
	}
	return out, ids
}
