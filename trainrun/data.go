package trainrun

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// ErrWindowLength is wrapped by the error of Data when the window length
// N asked for does not fit the data set's.
var ErrWindowLength = errors.New("window length")

// windowLengthError is an error wrapping ErrWindowLength with its own text.
type windowLengthError struct{ msg string }

func (e windowLengthError) Error() string { return e.msg }
func (e windowLengthError) Unwrap() error { return ErrWindowLength }

// cutWindows cuts every window of w into per windows of n symbols.
type cutWindows struct {
	w      transformer.Windows
	n, per int
}

func (c cutWindows) Windows() int { return c.w.Windows() * c.per }

func (c cutWindows) Window(i int) []byte {
	off := (i % c.per) * c.n
	return c.w.Window(i / c.per)[off : off+c.n : off+c.n]
}

// DataSpec is a run's data, the typed form of the checkpoint metadata
// that Data reads (keys data, val, val_frac, N, split_seed, max_windows):
// every engine and every caller (vomc train, vomc synth, reproduce's
// training stages) describes its data this way, so their checkpoints
// carry the same metadata.
type DataSpec struct {
	// Data is the training data set's directory, Val the validation
	// set's ("": a fraction ValFrac of the training trees, split with
	// SplitSeed by transformer.SplitByTree).
	Data, Val string
	ValFrac   float64
	SplitSeed uint64
	// N cuts every window into windows of N symbols (0: as they are).
	N int
	// MaxWindows keeps the first MaxWindows training windows (0: all).
	MaxWindows int
}

// Meta is the checkpoint metadata of d, with the paths made absolute.
func (d DataSpec) Meta() (map[string]string, error) {
	m := map[string]string{"val_frac": strconv.FormatFloat(d.ValFrac, 'g', -1, 64), "N": strconv.Itoa(d.N),
		"split_seed": strconv.FormatUint(d.SplitSeed, 10), "val": ""}
	for key, p := range map[string]string{"data": d.Data, "val": d.Val} {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		m[key] = abs
	}
	if d.MaxWindows > 0 {
		m["max_windows"] = strconv.Itoa(d.MaxWindows)
	}
	return m, nil
}

// Load is Data of d's metadata: the windows, the alphabet size and the
// metadata (with the data sets' checksums) to store in the checkpoint.
func (d DataSpec) Load() (train, val transformer.Windows, A int, meta map[string]string, err error) {
	if meta, err = d.Meta(); err != nil {
		return nil, nil, 0, nil, err
	}
	train, val, A, err = Data(meta)
	return train, val, A, meta, err
}

// Data loads the training (and validation) windows described by meta
// (keys data, val, val_frac, N, split_seed, and optionally max_windows):
// the data set in data, the validation set in val or else a fraction
// val_frac of the training trees (transformer.SplitByTree with
// split_seed), every window cut into windows of N symbols (0: as they
// are), the training windows limited to the first max_windows (0: all).
// It records the data sets' checksums in meta on the first call and checks
// them on later ones, and returns the alphabet size.
func Data(meta map[string]string) (train, val transformer.Windows, A int, err error) {
	ds, err := dataset.Read(meta["data"])
	if err != nil {
		return nil, nil, 0, missingData(err, "data")
	}
	if err := checkSum(meta, "data_checksum", meta["data"], ds.Checksum()); err != nil {
		return nil, nil, 0, err
	}
	A = ds.Config().Prior.A
	frac, err := strconv.ParseFloat(meta["val_frac"], 64)
	if err != nil || !(frac >= 0 && frac < 1) {
		return nil, nil, 0, fmt.Errorf("checkpoint metadata: val_frac %q is not a number in [0, 1)", meta["val_frac"])
	}
	seed, err := strconv.ParseUint(meta["split_seed"], 10, 64)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("checkpoint metadata: split_seed %q", meta["split_seed"])
	}
	n, err := strconv.Atoi(meta["N"])
	if err != nil || n < 0 {
		return nil, nil, 0, fmt.Errorf("checkpoint metadata: N %q is not a window length ≥ 0", meta["N"])
	}
	cut := func(w transformer.Windows, N int) (transformer.Windows, error) {
		if n == 0 || n == N {
			return w, nil
		}
		if n < 2 || n > N {
			return nil, windowLengthError{fmt.Sprintf("window length N = %d outside 2..%d (the data set's window length)", n, N)}
		}
		return cutWindows{w, n, N / n}, nil
	}
	if meta["val"] != "" {
		vds, err := dataset.Read(meta["val"])
		if err != nil {
			return nil, nil, 0, missingData(err, "val")
		}
		if err := checkSum(meta, "val_checksum", meta["val"], vds.Checksum()); err != nil {
			return nil, nil, 0, err
		}
		if vds.Config().Prior.A != A || vds.Config().N != ds.Config().N {
			return nil, nil, 0, fmt.Errorf("validation set %s has A=%d, N=%d; the training set A=%d, N=%d",
				meta["val"], vds.Config().Prior.A, vds.Config().N, A, ds.Config().N)
		}
		train, val = transformer.Windows(ds), transformer.Windows(vds)
	} else if frac > 0 {
		tw, vw, err := transformer.SplitByTree(ds, frac, seed)
		if err != nil {
			return nil, nil, 0, err
		}
		if tw.Windows() == 0 {
			return nil, nil, 0, fmt.Errorf("a validation fraction of %g leaves no training trees", frac)
		}
		train, val = tw, vw
	} else {
		train = ds
	}
	if train, err = cut(train, ds.Config().N); err != nil {
		return nil, nil, 0, err
	}
	if val != nil {
		if val, err = cut(val, ds.Config().N); err != nil {
			return nil, nil, 0, err
		}
	}
	if _, ok := meta["max_windows"]; ok {
		if train, err = firstWindows(train, meta["max_windows"]); err != nil {
			return nil, nil, 0, err
		}
	}
	return train, val, A, nil
}

