package transformer

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// stEntry is one tensor of a safetensors file as parsed by parseStandard.
type stEntry struct {
	name   string
	shape  []int
	offset [2]int
}

// parseStandard parses a safetensors file by the format's specification
// alone (not with this package's reader): an unsigned little-endian 64-bit
// header size n, an n-byte UTF-8 JSON object mapping every tensor name to
// exactly {dtype, shape, data_offsets} and the optional "__metadata__" to a
// string→string map, and a data section that the tensors' byte ranges
// (relative to its start) tile exactly, without gaps or overlaps.
func parseStandard(t *testing.T, b []byte) (map[string]string, []stEntry, []byte) {
	t.Helper()
	if len(b) < 8 {
		t.Fatalf("file of %d bytes", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) || n%8 != 0 {
		t.Fatalf("header size %d (file %d bytes; safetensors aligns to 8)", n, len(b))
	}
	h, data := b[8:8+n], b[8+n:]
	if h[0] != '{' {
		t.Fatalf("header does not start with '{': %q", h[:min(len(h), 20)])
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(h))
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("header JSON: %v", err)
	}
	if rest := strings.TrimRight(string(h[dec.InputOffset():]), " "); rest != "" {
		t.Fatalf("header has %q after the JSON object", rest)
	}
	meta := map[string]string{}
	if m, ok := raw["__metadata__"]; ok {
		var anyMeta map[string]any
		if err := json.Unmarshal(m, &anyMeta); err != nil {
			t.Fatalf("metadata: %v", err)
		}
		for k, v := range anyMeta {
			s, ok := v.(string)
			if !ok {
				t.Fatalf("metadata %q is %T, safetensors allows strings only", k, v)
			}
			meta[k] = s
		}
		delete(raw, "__metadata__")
	}
	var es []stEntry
	for name, r := range raw {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(r, &fields); err != nil {
			t.Fatalf("tensor %s: %v", name, err)
		}
		if len(fields) != 3 {
			t.Fatalf("tensor %s has keys %v, want dtype, shape, data_offsets", name, fields)
		}
		var dtype string
		var e stEntry
		e.name = name
		if json.Unmarshal(fields["dtype"], &dtype) != nil || dtype != "F32" {
			t.Fatalf("tensor %s dtype %s", name, fields["dtype"])
		}
		if json.Unmarshal(fields["shape"], &e.shape) != nil || json.Unmarshal(fields["data_offsets"], &e.offset) != nil {
			t.Fatalf("tensor %s: shape %s, offsets %s", name, fields["shape"], fields["data_offsets"])
		}
		size := 4
		for _, s := range e.shape {
			size *= s
		}
		if e.offset[1]-e.offset[0] != size {
			t.Fatalf("tensor %s: shape %v needs %d bytes, offsets %v", name, e.shape, size, e.offset)
		}
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].offset[0] < es[j].offset[0] })
	end := 0
	for _, e := range es {
		if e.offset[0] != end {
			t.Fatalf("tensor %s starts at byte %d, the previous ends at %d", e.name, e.offset[0], end)
		}
		end = e.offset[1]
	}
	if end != len(data) {
		t.Fatalf("tensors cover %d bytes of a %d-byte data section", end, len(data))
	}
	return meta, es, data
}

