package dataset

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/internal/fsutil"
)

// Write stores the data set in the directory dir (see the package
// documentation for the layout), ATOMICALLY: everything is written and
// synced in a temporary directory next to dir, which is then renamed to
// dir, so dir never holds a half-written data set. The data set is checked
// first (parameters, lengths, symbols < A, tree indices) and the manifest's
// checksums are recomputed from the data being written.
//
// If dir exists and is not empty, Write refuses unless force is set; even
// with force it only replaces a directory that holds a vomc data set (a
// manifest.json whose "format" is "vomc-dataset"), never any other
// directory. The old data set is moved aside, the new one renamed into
// place, and the old one then deleted.
func (d *Dataset) Write(dir string, force bool) error {
	if err := d.check(); err != nil {
		return err
	}
	d.Manifest.Format, d.Manifest.Version = FormatName, FormatVersion
	if d.Manifest.Tool == "" {
		d.Manifest.Tool = ToolVersion
	}
	d.Manifest.Trees = d.Trees
	d.Manifest.WindowsPerTree = d.Manifest.Config().WindowsPerTree()
	d.Manifest.Windows = len(d.TreeOf)
	d.Manifest.SymbolsFile, d.Manifest.TreeOfFile = SymbolsFile, TreeOfFile
	treeOf := treeOfBytes(d.TreeOf)
	d.Manifest.SymbolsSHA256 = sha256Hex(d.Symbols)
	d.Manifest.TreeOfSHA256 = sha256Hex(treeOf)
	manifest, err := d.Manifest.MarshalJSON()
	if err != nil {
		return err
	}
	manifest = append(manifest, '\n')

	dir = filepath.Clean(dir)
	exists, err := checkTarget(dir, force)
	if err != nil {
		return err
	}
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	undo, keep, err := fsutil.MkdirAll(parent)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	tmp, done, err := fsutil.MkdirTemp(dir)
	if err != nil {
		undo()
		return fmt.Errorf("dataset: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(tmp)
			undo()
		} else {
			keep()
		}
		done()
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{SymbolsFile, d.Symbols}, {TreeOfFile, treeOf}, {ManifestFile, manifest}} {
		if err := writeSynced(filepath.Join(tmp, f.name), f.data); err != nil {
			return err
		}
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if exists {
		old := filepath.Join(parent, "."+base+".old-"+randomSuffix())
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("dataset: moving the old data set aside: %w", err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			if rerr := os.Rename(old, dir); rerr != nil {
				return fmt.Errorf("dataset: %v; and restoring the old data set from %s failed: %v", err, old, rerr)
			}
			return fmt.Errorf("dataset: %w", err)
		}
		committed = true
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("dataset: written, but removing the old data set %s failed: %w", old, err)
		}
	} else {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("dataset: %w", err)
		}
		committed = true
	}
	return syncDir(parent)
}

// checkTarget reports whether dir exists, and an error if it may not be
// written: not a directory, or non-empty without force, or non-empty and
// not a data set.
func checkTarget(dir string, force bool) (bool, error) {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("dataset: %w", err)
	}
	if !info.IsDir() {
		return false, fmt.Errorf("dataset: %s exists and is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("dataset: %w", err)
	}
	if len(entries) == 0 {
		return true, nil
	}
	if !force {
		return false, fmt.Errorf("dataset: %s exists and is not empty (set force to replace an existing data set)", dir)
	}
	if !isDataset(dir) {
		return false, fmt.Errorf("dataset: refusing to replace %s: it is not empty and holds no vomc data set (%s with format %q)", dir, ManifestFile, FormatName)
	}
	return true, nil
}

// isDataset reports whether dir holds a manifest.json of this format.
func isDataset(dir string) bool {
	f, err := os.Open(filepath.Join(dir, ManifestFile))
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return false
		}
		if key == "format" {
			var s string
			return json.Unmarshal(v, &s) == nil && s == FormatName
		}
	}
	return false
}

func randomSuffix() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeSynced writes data to a new file and syncs it to disk.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("dataset: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("dataset: syncing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}

// syncDir syncs a directory so that renames in it are durable
// (fsutil.SyncDir).
func syncDir(dir string) error {
	if err := fsutil.SyncDir(dir); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}

