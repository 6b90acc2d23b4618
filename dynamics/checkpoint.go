package dynamics

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/internal/fsutil"
)

// CheckpointFile is the name that 'vomc dynamics' and reproduce's dynamics
// stages give the checkpoint (Options.Checkpoint) in their output
// directory.
const CheckpointFile = "dynamics.checkpoint.jsonl"

// checkpointFormat names the checkpoint file's format (its header line).
const checkpointFormat = "vomc-dynamics-checkpoint/1"

// checkpoint keeps the points measured so far in a file of JSON lines
// (Options.Checkpoint), so that an interrupted measurement resumes where it
// stopped: a header line with a key that identifies the measurement
// (measurementKey: the identity, the probe windows, the references and
// their distributions, the head-label settings), then one line
// per measured snapshot with its step, the SHA-256 of its file and the
// point. A point is reused only under the same key and for the same
// snapshot file, and, being read back from JSON (which round-trips a
// float64 exactly), equals the point measured afresh. A file with another
// key is started afresh; a torn last line (the process killed while
// writing it) is dropped. Every line is synced before the next snapshot.
type checkpoint struct {
	f    *os.File
	done map[int]checkpointLine
}

type checkpointHeader struct {
	Format string `json:"format"`
	Key    string `json:"key"`
}

type checkpointLine struct {
	Step   int    `json:"step"`
	SHA256 string `json:"sha256"`
	Point  Point  `json:"point"`
}

// measurementKey identifies a measurement whose points may be reused:
// the caller's identity (Options.Identity: the build and backend), the
// probe windows, the references' names and the bits of every distribution
// they give on the probe windows (so a reference tuned or trained
// differently under the same name is another measurement), the excess
// reference and the head-label settings.
func measurementKey(opts Options, refs []refDists, hw, maxK int) string {
	h := sha256.New()
	fmt.Fprintf(h, "identity %q\nwindows %d×%d\n", opts.Identity, len(opts.Windows), len(opts.Windows[0]))
	for _, x := range opts.Windows {
		h.Write(x)
	}
	var b [8]byte
	for r, ref := range opts.References {
		fmt.Fprintf(h, "\nreference %q\n", ref.Name)
		for _, d := range refs[r] {
			for _, v := range d {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
				h.Write(b[:])
			}
		}
	}
	fmt.Fprintf(h, "\nexcess %q\nheads %d %d %d %+v\n", opts.Excess, opts.HeadWindows, hw, maxK, opts.Null)
	return hex.EncodeToString(h.Sum(nil))
}

// openCheckpoint opens (or creates, with its directory) the checkpoint
// file at path for the measurement key, reading the points it holds. It
// locks the file (fsutil.TryLock) for as long as it is open: a second
// measurement writing to the same file is refused.
func openCheckpoint(path, key string) (*checkpoint, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("dynamics: checkpoint: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("dynamics: checkpoint: %w", err)
	}
	if ok, err := fsutil.TryLock(f); !ok || err != nil {
		f.Close()
		if err == nil {
			err = errors.New("in use by another measurement (another process writing the same output)")
		}
		return nil, fmt.Errorf("dynamics: checkpoint %s: %w", path, err)
	}
	p := &checkpoint{f: f, done: map[int]checkpointLine{}}
	keep, err := p.read(key)
	if err == nil {
		err = p.truncate(keep, key)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("dynamics: checkpoint %s: %w", path, err)
	}
	return p, nil
}

// read loads the points of a file with the given key and returns the
// length of its valid prefix (0: none, the file is started afresh).
func (p *checkpoint) read(key string) (int64, error) {
	b, err := io.ReadAll(p.f)
	if err != nil {
		return 0, err
	}
	line, rest, ok := bytes.Cut(b, []byte{'\n'})
	var h checkpointHeader
	if !ok || json.Unmarshal(line, &h) != nil || h.Format != checkpointFormat || h.Key != key {
		return 0, nil
	}
	keep := int64(len(line) + 1)
	for len(rest) > 0 {
		line, next, ok := bytes.Cut(rest, []byte{'\n'})
		var l checkpointLine
		if !ok || json.Unmarshal(line, &l) != nil || l.Point.Step != l.Step {
			break // torn (or foreign) tail: dropped
		}
		p.done[l.Step] = l
		keep += int64(len(line) + 1)
		rest = next
	}
	return keep, nil
}

// truncate cuts the file to its first keep bytes (0: writes a new
// header) and positions it for appending.
func (p *checkpoint) truncate(keep int64, key string) error {
	if err := p.f.Truncate(keep); err != nil {
		return err
	}
	if _, err := p.f.Seek(keep, io.SeekStart); err != nil {
		return err
	}
	if keep == 0 {
		return p.append(checkpointHeader{Format: checkpointFormat, Key: key})
	}
	return nil
}

// append writes v as one line and syncs the file.
func (p *checkpoint) append(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := p.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return p.f.Sync()
}

// lookup returns the point kept for snapshot s, whose file has digest sum.
func (p *checkpoint) lookup(s Snapshot, sum string) (Point, bool) {
	l, ok := p.done[s.Step]
	return l.Point, ok && l.SHA256 == sum
}

// add keeps the point measured for snapshot s (file digest sum).
func (p *checkpoint) add(s Snapshot, sum string, pt Point) error {
	l := checkpointLine{Step: s.Step, SHA256: sum, Point: pt}
	if err := p.append(l); err != nil {
		return fmt.Errorf("dynamics: checkpoint: %w", err)
	}
	p.done[s.Step] = l
	return nil
}

func (p *checkpoint) close() error { return p.f.Close() }

// RemoveCheckpoint removes the checkpoint file at path (Options.Checkpoint),
// once the result it served is written; a missing file is no error.
func RemoveCheckpoint(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
