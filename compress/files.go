package compress

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/ppm"
)

// ModelSpec names a model and its parameters as a command line gives them.
type ModelSpec struct {
	Model    string // mix, ppm or ctw
	Order    int    // PPM order / CTW depth in bytes; -1: the model's default
	MemMB    int    // memory budget in MiB
	Method   string // PPM escape method: C or D
	AlphaInv int    // CTW: 1/α of the KT estimator
}

// AddFlags defines the model flags of 'vomc compress' and 'vomc bench
// compress' on fs into s.
func (s *ModelSpec) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&s.Model, "model", "mix", "model: mix (context mixing: orders 1, 2, 4, 6, word, sparse, record and match models; best), ppm (byte PPM with exclusion) or ctw (binary-decomposition CTW)")
	fs.IntVar(&s.Order, "order", -1, "PPM order / CTW depth in bytes (default: 5 for ppm, 6 for ctw)")
	fs.IntVar(&s.MemMB, "mem", 256, "model memory budget in MiB (ppm restarts when full; ctw's and mix's tables never exceed it)")
	fs.StringVar(&s.Method, "method", "D", "ppm escape method: C or D")
	fs.IntVar(&s.AlphaInv, "alpha-inv", 8, "ctw: 1/α of the KT estimator (2 = classic KT)")
}

// Build returns the model of s.Model (see BuildName).
func (s ModelSpec) Build() (Model, error) { return s.BuildName(s.Model) }

// BuildName returns the model called name (mix, ppm or ctw) with the
// parameters of s; an order given to mix, a negative order, an unknown
// escape method or model name are errors.
func (s ModelSpec) BuildName(name string) (Model, error) {
	if s.Order < -1 {
		return nil, fmt.Errorf("order %d is negative", s.Order)
	}
	switch name {
	case "mix":
		if s.Order != -1 {
			return nil, fmt.Errorf("an order does not apply to the mix model (its context orders are fixed); use ppm or ctw")
		}
		return Mix(MixConfig{MemMB: s.MemMB})
	case "ppm":
		c := DefaultPPM()
		if s.Order >= 0 {
			c.Order = s.Order
		}
		c.MemMB = s.MemMB
		switch strings.ToUpper(s.Method) {
		case "C":
			c.Method = ppm.MethodC
		case "D":
			c.Method = ppm.MethodD
		default:
			return nil, fmt.Errorf("the escape method must be C or D, not %q", s.Method)
		}
		return PPM(c)
	case "ctw":
		c := DefaultCTW()
		if s.Order >= 0 {
			c.Depth = s.Order
		}
		c.MemMB, c.AlphaInv = s.MemMB, s.AlphaInv
		return CTW(c)
	}
	return nil, fmt.Errorf("the model must be mix, ppm or ctw, not %q", name)
}

// BuildModels builds the models of a comma-separated list of names with
// the parameters of s (BuildName); an empty list is s.Model alone.
func (s ModelSpec) BuildModels(list string) ([]Model, error) {
	names := []string{s.Model}
	if list != "" {
		names = strings.Split(list, ",")
	}
	var ms []Model
	for _, n := range names {
		m, err := s.BuildName(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// CompressFile compresses the file in into out with m (Encode), writing
// out atomically; an existing out is an error unless force. Removed stale
// temporaries next to out are warnings of ev (nil: not reported).
func CompressFile(in, out string, m Model, force bool, ev events.Sink) (Stats, error) {
	f, err := fsutil.OpenInput(in)
	if err != nil {
		return Stats{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Stats{}, err
	}
	if err := fsutil.CheckOutputs(events.WarnWriter(ev), force, out); err != nil {
		return Stats{}, err
	}
	var st Stats
	err = fsutil.WriteFile(out, force, func(w io.Writer) error {
		var err error
		st, err = Encode(w, f, info.Size(), m)
		return err
	})
	return st, err
}

// DecompressFile restores the file in, written by CompressFile, into out
// (DecodeLimit with maxMemMB), atomically: on any error out is not
// created. An existing out is an error unless force; ev as in
// CompressFile.
func DecompressFile(in, out string, maxMemMB int, force bool, ev events.Sink) (Header, error) {
	f, err := fsutil.OpenInput(in)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	if err := fsutil.CheckOutputs(events.WarnWriter(ev), force, out); err != nil {
		return Header{}, err
	}
	var h Header
	err = fsutil.WriteFile(out, force, func(w io.Writer) error {
		var err error
		h, err = DecodeLimit(w, f, maxMemMB)
		return err
	})
	if err != nil {
		return h, fmt.Errorf("%s: %w", in, err)
	}
	return h, nil
}
