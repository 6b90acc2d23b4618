package study

import "testing"

func TestArchitectureAndPlain(t *testing.T) {
	tests := []struct {
		spec  string
		arch  string
		plain int // the layer count Plain accepts; 0: none
	}{
		{"4,4", "TF(4,4)", 2},
		{"4,4-x4", "TF(4,4)", 2},
		{"4,4-sin-x2", "TF(4,4) sin", 0},
		{"4,4,4-x4", "TF(4,4,4)", 3},
		{"4,4-ff", "TF(4,4) w/o FF", 0},
		{"4,4-ln", "TF(4,4) w/o LN", 0},
		{"8,8", "TF(8,8)", 2},
	}
	for _, tt := range tests {
		m, err := ParseModel(tt.spec)
		if err != nil {
			t.Fatalf("ParseModel(%q): %v", tt.spec, err)
		}
		if got := m.Architecture(); got != tt.arch {
			t.Errorf("%q: Architecture() = %q, want %q", tt.spec, got, tt.arch)
		}
		if m.Budget > 1 && m.Label() == m.Architecture() {
			t.Errorf("%q: Label %q should name the budget", tt.spec, m.Label())
		}
		for layers := 1; layers <= 4; layers++ {
			if got, want := m.Plain(layers), layers == tt.plain; got != want {
				t.Errorf("%q: Plain(%d) = %v, want %v", tt.spec, layers, got, want)
			}
		}
	}
}
