package draw

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/source"
)

// Formats lists, for messages, the tree file formats that Save writes.
const Formats = ".json, .svg, .png or .dot"

// Writer returns the function that writes t in the format named by path's
// extension, in any case: .json (source.Tree.WriteJSON), .svg (WriteSVG),
// .png (WritePNG), .dot or .gv (source.Tree.WriteDOT); nil for any other
// extension.
func Writer(t *source.Tree, path string) func(io.Writer) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return t.WriteJSON
	case ".svg":
		return func(w io.Writer) error { return WriteSVG(w, t) }
	case ".png":
		return func(w io.Writer) error { return WritePNG(w, t) }
	case ".dot", ".gv":
		return t.WriteDOT
	}
	return nil
}

// KnownFormat reports whether Save can write a tree to path (see Writer),
// so that a command can check its output names before any work.
func KnownFormat(path string) bool { return Writer(nil, path) != nil }

// Save writes t to path in the format its extension names (see Writer)
// with fsutil.WriteFile: atomically, creating the directory, and refusing
// an existing file unless force. An unknown extension is an error naming
// Formats.
func Save(t *source.Tree, path string, force bool) error {
	write := Writer(t, path)
	if write == nil {
		return fmt.Errorf("%s: unknown tree format (use %s)", path, Formats)
	}
	return fsutil.WriteFile(path, force, write)
}
