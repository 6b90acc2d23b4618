package explore

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/experiment"
)

// Source names what to explore, as 'vomc explore' is given it: model
// directories, comma-separated (with Demo: names of shipped models, empty
// for the default ones), the data set whose windows are shown (optional
// with Demo), and a data set whose first windows (at most MaxTune) tune
// Kneser–Ney's discount (empty: Options.Tune's default).
type Source struct {
	Models, Data, Train string
	Demo                bool
}

// MaxTune is the most windows of Source.Train that tune Kneser–Ney.
const MaxTune = 2000

// Open returns o with the models, the data set and the tuning windows that
// src names (Models, Data, DataName, Tune, TuneNote); o's other fields are
// kept. With src.Demo it logs the demo sets (DemoSets) on o.Events.
func Open(src Source, o Options) (Options, error) {
	var names []string
	for _, m := range strings.Split(src.Models, ",") {
		if m = strings.TrimSpace(m); m != "" {
			names = append(names, m)
		}
	}
	var ds *dataset.Dataset
	if src.Data != "" {
		var err error
		if ds, err = dataset.Read(src.Data); err != nil {
			return o, err
		}
	}
	if src.Demo {
		d, err := Demo(names, ds, src.Data)
		if err != nil {
			if shipped := DemoNames(); shipped != "" { // none in a -tags nodemo build
				return o, fmt.Errorf("%w\nshipped models:\n%s", err, shipped)
			}
			return o, err
		}
		o.Models, o.Data, o.DataName = d.Models, d.Data, d.DataName
		events.Or(o.Events).Log("shipped models that open together (--demo --model SET): " + strings.Join(DemoSets(), " | "))
	} else {
		if len(names) == 0 || ds == nil {
			return o, errors.New("explore: a model directory and a data set are needed (or the demo)")
		}
		for _, n := range names {
			m, err := OpenDir(n)
			if err != nil {
				return o, err
			}
			o.Models = append(o.Models, m)
		}
		o.Data, o.DataName = ds, src.Data
	}
	if src.Train == "" {
		return o, nil
	}
	if len(o.Methods) > 0 {
		if err := experiment.CheckTuning(o.Methods, src.Train); err != nil {
			return o, err
		}
	}
	tr, err := dataset.ReadWindows(src.Train)
	if err != nil {
		return o, err
	}
	n := min(MaxTune, tr.Windows())
	for w := range n {
		o.Tune = append(o.Tune, tr.Window(w))
	}
	o.TuneNote = fmt.Sprintf("%d windows of %s", n, src.Train)
	return o, nil
}

// PageURL is the page's address on l, showing window and, when pos ≥ 0,
// the query position pos.
func (l *Listener) PageURL(window, pos int) string {
	url := fmt.Sprintf("%s#w=%d", l.URL, window)
	if pos >= 0 {
		url += fmt.Sprintf("&t=%d", pos)
	}
	return url
}

// ModelNames are the names of the server's models, in order.
func (s *Server) ModelNames() []string {
	var names []string
	for _, m := range s.Meta().Models {
		names = append(names, m.Name)
	}
	return names
}

// Serve starts labelling the first model's heads and answers the page's
// requests on l (Handler with l.Allowed) until serving fails.
func (s *Server) Serve(l *Listener) error {
	s.Labels(0, FinalStep, false)
	err := (&http.Server{Handler: s.Handler(l.Allowed...)}).Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
