//go:build !nodemo

package models

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"strings"
	"testing"
)

// MaxBytes bounds the files of one shipped model (they are embedded in
// every vomc binary).
const MaxBytes = 1 << 20

// TestShipped checks every shipped model: SHA256SUMS lists each of its files
// (but itself) with the right checksum, it holds what vomc explore reads
// (config.json, model.safetensors, recipe.json) and a README.md and
// train.jsonl, and its files stay under MaxBytes.
func TestShipped(t *testing.T) {
	if len(Names()) == 0 {
		t.Fatal("no shipped model")
	}
	for _, set := range Demos {
		if len(set) == 0 {
			t.Error("an empty demo set")
		}
		for _, d := range set {
			if _, err := FS(d); err != nil {
				t.Errorf("demo model: %v", err)
			}
		}
	}
	for _, name := range Names() {
		fsys, err := FS(name)
		if err != nil {
			t.Fatal(err)
		}
		sums, err := fs.ReadFile(fsys, "SHA256SUMS")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		listed := map[string]string{}
		sc := bufio.NewScanner(strings.NewReader(string(sums)))
		for sc.Scan() {
			sum, file, ok := strings.Cut(sc.Text(), "  ")
			if !ok {
				t.Errorf("%s/SHA256SUMS: bad line %q", name, sc.Text())
				continue
			}
			listed[file] = sum
		}
		var total int64
		fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(fsys, path)
			if err != nil {
				t.Error(err)
				return nil
			}
			total += int64(len(b))
			if path == "SHA256SUMS" {
				return nil
			}
			h := sha256.Sum256(b)
			if want, ok := listed[path]; !ok {
				t.Errorf("%s/%s is not in SHA256SUMS", name, path)
			} else if hex.EncodeToString(h[:]) != want {
				t.Errorf("%s/%s: SHA-256 %x, SHA256SUMS says %s", name, path, h, want)
			}
			delete(listed, path)
			return nil
		})
		for f := range listed {
			t.Errorf("%s/SHA256SUMS lists %s, which is not shipped", name, f)
		}
		for _, f := range []string{"config.json", "model.safetensors", "recipe.json", "README.md", "train.jsonl"} {
			if _, err := fs.Stat(fsys, f); err != nil {
				t.Errorf("%s lacks %s", name, f)
			}
		}
		if total > MaxBytes {
			t.Errorf("%s holds %d bytes, more than %d", name, total, MaxBytes)
		}
		t.Logf("%s: %d bytes", name, total)
	}
	if _, err := FS("../explore"); err == nil {
		t.Error("FS(\"../explore\"): no error")
	}
}
