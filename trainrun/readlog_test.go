package trainrun

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer"
)

// TestReadLog reads back what WriteLog writes, skipping the torch
// engine's {"engine": …} line and blank lines, and names the file in
// errors.
func TestReadLog(t *testing.T) {
	es := []transformer.LogEntry{{Step: 50, Epoch: 0.5, TrainLoss: 0.9, LR: 1e-3, GradNorm: 0.4},
		{Step: 100, Epoch: 1, TrainLoss: 0.8, EpochEnd: true, EpochTrainLoss: 0.85, ValLoss: 0.82, BestValLoss: 0.82}}
	var b bytes.Buffer
	b.WriteString(`{"engine": "torch", "device": "cpu"}` + "\n\n")
	if err := WriteLog(&b, es); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLog(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, es) {
		t.Errorf("read %+v, wrote %+v", got, es)
	}
	if _, err := ReadLog(strings.NewReader("{\"step\": 1}\nnot json\n")); err == nil || !strings.Contains(err.Error(), LogFile) {
		t.Errorf("bad line: %v", err)
	}
}
