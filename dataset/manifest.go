package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/vomc/vomc/source"
)

const (
	// FormatName is the manifest's "format".
	FormatName = "vomc-dataset"
	// FormatVersion is the manifest's "version" written and read by this
	// package.
	FormatVersion = 1
	// ManifestFile is the name of a data set's manifest (JSON).
	ManifestFile = "manifest.json"
	// SymbolsFile is the name of a data set's symbols file: one byte per
	// symbol, windows × N bytes.
	SymbolsFile = "symbols.bin"
	// TreeOfFile is the name of a data set's tree-index file: one int32
	// little-endian per window.
	TreeOfFile = "tree_of.bin"
)

// ToolVersion is recorded in every manifest as the creating tool; a
// command may set it (e.g. to include its own version) before Build.
var ToolVersion = "github.com/vomc/vomc/dataset v1"

// Manifest is the description of a data set, stored as manifest.json:
//
//	{
//	  "format": "vomc-dataset",
//	  "version": 1,
//	  "tool": "github.com/vomc/vomc/dataset v1",
//	  "prior": {"alphabet":3,"depths":[5],"lambda":0.15,"alpha":[0.5],"leaves":"dirichlet"},
//	  "k": 20000,
//	  "nk": 5120,
//	  "n": 512,
//	  "fresh": false,
//	  "seed": 1,
//	  "windows_per_tree": 10,
//	  "windows": 200000,
//	  "symbols_file": "symbols.bin",
//	  "symbols_sha256": "…",
//	  "tree_of_file": "tree_of.bin",
//	  "tree_of_sha256": "…",
//	  "trees": [
//	    {"alphabet":3,"max_depth":5,"leaves":[{"suffix":[0,0],"p":[…]}, …]},
//	    …
//	  ]
//	}
//
// The trees are written one per line, in the format of source.Tree's JSON
// (suffixes in time order); floats round-trip exactly.
type Manifest struct {
	// Format is FormatName.
	Format string `json:"format"`
	// Version is FormatVersion.
	Version int `json:"version"`
	// Tool is the ToolVersion that created the data set.
	Tool string `json:"tool"`
	// Prior is π_CTW(D, λ, α) with the leaf generator (Config.Prior).
	Prior source.Prior `json:"prior"`
	// K is the number of trees.
	K int `json:"k"`
	// NK is the sequence length per tree N_K.
	NK int `json:"nk"`
	// N is the window length.
	N int `json:"n"`
	// Fresh says whether each window is an independent sequence.
	Fresh bool `json:"fresh"`
	// Seed is the seed of all random choices.
	Seed uint64 `json:"seed"`
	// WindowsPerTree is ⌊NK/N⌋.
	WindowsPerTree int `json:"windows_per_tree"`
	// Windows is K·⌊NK/N⌋.
	Windows int `json:"windows"`
	// SymbolsFile is the symbols file's name, always SymbolsFile.
	SymbolsFile string `json:"symbols_file"`
	// SymbolsSHA256 is the lower-case hex SHA-256 of the symbols file.
	SymbolsSHA256 string `json:"symbols_sha256"`
	// TreeOfFile is the tree-index file's name, always TreeOfFile.
	TreeOfFile string `json:"tree_of_file"`
	// TreeOfSHA256 is the lower-case hex SHA-256 of the tree-index file.
	TreeOfSHA256 string `json:"tree_of_sha256"`
	// Trees are the K sources.
	Trees []*source.Tree `json:"trees"`
}

// Config returns the configuration recorded in the manifest.
func (m Manifest) Config() Config {
	return Config{Prior: m.Prior, K: m.K, NK: m.NK, N: m.N, Fresh: m.Fresh, Seed: m.Seed}
}

func newManifest(cfg Config, d *Dataset) Manifest {
	return Manifest{
		Format:         FormatName,
		Version:        FormatVersion,
		Tool:           ToolVersion,
		Prior:          cfg.Prior,
		K:              cfg.K,
		NK:             cfg.NK,
		N:              cfg.N,
		Fresh:          cfg.Fresh,
		Seed:           cfg.Seed,
		WindowsPerTree: cfg.WindowsPerTree(),
		Windows:        len(d.TreeOf),
		SymbolsFile:    SymbolsFile,
		SymbolsSHA256:  sha256Hex(d.Symbols),
		TreeOfFile:     TreeOfFile,
		TreeOfSHA256:   sha256Hex(treeOfBytes(d.TreeOf)),
		Trees:          d.Trees,
	}
}

