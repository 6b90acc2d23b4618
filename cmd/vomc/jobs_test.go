package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// volatile are the JSON keys that record when and how fast something ran:
// the only bytes of a stage's outputs allowed to differ between two runs.
var volatile = map[string]bool{"Seconds": true, "seconds": true, "finished": true, "elapsed_s": true,
	"tokens_per_s": true, "elapsed_ns": true, "output_hash": true, "dep_outputs": true, "vomc.data_sha256": true}

// normalized returns the file's content with the output directory out
// written as OUT and the volatile JSON fields removed: from .json and
// .jsonl files, and from the header and the JSON-valued metadata of
// .safetensors files (whose checksum covers them).
func normalized(t *testing.T, out, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".safetensors") && len(b) >= 8 {
		if n := binary.LittleEndian.Uint64(b); n <= uint64(len(b)-8) {
			h := bytes.ReplaceAll(b[8:8+n], []byte(out), []byte("OUT"))
			return append(normJSON(h), b[8+n:]...)
		}
	}
	b = bytes.ReplaceAll(b, []byte(out), []byte("OUT"))
	switch {
	case strings.HasSuffix(path, ".json"):
		return normJSON(b)
	case strings.HasSuffix(path, ".jsonl"):
		var out []byte
		for _, l := range bytes.Split(b, []byte("\n")) {
			out = append(append(out, normJSON(l)...), '\n')
		}
		return out
	}
	return b
}

// normJSON re-encodes JSON without the volatile keys, also inside string
// values that are JSON themselves; other bytes are returned as they are.
func normJSON(b []byte) []byte {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	var strip func(v any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if volatile[k] {
					delete(x, k)
				} else {
					x[k] = strip(e)
				}
			}
		case []any:
			for i := range x {
				x[i] = strip(x[i])
			}
		case string:
			var inner any
			if (strings.HasPrefix(x, "{") || strings.HasPrefix(x, "[")) && json.Unmarshal([]byte(x), &inner) == nil {
				s, _ := json.Marshal(strip(inner))
				return string(s)
			}
		}
		return v
	}
	out, _ := json.Marshal(strip(v))
	return out
}

// TestReproduceJobsIdentical runs a small study with --jobs 1 (in this
// process) and with --jobs 3 (every stage in a process of its own): the
// same stage directories, and every output file the same bytes but for
// the wall times it records (the report, which prints them, is compared
// through results.json).
func TestReproduceJobsIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("two small studies (≈ 10 s)")
	}
	t.Parallel()
	args := []string{"--preset", "tiny", "--set", "max_steps=20", "--set", "synth_steps=20", "--set", "warmup=5",
		"--set", "train_trees=40", "--set", "test_trees=40", "--set", "construct_windows=4",
		"--set", "fig4_models=", "--set", "synth_variants=tf20;allcounts"}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	outs := map[string]string{"1": filepath.Join(dir, "jobs1"), "3": filepath.Join(dir, "jobs3")}
	for _, j := range []string{"1", "3"} {
		// vomc as a process of its own, whose stage processes run this
		// test binary as vomc too (VOMC_TEST_ARGV, see TestMain).
		cmd := exec.Command(exe, append([]string{"reproduce", "--jobs", j, "--out", outs[j]}, args...)...)
		cmd.Env = append(os.Environ(), "VOMC_TEST_ARGV=1", "GOMAXPROCS=3")
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("--jobs %s: %v\n%s%s", j, err, so.String(), se.String())
		}
		stderr := se.String()
		if j == "3" && (!strings.Contains(stderr, "thread") || !strings.Contains(stderr, "stages running")) {
			t.Errorf("--jobs 3 log shows no stages run at once:\n%s", stderr)
		}
	}
	files := func(root string) []string {
		var fs_ []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, p)
			if !d.IsDir() && !strings.Contains(rel, "report-") && !strings.HasPrefix(rel, "report.") && !strings.HasSuffix(rel, ".lock") {
				fs_ = append(fs_, rel)
			}
			return nil
		})
		return fs_
	}
	a, b := files(outs["1"]), files(outs["3"])
	if !slices.Equal(a, b) || len(a) < 50 {
		t.Fatalf("files differ (or too few):\n%v\n%v", a, b)
	}
	for _, f := range a {
		if !bytes.Equal(normalized(t, outs["1"], filepath.Join(outs["1"], f)), normalized(t, outs["3"], filepath.Join(outs["3"], f))) {
			t.Errorf("%s differs between --jobs 1 and --jobs 3", f)
		}
	}
}
