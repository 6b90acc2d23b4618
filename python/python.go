// Package python carries vomc's PyTorch engine, the Python package
// vomc_torch (this directory), inside the vomc binary, so that 'vomc train
// --engine torch' needs no checkout: Extract writes the package into a
// per-user cache directory named after its content and returns the
// directory to put on PYTHONPATH.
package python

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Source is the vomc_torch package: its modules and the declaration of
// the training options it reads (OptionsFile).
//
//go:embed vomc_torch/*.py vomc_torch/*.json
var Source embed.FS

// OptionsFile is the declaration of the training options in the package
// (transformer.OptionsSchema), from which the engine takes its training
// flags, defaults and checks.
const OptionsFile = Package + "/train_options.json"

//go:generate go run gen_options.go

// Package is the name of the Python package.
const Package = "vomc_torch"

// Hash is the SHA-256 (hex) of the package's files, names and contents in
// name order.
func Hash() string {
	h := sha256.New()
	for _, name := range files() {
		b, _ := Source.ReadFile(name)
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func files() []string {
	var out []string
	fs.WalkDir(Source, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// Extract writes the package under root (empty: the user cache directory,
// or the temporary directory where there is none) as
// root/vomc/python-HASH/vomc_torch and returns root/vomc/python-HASH, the
// directory to put on PYTHONPATH. A complete copy is reused; a new one is
// written into a temporary directory and renamed into place, so processes
// extracting at once never see a partial package.
func Extract(root string) (string, error) {
	if root == "" {
		var err error
		if root, err = os.UserCacheDir(); err != nil {
			root = os.TempDir()
		}
	}
	base := filepath.Join(root, "vomc")
	dir := filepath.Join(base, "python-"+Hash()[:16])
	if complete(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("python: %w", err)
	}
	tmp, err := os.MkdirTemp(base, ".python-tmp")
	if err != nil {
		return "", fmt.Errorf("python: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, name := range files() {
		b, err := Source.ReadFile(name)
		if err != nil {
			return "", err
		}
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("python: %w", err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", fmt.Errorf("python: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if complete(dir) { // another process won the race
			return dir, nil
		}
		return "", fmt.Errorf("python: %w", err)
	}
	return dir, nil
}

// complete reports whether dir holds every file of the package with the
// right contents.
func complete(dir string) bool {
	for _, name := range files() {
		want, _ := Source.ReadFile(name)
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != string(want) {
			return false
		}
	}
	return true
}
