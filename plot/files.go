package plot

import (
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
)

// LossFiles asks for the loss figure (LossVsPosition) of a saved
// evaluation in one or more files.
type LossFiles struct {
	// Options are the drawing options, completed by Focus (Smooth 0 is
	// DefaultSmooth; the excess panel's range that of FocusExcess).
	Options
	// NoExcess omits the excess panel, which is otherwise drawn when the
	// result has more than one method.
	NoExcess bool
	// Width and Height are the figure size in inches.
	Width, Height float64
	// Force allows replacing existing files.
	Force bool
	// Events receives a "wrote PATH" log line per file written, and the
	// stale temporaries removed next to the outputs as warnings (nil: not
	// reported).
	Events events.Sink
}

// SaveLossFiles checks that every path can be written (nothing is drawn
// otherwise), loads the evaluation JSON in result and draws it to each
// path in the format its extension names (.png, .svg, .pdf).
func SaveLossFiles(result string, paths []string, f LossFiles) error {
	ev := events.Or(f.Events)
	if err := fsutil.CheckOutputs(events.WarnWriter(ev), f.Force, paths...); err != nil {
		return err
	}
	res, err := eval.LoadJSONFile(result)
	if err != nil {
		return err
	}
	opts := f.Options
	opts.Excess = !f.NoExcess && len(res.Methods) > 1
	opts = Focus(res, opts)
	fig, err := LossVsPosition(res, opts)
	if err != nil {
		return err
	}
	for _, path := range paths {
		if !f.Force {
			if err := fsutil.CheckNew(path); err != nil {
				return err
			}
		}
		if err := fig.Save(path, Length(f.Width)*Inch, Length(f.Height)*Inch); err != nil {
			return err
		}
		ev.Log("wrote " + path)
	}
	return nil
}
