package construct

import "github.com/vomc/vomc/internal/opterr"

// OptionError is an error in the options of Compare. Its message names the
// CompareOptions fields Options (Flag("--") names them as flags).
type OptionError = opterr.Error

// optErr is the OptionError of format naming the fields in options
// (separated by spaces), with args.
func optErr(format, options string, args ...any) *OptionError {
	return opterr.New("construct", format, options, args...)
}
