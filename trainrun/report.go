package trainrun

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Report writes what 'vomc train' prints at the end of the run in dir:
// the steps and epochs trained, why it ended, how long it took, the best
// validation loss, and the files written.
func (s *Summary) Report(w io.Writer, dir string) error {
	epochs := strconv.FormatFloat(math.Round(100*s.Epochs())/100, 'f', -1, 64) // as the bar shows them
	line := fmt.Sprintf("trained %d steps, %s epochs (%s) in %s", s.Step, epochs, EndReason(s.Stopped, s.Train, s.Step), s.Elapsed.Round(time.Second))
	if s.Engine == EngineTorch {
		line += " with the torch engine"
	}
	if s.HasValidation() {
		line += fmt.Sprintf("; best validation loss %.4f nats/symbol (%.4f bits), model has the best parameters", s.BestVal, s.BestVal/math.Ln2)
	}
	files := []string{ModelFile, ConfigFile, TrainConfigFile, LogFile, CheckpointFile, CurvePNG, CurveSVG}
	_, err := fmt.Fprintf(w, "%s\nwrote %s/{%s}\n", line, dir, strings.Join(files, ","))
	return err
}
