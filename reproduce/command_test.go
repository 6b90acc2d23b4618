package reproduce

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vomc/vomc/reproduce/study"
)

func TestParseStageList(t *testing.T) {
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
	cfg, err := study.Layered("tiny", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	var b strings.Builder
	c := Command{Config: cfg, Options: Options{Engine: testEngine, Out: out, Version: "test"}, List: true, Stdout: &b}
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
