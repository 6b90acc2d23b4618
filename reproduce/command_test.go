package reproduce

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLayeredAndStageList(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(file, []byte(`{"N": 96}`), 0o644)
	cfg, err := Layered("tiny", file, []string{"E=48"})
	if err != nil || cfg.N != 96 || cfg.Embed != 48 {
		t.Errorf("layered: N=%d E=%d, %v", cfg.N, cfg.Embed, err)
	}
	for _, bad := range [][]string{{"E"}, {"nokey=1"}, {"N=x"}} {
		if _, err := Layered("tiny", "", bad); err == nil {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if _, err := Layered("huge", "", nil); err == nil {
		t.Error("unknown preset accepted")
	}
	if got, err := ParseStageList(" a,b "); err != nil || !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("ParseStageList: %v, %v", got, err)
	}
	if _, err := ParseStageList("a,,b"); err == nil {
		t.Error("an empty stage name accepted")
	}
}

// TestCommandListAndDry checks the stage listing and the dry run's
// report, neither of which runs a stage.
func TestCommandListAndDry(t *testing.T) {
	cfg, err := Layered("tiny", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	var b strings.Builder
	c := Command{Config: cfg, Options: Options{Out: out, Version: "test"}, List: true, Stdout: &b}
	if err := c.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "#   stage") || !strings.Contains(b.String(), "data-train") {
		t.Errorf("stage list:\n%s", b.String())
	}
	b.Reset()
	c.List, c.Dry = false, true
	if err := c.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "effective configuration:") || !strings.Contains(b.String(), "estimated training time") {
		t.Errorf("dry run:\n%s", b.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the output directory was created")
	}
}
