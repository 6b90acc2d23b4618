package draw

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/source"
)

// TestSave writes a tree in every format its extension can name and
// compares the files with the writers' own output, byte for byte.
func TestSave(t *testing.T) {
	tr := mustSample(t, source.PaperPrior(3), 5)
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"t.json", tr.WriteJSON},
		{"t.svg", func(w io.Writer) error { return WriteSVG(w, tr) }},
		{"T.PNG", func(w io.Writer) error { return WritePNG(w, tr) }},
		{"t.dot", tr.WriteDOT},
		{"t.Gv", tr.WriteDOT},
	} {
		p := filepath.Join(dir, "sub", c.name)
		if !KnownFormat(p) {
			t.Errorf("%s: format not known", c.name)
		}
		if err := Save(tr, p, false); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := c.write(&want); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: %d bytes written, want the writer's %d (%v)", c.name, len(got), want.Len(), err)
		}
		if err := Save(tr, p, false); !errors.Is(err, fsutil.ErrExists) {
			t.Errorf("%s: overwritten without force: %v", c.name, err)
		}
		if err := Save(tr, p, true); err != nil {
			t.Errorf("%s: with force: %v", c.name, err)
		}
	}
	for _, name := range []string{"t.txt", "t", "t.json.gz", "json"} {
		p := filepath.Join(dir, name)
		if KnownFormat(p) || Writer(tr, p) != nil {
			t.Errorf("%s: format known", name)
		}
		if err := Save(tr, p, false); err == nil {
			t.Errorf("%s: saved", name)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: a file was written", name)
		}
	}
}