// manifestHeader is Manifest without the trees, in the same field order.
type manifestHeader struct {
	Format         string       `json:"format"`
	Version        int          `json:"version"`
	Tool           string       `json:"tool"`
	Prior          source.Prior `json:"prior"`
	K              int          `json:"k"`
	NK             int          `json:"nk"`
	N              int          `json:"n"`
	Fresh          bool         `json:"fresh"`
	Seed           uint64       `json:"seed"`
	WindowsPerTree int          `json:"windows_per_tree"`
	Windows        int          `json:"windows"`
	SymbolsFile    string       `json:"symbols_file"`
	SymbolsSHA256  string       `json:"symbols_sha256"`
	TreeOfFile     string       `json:"tree_of_file"`
	TreeOfSHA256   string       `json:"tree_of_sha256"`
}

// manifestFields are the fields every manifest must have.
var manifestFields = []string{"format", "version", "tool", "prior", "k", "nk", "n", "fresh", "seed",
	"windows_per_tree", "windows", "symbols_file", "symbols_sha256", "tree_of_file", "tree_of_sha256", "trees"}

// MarshalJSON writes the manifest with one field per line and one tree per
// line (as Write stores it; note that json.Marshal compacts the output of a
// MarshalJSON method onto one line).
func (m Manifest) MarshalJSON() ([]byte, error) {
	h := manifestHeader{m.Format, m.Version, m.Tool, m.Prior, m.K, m.NK, m.N, m.Fresh, m.Seed,
		m.WindowsPerTree, m.Windows, m.SymbolsFile, m.SymbolsSHA256, m.TreeOfFile, m.TreeOfSHA256}
	head, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(head[:len(head)-2]) // drop "\n}"
	b.WriteString(",\n  \"trees\": [")
	for i, t := range m.Trees {
		js, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("dataset: manifest tree %d: %w", i, err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		b.Write(js)
	}
	b.WriteString("\n  ]\n}")
	return b.Bytes(), nil
}

// UnmarshalJSON reads a manifest strictly (see ReadManifest).
func (m *Manifest) UnmarshalJSON(data []byte) error {
	u, err := ReadManifest(bytes.NewReader(data))
	if err != nil {
		return err
	}
	*m = *u
	return nil
}

// ReadManifest decodes and checks a manifest: unknown or repeated fields, a
// wrong format name or version, invalid parameters, inconsistent window
// counts, unexpected file names, malformed checksums and invalid trees (or
// trees that the prior cannot produce) are errors that name the field (and,
// for trees, the index and the offending suffix). It does not look at the
// data files; Read does. The manifest is decoded as a stream, one tree at
// a time, so its memory is that of the parsed trees, not of the text.
func ReadManifest(r io.Reader) (*Manifest, error) {
	return readManifest(r, keepTrees)
}

// ReadManifestHeader is ReadManifest without the trees: it checks every
// other field and returns a manifest whose Trees are nil. When the trees
// come last (as Write puts them) it stops reading there, so it is cheap
// even for manifests of many trees; the trees are not checked.
func ReadManifestHeader(r io.Reader) (*Manifest, error) {
	return readManifest(r, skipTrees)
}

// treeMode says what readManifest does with the trees.
type treeMode int

const (
	keepTrees  treeMode = iota // parse, check and keep them
	checkTrees                 // parse and check them one at a time, keep none
	skipTrees                  // neither parse nor keep them
)

func readManifest(r io.Reader, mode treeMode) (*Manifest, error) {
	md := &manifestDecoder{dec: json.NewDecoder(r), mode: mode, seen: map[string]bool{}}
	md.dec.DisallowUnknownFields()
	if err := md.decodeObject(); err != nil {
		return nil, err
	}
	for _, f := range manifestFields {
		if !md.seen[f] {
			return nil, manifestError("missing field %q", f)
		}
	}
	h := md.h
	m := &Manifest{h.Format, h.Version, h.Tool, h.Prior, h.K, h.NK, h.N, h.Fresh, h.Seed,
		h.WindowsPerTree, h.Windows, h.SymbolsFile, h.SymbolsSHA256, h.TreeOfFile, h.TreeOfSHA256, nil}
	if err := m.checkHeader(); err != nil {
		return nil, err
	}
	if md.done {
		return m, nil
	}
	if err := md.finishTrees(m); err != nil {
		return nil, err
	}
	if mode == keepTrees {
		m.Trees = md.trees
	}
	return m, nil
}

// manifestError is an error about the manifest:
// "dataset: manifest.json: " followed by the formatted message.
func manifestError(format string, args ...any) error {
	return fmt.Errorf("dataset: %s: %s", ManifestFile, fmt.Sprintf(format, args...))
}

// fieldError is a manifestError about one field: "field "name": …".
func fieldError(field, format string, args ...any) error {
	return manifestError("field %q: %s", field, fmt.Sprintf(format, args...))
}

// manifestDecoder is the state of readManifest while it streams through
// the manifest object one field (and one tree) at a time.
type manifestDecoder struct {
	dec  *json.Decoder
	mode treeMode
	h    manifestHeader
	seen map[string]bool // the fields read so far

	trees    []*source.Tree // kept (or held until the prior is known)
	nTrees   int            // the trees read
	treesNil bool           // "trees" is null
	checked  bool           // the trees were checked against the prior as read
	done     bool           // stopped at the trees (skipTrees)
}

// decodeObject reads the manifest object: '{', each field once (every
// field but "trees" decoded into md.h), '}' and the end of the input. In
// skipTrees mode it stops at "trees" when every other field has been
// read, setting md.done.
func (md *manifestDecoder) decodeObject() error {
	tok, err := md.dec.Token()
	if err != nil {
		return manifestError("%v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return manifestError("not a JSON object")
	}
	h := &md.h
	fields := map[string]any{"format": &h.Format, "version": &h.Version, "tool": &h.Tool, "prior": &h.Prior,
		"k": &h.K, "nk": &h.NK, "n": &h.N, "fresh": &h.Fresh, "seed": &h.Seed,
		"windows_per_tree": &h.WindowsPerTree, "windows": &h.Windows, "symbols_file": &h.SymbolsFile,
		"symbols_sha256": &h.SymbolsSHA256, "tree_of_file": &h.TreeOfFile, "tree_of_sha256": &h.TreeOfSHA256}
	for md.dec.More() {
		tok, err := md.dec.Token()
		if err != nil {
			return manifestError("%v", err)
		}
		key, _ := tok.(string)
		if md.seen[key] {
			return manifestError("field %q appears twice", key)
		}
		md.seen[key] = true
		if key != "trees" {
			p, ok := fields[key]
			if !ok {
				return manifestError("unknown field %q", key)
			}
			if err := md.dec.Decode(p); err != nil {
				return fieldError(key, "%s", strings.TrimPrefix(err.Error(), "source: "))
			}
			continue
		}
		if md.mode == skipTrees && len(md.seen) == len(manifestFields) {
			md.done = true
			return nil
		}
		if err := md.decodeTrees(); err != nil {
			return err
		}
	}
	if _, err := md.dec.Token(); err != nil { // '}'
		return manifestError("%v", err)
	}
	if _, err := md.dec.Token(); err != io.EOF {
		return manifestError("unexpected data after the manifest object")
	}
	return nil
}

// decodeTrees reads the value of "trees": null (md.treesNil) or an array
// of at most k trees. Unless skipping them, each tree is parsed and, when
// the prior has already been read, checked against it at once; trees are
// kept when the mode keeps them or when they still await the prior.
func (md *manifestDecoder) decodeTrees() error {
	tok, err := md.dec.Token()
	if err != nil {
		return fieldError("trees", "%v", err)
	}
	if tok == nil {
		md.treesNil = true
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fieldError("trees", "not an array")
	}
	md.checked = md.seen["prior"]
	for md.dec.More() {
		var raw json.RawMessage
		if err := md.dec.Decode(&raw); err != nil {
			return manifestError("trees[%d]: %v", md.nTrees, err)
		}
		if md.seen["k"] && md.h.K >= 0 && md.nTrees >= md.h.K {
			return fieldError("trees", "more than k = %d trees", md.h.K)
		}
		if md.mode != skipTrees {
			t, err := source.ReadTreeJSON(bytes.NewReader(raw))
			if err == nil && md.seen["prior"] {
				err = checkTree(t, md.h.Prior)
			}
			if err != nil {
				return manifestError("trees[%d]: %s", md.nTrees, strings.TrimPrefix(err.Error(), "source: "))
			}
			if md.mode == keepTrees || !md.seen["prior"] {
				md.trees = append(md.trees, t)
			}
		}
		md.nTrees++
	}
	if _, err := md.dec.Token(); err != nil { // ']'
		return fieldError("trees", "%v", err)
	}
	return nil
}

// finishTrees checks the trees read against the manifest m once every
// field is known: "trees" present, exactly k of them, and those read
// before the prior now checked against it.
func (md *manifestDecoder) finishTrees(m *Manifest) error {
	if md.treesNil {
		return fieldError("trees", "missing")
	}
	if md.nTrees != m.K {
		return fieldError("trees", "%d trees, want k = %d", md.nTrees, m.K)
	}
	if md.checked {
		return nil
	}
	for i, t := range md.trees {
		if err := checkTree(t, m.Prior); err != nil {
			return manifestError("trees[%d]: %s", i, strings.TrimPrefix(err.Error(), "source: "))
		}
	}
	return nil
}

// checkHeader checks every field of m but the trees: the format name and
// version, a valid prior and configuration, window counts ⌊nk/n⌋ per tree
// and k·⌊nk/n⌋ in all, the fixed data file names and their SHA-256s as 64
// lower-case hex digits.
func (m *Manifest) checkHeader() error {
	if m.Format != FormatName {
		return fieldError("format", "%q, want %q", m.Format, FormatName)
	}
	if m.Version != FormatVersion {
		return fieldError("version", "%d is not supported (this reader knows version %d)", m.Version, FormatVersion)
	}
	if err := m.Prior.Validate(); err != nil {
		return fieldError("prior", "%s", strings.TrimPrefix(err.Error(), "source: "))
	}
	if m.K < 1 || m.K > MaxTrees {
		return fieldError("k", "%d trees, want 1..%d", m.K, MaxTrees)
	}
	if m.N < 1 {
		return fieldError("n", "window length %d, want ≥ 1", m.N)
	}
	if m.NK < m.N {
		return fieldError("nk", "sequence length %d is shorter than the window n = %d", m.NK, m.N)
	}
	if err := m.Config().Validate(); err != nil {
		return fieldError("k", "%s", strings.TrimPrefix(err.Error(), "dataset: "))
	}
	W := m.Config().WindowsPerTree()
	if m.WindowsPerTree != W {
		return fieldError("windows_per_tree", "%d, want ⌊nk/n⌋ = %d", m.WindowsPerTree, W)
	}
	if m.Windows != m.K*W {
		return fieldError("windows", "%d, want k·⌊nk/n⌋ = %d", m.Windows, m.K*W)
	}
	if m.SymbolsFile != SymbolsFile {
		return fieldError("symbols_file", "%q, want %q", m.SymbolsFile, SymbolsFile)
	}
	if m.TreeOfFile != TreeOfFile {
		return fieldError("tree_of_file", "%q, want %q", m.TreeOfFile, TreeOfFile)
	}
	if !isSHA256Hex(m.SymbolsSHA256) {
		return fieldError("symbols_sha256", "%q is not 64 lower-case hex digits", m.SymbolsSHA256)
	}
	if !isSHA256Hex(m.TreeOfSHA256) {
		return fieldError("tree_of_sha256", "%q is not 64 lower-case hex digits", m.TreeOfSHA256)
	}
	return nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
