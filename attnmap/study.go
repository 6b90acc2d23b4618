package attnmap

import (
	"errors"

	"github.com/vomc/vomc/internal/fsutil"
)

// Study is one attention study of a model, as in Section 4.3 and Fig. 5
// of the paper: the analysis of its heads over windows (Analyze) and the
// figures of the first window. `vomc attention` and reproduce's Fig. 5
// stage both run it (RunStudy).
type Study struct {
	Model   Mapper
	Windows [][]byte // the windows of the null test; the figures show Windows[0]
	MaxK    int      // hypotheses up to k = MaxK and d = MaxK
	Null    NullOptions

	// The suffix-match panel: suffix length K, Offset 0 or 1 (−1: the
	// head's better one), the head Layer.Head (1-based; Layer 0: the head
	// with the largest mass above chance; see SuffixPanel).
	K, Offset, Layer, Head int
	// Queries are the panel's query positions; nil: MatchedQueries of the
	// first window.
	Queries []int
	// RequireSuffix makes RunStudy fail with ErrNoSuffixHead, before it
	// writes anything, when no head fits the panel.
	RequireSuffix bool

	// Heatmaps are the files of every head's map of the first window
	// (HeatmapOptions.Labels is set to the heads' labels).
	Heatmaps       []string
	HeatmapOptions Options
	// SuffixMatch are the files of the suffix-match panel, drawn when a
	// head fits and there are queries.
	SuffixMatch []string

	// With ProfileWindows, the per-position profile (PositionProfile) over
	// them: written as CSV to ProfileCSV when not empty (an existing file
	// only with Force), drawn to ProfileFigure when not empty (titled
	// ProfileTitle; not drawn when no head is labelled).
	ProfileWindows [][]byte
	ProfileCSV     string
	ProfileFigure  string
	ProfileTitle   string
	Force          bool
}

// ErrNoSuffixHead is RunStudy's error with Study.RequireSuffix when no
// head has a suffix-match score for K (among Layer.Head when given).
var ErrNoSuffixHead = errors.New("attnmap: no head fits the suffix-match panel")

// StudyResult is what RunStudy found and drew.
type StudyResult struct {
	*Analysis
	// Figure is the suffix-match panel; Suffix is false when no head has a
	// suffix-match score for K (among Layer.Head when given).
	Figure Figure
	Suffix bool
	// SuffixDrawn says whether the SuffixMatch files were written.
	SuffixDrawn bool
	// Profile and Drops (the labelled heads that fail in one eighth of the
	// window; Profile.Drops) are nil without ProfileWindows; ProfileDrawn
	// says whether ProfileFigure was written.
	Profile      *Profile
	Drops        []Drop
	ProfileDrawn bool
}

// RunStudy analyses s.Model on s.Windows and writes the figures of s.
func RunStudy(s Study) (*StudyResult, error) {
	an, err := Analyze(s.Model, s.Windows, s.MaxK, s.Null)
	if err != nil {
		return nil, err
	}
	r := &StudyResult{Analysis: an}
	x := s.Windows[0]
	T := len(x)
	qs := s.Queries
	if sel, off, ok := SuffixPanel(an.Scores, s.K, s.Offset, s.Layer, s.Head); ok {
		if qs == nil {
			qs = MatchedQueries(x, s.K, off)
		}
		h := an.Scores[sel]
		r.Figure, r.Suffix = an.SuffixFigure(x, s.K, off, h.Layer, h.Head, qs)
	}
	if !r.Suffix && s.RequireSuffix {
		return nil, ErrNoSuffixHead
	}
	opts := s.HeatmapOptions
	opts.Labels = an.Labels()
	for _, p := range s.Heatmaps {
		if err := Heatmaps(p, an.Maps, opts); err != nil {
			return nil, err
		}
	}
	if r.Suffix && len(qs) > 0 {
		for _, p := range s.SuffixMatch {
			if err := SuffixMatchFigure(p, x, an.Attention(r.Figure), T, qs, s.K, r.Figure.Offset); err != nil {
				return nil, err
			}
		}
		r.SuffixDrawn = len(s.SuffixMatch) > 0
	}
	if len(s.ProfileWindows) == 0 {
		return r, nil
	}
	pxs := s.ProfileWindows
	r.Profile, err = PositionProfile(pxs, func(w int) ([][][]float32, error) { return s.Model.AttentionMaps(pxs[w]) }, s.MaxK)
	if err != nil {
		return nil, err
	}
	r.Drops = r.Profile.Drops(an.Scores, 8)
	if s.ProfileCSV != "" {
		if err := fsutil.WriteFile(s.ProfileCSV, s.Force, r.Profile.WriteCSV); err != nil {
			return nil, err
		}
	}
	if s.ProfileFigure != "" {
		switch err := ProfileFigure(s.ProfileFigure, r.Profile, an.Scores, max(1, T/50), s.ProfileTitle); {
		case err == nil:
			r.ProfileDrawn = true
		case !errors.Is(err, ErrNoLabelled):
			return nil, err
		}
	}
	return r, nil
}

// MatchedQueries are up to two query positions late in x (from 70% of
// the window on, at least T/20 apart) that have at least two suffix
// matches of length k at offset: the queries of reproduce's Fig. 5.
func MatchedQueries(x []byte, k, offset int) []int {
	var qs []int
	for q := len(x) * 7 / 10; q < len(x) && len(qs) < 2; q++ {
		if len(SuffixMatches(x, q, k, offset)) >= 2 && (len(qs) == 0 || q >= qs[0]+len(x)/20) {
			qs = append(qs, q)
		}
	}
	return qs
}