// TestSafetensorsStandard checks that the model file and the checkpoint
// are standard safetensors files (parsed by the specification, with the
// model's tensor names, shapes and values), and, when a python3 with the
// safetensors and numpy packages is installed, that Python loads them.
func TestSafetensorsStandard(t *testing.T) {
	cfg := DefaultConfig(2, 2, 8, 12, 3)
	cfg.Heads = []int{2, 1}
	m := randomModel(t, cfg, 7, 0.3)
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	if err := m.SaveSafetensors(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	meta, es, data := parseStandard(t, b)
	var c Config
	if err := json.Unmarshal([]byte(meta["config"]), &c); err != nil || c.String() != cfg.String() {
		t.Fatalf("metadata config %q: %v", meta["config"], err)
	}
	layout := cfg.Layout()
	if len(es) != len(layout) {
		t.Fatalf("%d tensors, layout has %d", len(es), len(layout))
	}
	for i, ti := range layout {
		e := es[i]
		if e.name != ti.Name || fmt.Sprint(e.shape) != fmt.Sprint(ti.Shape) {
			t.Fatalf("tensor %d is %s %v, want %s %v", i, e.name, e.shape, ti.Name, ti.Shape)
		}
		for j := 0; j < ti.Size; j++ {
			v := math.Float32frombits(binary.LittleEndian.Uint32(data[e.offset[0]+4*j:]))
			if v != liveParams(m)[ti.Offset+j] {
				t.Fatalf("%s[%d] = %v, want %v", ti.Name, j, v, liveParams(m)[ti.Offset+j])
			}
		}
	}

	train, _, _ := markovWindows(testChain, 8, 12, 1)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs = 4, 1
	tr, err := NewTrainer(m, tc, train, train[:2])
	if err != nil {
		t.Fatal(err)
	}
	tr.Run(t.Context())
	ckpt := filepath.Join(dir, "checkpoint.safetensors")
	if err := tr.SaveCheckpoint(ckpt, map[string]string{"note": "x"}); err != nil {
		t.Fatal(err)
	}
	cb, _ := os.ReadFile(ckpt)
	cmeta, ces, _ := parseStandard(t, cb)
	if len(ces) != 4 || cmeta["format"] != checkpointFormat {
		t.Fatalf("checkpoint: %d tensors, metadata %v", len(ces), cmeta)
	}
}

// TestSafetensorsPython loads a model file and a checkpoint with Python's
// safetensors package, when a python3 with it and numpy is installed.
func TestSafetensorsPython(t *testing.T) {
	python := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import safetensors.numpy, numpy").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("no python3 with the safetensors and numpy packages: Python check skipped")
	}
	cfg := DefaultConfig(2, 2, 8, 12, 3)
	cfg.Heads = []int{2, 1}
	m := randomModel(t, cfg, 7, 0.3)
	layout := cfg.Layout()
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	if err := m.SaveSafetensors(path); err != nil {
		t.Fatal(err)
	}
	train, _, _ := markovWindows(testChain, 8, 12, 1)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs = 4, 1
	tr, err := NewTrainer(m, tc, train, train[:2])
	if err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(dir, "checkpoint.safetensors")
	if err := tr.SaveCheckpoint(ckpt, nil); err != nil {
		t.Fatal(err)
	}
	script := `
import json, sys
from safetensors.numpy import load_file
from safetensors import safe_open
out = {}
for path in sys.argv[1:]:
    d = load_file(path)
    with safe_open(path, "np") as f:
        md = f.metadata()
    out[path] = {"meta": md, "tensors": {k: [list(v.shape), str(v.dtype), float(v.astype("float64").sum())] for k, v in d.items()}}
print(json.dumps(out))
`
	res, err := exec.Command(python, "-c", script, path, ckpt).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, res)
	}
	var got map[string]struct {
		Meta    map[string]string
		Tensors map[string][3]any
	}
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatalf("python output %q: %v", res, err)
	}
	if got[path].Meta["config"] != cfg.String() || len(got[path].Tensors) != len(layout) || len(got[ckpt].Tensors) != 3 {
		t.Fatalf("python read %+v", got)
	}
	for _, ti := range layout {
		pt := got[path].Tensors[ti.Name]
		sum := 0.0
		for _, v := range liveParams(m)[ti.Offset : ti.Offset+ti.Size] {
			sum += float64(v)
		}
		if fmt.Sprint(pt[0]) != fmt.Sprint(ti.Shape) || pt[1] != "float32" || math.Abs(pt[2].(float64)-sum) > 1e-9 {
			t.Errorf("python: %s is %v, want shape %v float32 sum %v", ti.Name, pt, ti.Shape, sum)
		}
	}
}