// Read loads and checks the data set in dir: the manifest (see
// ReadManifest), the presence and exact sizes of symbols.bin
// (K·⌊NK/N⌋·N bytes) and tree_of.bin (4·K·⌊NK/N⌋ bytes) — a short file is
// reported with the expected and actual byte counts — their SHA-256
// checksums, every symbol < A (reporting its byte offset, window and
// position) and every tree index.
func Read(dir string) (*Dataset, error) { return readDir(dir, keepTrees) }

// ReadWindows is Read without keeping the trees: every check of Read is
// made (each tree is parsed and checked in turn), but the data set's Trees
// and Manifest.Trees are nil, so it needs the memory of the symbols and
// tree indices only. For commands that use the windows alone (vomc eval).
func ReadWindows(dir string) (*Dataset, error) { return readDir(dir, checkTrees) }

// ReadHeader reads the manifest of the data set in dir without its trees
// (see ReadManifestHeader): a cheap look at its configuration and size
// before deciding to read it.
func ReadHeader(dir string) (*Manifest, error) {
	mf, err := openManifest(dir)
	if err != nil {
		return nil, err
	}
	defer mf.Close()
	return ReadManifestHeader(mf)
}

// MissingError is the error of reading a data set whose directory does
// not exist, is not a directory, or holds no manifest: Why says which. It
// is (errors.Is) fs.ErrNotExist.
type MissingError struct{ Dir, Why string }

func (e *MissingError) Error() string { return fmt.Sprintf("data set %s: %s", e.Dir, e.Why) }

func (e *MissingError) Unwrap() error { return fs.ErrNotExist }

// openManifest opens the manifest of the data set in dir; a missing
// directory or manifest is a *MissingError.
func openManifest(dir string) (*os.File, error) {
	mf, err := os.Open(filepath.Join(dir, ManifestFile))
	if err == nil {
		return mf, nil
	}
	st, serr := os.Stat(dir)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return nil, &MissingError{dir, "no such directory"}
	case serr == nil && !st.IsDir():
		return nil, &MissingError{dir, "not a directory"}
	case errors.Is(err, fs.ErrNotExist):
		return nil, &MissingError{dir, "the directory holds no " + ManifestFile + " (it is not a data set)"}
	}
	return nil, fmt.Errorf("dataset: %w", err)
}

func readDir(dir string, mode treeMode) (*Dataset, error) {
	mf, err := openManifest(dir)
	if err != nil {
		return nil, err
	}
	m, err := readManifest(mf, mode)
	mf.Close()
	if err != nil {
		return nil, err
	}
	W := m.WindowsPerTree
	symbols, err := readExact(filepath.Join(dir, m.SymbolsFile), int64(m.Windows)*int64(m.N),
		fmt.Sprintf("k·⌊nk/n⌋·n = %d·%d·%d", m.K, W, m.N))
	if err != nil {
		return nil, err
	}
	if got := sha256Hex(symbols); got != m.SymbolsSHA256 {
		return nil, fmt.Errorf("dataset: %s is corrupt: SHA-256 %s, manifest says %s", m.SymbolsFile, got, m.SymbolsSHA256)
	}
	raw, err := readExact(filepath.Join(dir, m.TreeOfFile), 4*int64(m.Windows), fmt.Sprintf("4 bytes × %d windows", m.Windows))
	if err != nil {
		return nil, err
	}
	if got := sha256Hex(raw); got != m.TreeOfSHA256 {
		return nil, fmt.Errorf("dataset: %s is corrupt: SHA-256 %s, manifest says %s", m.TreeOfFile, got, m.TreeOfSHA256)
	}
	if err := checkSymbols(symbols, m.Prior.A, m.N); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", m.SymbolsFile, err)
	}
	treeOf := make([]int32, m.Windows)
	for i := range treeOf {
		treeOf[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	if err := checkTreeOf(treeOf, W); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", m.TreeOfFile, err)
	}
	return &Dataset{Manifest: *m, Symbols: symbols, TreeOf: treeOf, Trees: m.Trees}, nil
}

// readExact reads a file that must have exactly want bytes.
func readExact(path string, want int64, how string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("dataset: %s is not a regular file", path)
	}
	if got := info.Size(); got != want {
		what := "truncated"
		if got > want {
			what = "too long"
		}
		return nil, fmt.Errorf("dataset: %s is %s: expected %d bytes (%s), got %d", path, what, want, how, got)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	b := make([]byte, want)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("dataset: reading %s: %w", path, err)
	}
	var extra [1]byte
	if n, _ := f.Read(extra[:]); n != 0 {
		return nil, fmt.Errorf("dataset: %s grew while being read", path)
	}
	return b, nil
}
