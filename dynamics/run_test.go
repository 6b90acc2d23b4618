package dynamics

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestExistingOutput: the first of Write's files found in a directory, in
// FileNames' order.
func TestExistingOutput(t *testing.T) {
	want := []string{Files.JSON, Files.CSV, Files.Phases, Files.PNG, Files.SVG}
	if got := FileNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("FileNames %v, want %v", got, want)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		add, want string
	}{{"", ""}, {"other.txt", ""}, {Files.SVG, Files.SVG}, {Files.CSV, Files.CSV}, {Files.JSON, Files.JSON}} {
		if tc.add != "" {
			os.WriteFile(filepath.Join(dir, tc.add), nil, 0o644)
		}
		want := ""
		if tc.want != "" {
			want = filepath.Join(dir, tc.want)
		}
		if got := ExistingOutput(dir); got != want {
			t.Errorf("after %q: %q, want %q", tc.add, got, want)
		}
	}
	if got := ExistingOutput(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("missing directory: %q", got)
	}
}
