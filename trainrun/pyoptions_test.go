// The training options as the PyTorch engine carries them (package python)
// against their declaration (transformer.Options): kept here, above both,
// so that python imports nothing of vomc's (TestLayers).
package trainrun_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/python"
	"github.com/vomc/vomc/transformer"
)

// TestOptionsFile: the package carries the declaration of the training
// options as transformer.OptionsSchema writes it now.
func TestOptionsFile(t *testing.T) {
	got, err := python.Source.ReadFile(python.OptionsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, transformer.OptionsSchema()) {
		t.Fatalf("%s differs from transformer.OptionsSchema(): run 'go generate ./python'", python.OptionsFile)
	}
}

// engineFlags are the flags of the engine's train command that are not
// training options: the data's, the model's, the run's and the engine's.
var engineFlags = []string{"help", "out", "data", "val", "val-frac", "N", "resume", "force", "init", "arch", "layers", "heads",
	"E", "hidden", "ff", "no-ff", "layernorm", "no-layernorm", "act", "pos", "no-summary", "device", "amp", "compile", "no-sdpa",
	"no-tf32", "no-fused", "no-pin", "threads", "quiet"}

// TestPythonOptions: the options the engine accepts — its train config's
// fields, checked by validate_train_config, and the training flags of
// `python -m vomc_torch train` with their defaults — are the declared ones
// (transformer.Options), asked of the package as the binary carries it.
func TestPythonOptions(t *testing.T) {
	py := ""
	// whether torch and numpy are installed, without importing torch (a
	// second of CPU; the program below imports it)
	const probe = "import importlib.util as u, sys; sys.exit(not (u.find_spec('torch') and u.find_spec('numpy')))"
	for _, c := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(c); err == nil && exec.Command(p, "-c", probe).Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		t.Skip("no python3 with torch and numpy: the engine's options are not checked")
	}
	dir, err := python.Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := `import json, sys
sys.path.insert(0, sys.argv[1])
from vomc_torch import options, train
from vomc_torch.__main__ import parser
a = options.accepted(parser())
a["engine_train_fields"] = train.TRAIN_FIELDS
bad = {}
for o in options.OPTIONS:
    if o["train_config"] and o.get("min") is not None:
        c = options.validate_train_config({k: options.DEFAULTS[k] for k in options.TRAIN_FIELDS})
        c[o["key"]] = -1e300
        try:
            options.validate_train_config(c)
        except ValueError as e:
            bad[o["key"]] = str(e)
a["refused"] = bad
print(json.dumps(a))`
	out, err := exec.Command(py, "-c", prog, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", py, err, out)
	}
	var got struct {
		TrainFields       []string          `json:"train_fields"`
		EngineTrainFields []string          `json:"engine_train_fields"`
		Flags             map[string]any    `json:"flags"`
		Refused           map[string]string `json:"refused"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var fields []string
	declared := map[string]bool{}
	for _, o := range transformer.Options {
		if !o.Run {
			fields = append(fields, o.Key)
			if o.Min != nil && !strings.Contains(got.Refused[o.Key], o.Key) {
				t.Errorf("the engine's validate_train_config accepts %s = -1e300 (%q)", o.Key, got.Refused[o.Key])
			}
		}
		flag := o.EngineFlag
		if flag == "" {
			flag = o.Flag
		}
		if flag == "" {
			continue
		}
		declared[flag] = true
		def, ok := got.Flags[flag]
		if !ok {
			t.Errorf("the engine's train command has no --%s (option %s)", flag, o.Key)
		} else if fmt.Sprint(def) != fmt.Sprint(o.Default) {
			t.Errorf("--%s: the engine's default %v, declared %v", flag, def, o.Default)
		}
	}
	if !slices.Equal(got.TrainFields, fields) || !slices.Equal(got.EngineTrainFields, fields) {
		t.Errorf("the engine's train config fields %v (train.py: %v), declared %v", got.TrainFields, got.EngineTrainFields, fields)
	}
	for f := range got.Flags {
		if !declared[f] && !slices.Contains(engineFlags, f) {
			t.Errorf("the engine's train command has --%s, which is neither a declared training option nor a known flag", f)
		}
	}
}
