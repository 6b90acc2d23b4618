package figures

import (
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// prevProfile is a ladder profile of four layer-1 heads over n queries
// whose head h puts w(h, q) on the previous key.
func prevProfile(n int, w func(h, q int) float64) results.LadderProfile {
	p := results.LadderProfile{Prev: make([][]float64, 4)}
	for h := range p.Prev {
		p.Prev[h] = make([]float64, n)
		for q := 1; q < n; q++ {
			p.Prev[h][q] = w(h, q)
		}
	}
	return p
}

func TestBestPrev(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    results.LadderProfile
		want []float64
	}{
		{"no heads", results.LadderProfile{}, nil},
		{"one head", results.LadderProfile{Prev: [][]float64{{0, 0.5, 0.9}}}, []float64{0, 0.5, 0.9}},
		// the job handed from head 0 to head 1 at q = 2: the best of each
		{"hand-over", results.LadderProfile{Prev: [][]float64{{0, 0.95, 0.1, 0.0}, {0, 0.2, 0.93, 0.97}}}, []float64{0, 0.95, 0.93, 0.97}},
	} {
		if got := BestPrev(tc.p); !slices.Equal(got, tc.want) {
			t.Errorf("%s: BestPrev = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDrawLadderPrev: one panel per architecture that has a profile, none
// drawn (and no file) without profiles.
func TestDrawLadderPrev(t *testing.T) {
	cfg, err := study.Preset("ladder")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if ok, err := DrawLadderPrev(dir, cfg, nil); ok || err != nil {
		t.Fatalf("without profiles: drew %v, %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(dir, LadderPrevFile)); !os.IsNotExist(err) {
		t.Fatalf("without profiles a file was written: %v", err)
	}
	profiles := map[string]results.LadderProfile{}
	for _, s := range []string{"4,4", "4,4-x2", "4,4-x4", "4,4,4-x4"} {
		m, err := study.ParseModel(s)
		if err != nil {
			t.Fatal(err)
		}
		for r := range cfg.SeedsOf(m) {
			collapse := 128 * max(1, m.Budget) // the head holds up to here
			profiles[results.RepLabel(m, r)] = prevProfile(cfg.N, func(h, q int) float64 {
				if h == r && q < collapse {
					return 0.97
				}
				return 0.01
			})
		}
	}
	ok, err := DrawLadderPrev(dir, cfg, profiles)
	if !ok || err != nil {
		t.Fatalf("drew %v, %v", ok, err)
	}
	f, err := os.Open(filepath.Join(dir, LadderPrevFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	// two architectures with profiles (TF(4,4), TF(4,4,4)): two panels of
	// 2.6 in, 9 in wide
	if w, h := float64(img.Width), float64(img.Height); h/w < 2*2.6/9*0.95 || h/w > 2*2.6/9*1.05 {
		t.Errorf("figure %d×%d: want two panels (height/width %.3f)", img.Width, img.Height, 2*2.6/9)
	}
}