func checkSum(meta map[string]string, key, dir, sum string) error {
	if old, ok := meta[key]; ok && old != sum {
		return fmt.Errorf("data set %s has checksum %s…, the run was trained on %s…", dir, sum[:12], old[:min(12, len(old))])
	}
	meta[key] = sum
	return nil
}

// firstWindows keeps the first n (a decimal string; "" or 0: all) windows
// of w.
func firstWindows(w transformer.Windows, n string) (transformer.Windows, error) {
	k := 0
	if n != "" {
		var err error
		if k, err = strconv.Atoi(n); err != nil || k < 0 {
			return nil, fmt.Errorf("checkpoint metadata: max_windows %q", n)
		}
	}
	if k == 0 || k >= w.Windows() {
		return w, nil
	}
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	return transformer.Subset{W: w, Idx: idx}, nil
}

// DatasetOf returns the data set under windows made by Data (nil if there
// is none).
func DatasetOf(w transformer.Windows) *dataset.Dataset {
	switch v := w.(type) {
	case *dataset.Dataset:
		return v
	case transformer.Subset:
		return DatasetOf(v.W)
	case cutWindows:
		return DatasetOf(v.w)
	}
	return nil
}

// Load reads the checkpoint of the run in dir and its data (Data with the
// checkpoint's metadata; data and val, when not empty, replace the data
// sets' paths, made absolute; the checksums must match). A checkpoint
// without a checksum is refused (transformer.ErrNoChecksum) unless
// allowUnverified.
func Load(dir, data, val string, allowUnverified bool) (c *transformer.Checkpoint, tw, vw transformer.Windows, err error) {
	ckptPath := filepath.Join(dir, CheckpointFile)
	if c, err = transformer.LoadCheckpointWith(ckptPath, allowUnverified); err != nil {
		return nil, nil, nil, err
	}
	if c.Meta == nil {
		c.Meta = map[string]string{}
	}
	for key, p := range map[string]string{"data": data, "val": val} {
		if p != "" {
			if c.Meta[key], err = filepath.Abs(p); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if tw, vw, _, err = Data(c.Meta); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", ckptPath, err)
	}
	return c, tw, vw, nil
}

// CheckMemoryOn refuses a run on be whose estimated memory (parameters,
// gradients, AdamW moments, best parameters, checkpoint copies,
// activations, be's kernel scratch; see transformer.Config.TrainingBytes)
// exceeds the memory available — the device's when be reports its own (a
// GPU backend), else the host's —, stating the estimate.
func CheckMemoryOn(be backend.Backend, cfg transformer.Config, batch int, train transformer.Windows) error {
	B, T := min(batch, train.Windows()), len(train.Window(0))
	return CheckBackendMemory(be, cfg.TrainingBytes(B, T, transformer.KernelsOf(be)), fmt.Sprintf("training L=%d, E=%d, N=%d (%.4g parameters) with batches of %d windows of %d symbols",
		cfg.Layers, cfg.Embed, cfg.Context, float64(cfg.NumParams()), B, T))
}

// CheckBackendMemory checks need bytes against the memory of be (a
// backend.MemoryReporter: its device's) or the host's (sysmem.Check).
func CheckBackendMemory(be backend.Backend, need float64, what string) error {
	mr, ok := be.(backend.MemoryReporter)
	if !ok {
		return sysmem.Check(need, what)
	}
	avail, err := mr.MemoryAvailable()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return sysmem.CheckAvailable(need, avail, what, be.Name()+" memory")
}

// MemoryBytes is the estimated training memory of cfg on be with batches
// from train (see CheckMemoryOn).
func MemoryBytes(be backend.Backend, cfg transformer.Config, batch int, train transformer.Windows) float64 {
	return cfg.TrainingBytes(min(batch, train.Windows()), len(train.Window(0)), transformer.KernelsOf(be))
}

// MaxDepth is the largest tree depth of the prior of the data set under
// windows made by Data (0 if there is none).
func MaxDepth(w transformer.Windows) int {
	D := 0
	if ds := DatasetOf(w); ds != nil {
		for _, d := range ds.Config().Prior.Depths {
			D = max(D, d)
		}
	}
	return D
}

// missingData is err, naming option when the data set it read does not
// exist: "data set DIR: no such directory (data)", an *OptionError.
func missingData(err error, option string) error {
	if me := (*dataset.MissingError)(nil); errors.As(err, &me) {
		return &OptionError{Msg: strings.ReplaceAll(err.Error(), "%", "%%") + " (%s)", Also: []string{option}, Err: err}
	}
	return err
}
