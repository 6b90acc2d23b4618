package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConstructCmd(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	err := constructCmd([]string{"-A", "3", "-D", "2", "--lambda", "0.15", "--alpha", "0.5", "--input", "0120112", "--show",
		"--weights", filepath.Join(dir, "w.safetensors"), "--error-plot", filepath.Join(dir, "err.png"), "--c-range", "1,1000", "--c-points", "7"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"layer 2  FF → h^(3)", "ω_CTW", "max |P_TF − P_CTW| over all 8 positions", "error vs c", "c=∞"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, f := range []string{"w.safetensors", "err.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	out.Reset()
	if err := constructCmd([]string{"--c", "50", "--input", "0,1,1,0", "-A", "2", "-D", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "c=50") {
		t.Errorf("finite-c output: %s", out.String())
	}
	for _, bad := range [][]string{{"--c", "-3"}, {"--input", "0193"}, {"-D", "0"}, {"--error-plot", "x.png", "--c-range", "5,1"}} {
		if err := constructCmd(bad, &out); err == nil {
			t.Errorf("construct %v succeeded", bad)
		}
	}
	// Existing outputs are not overwritten without --force.
	if err := constructCmd([]string{"--weights", filepath.Join(dir, "w.safetensors")}, &out); err == nil {
		t.Error("overwrote an existing weights file without --force")
	}
}

// TestConstructMLP: --ff mlp --width W runs the construction with ReLU
// FF networks, and --ff-plot draws the error against the width.
func TestConstructMLP(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	// -short: narrower networks and fewer widths in the plot (the same
	// code paths).
	width, maxK := "3000", "64"
	if testing.Short() {
		width, maxK = "1000", "16"
	}
	if err := constructCmd([]string{"-D", "2", "--random", "25", "--N", "30", "--ff", "mlp", "--width", width,
		"--ff-plot", filepath.Join(dir, "ff.png"), "--ff-max-k", maxK}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"FF sub-layers: ReLU networks, K=", "error vs FF width", "wrote " + filepath.Join(dir, "ff.png")} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "ff.png")); err != nil || st.Size() == 0 {
		t.Errorf("ff.png missing: %v", err)
	}
	for _, bad := range [][]string{{"--ff", "mlp"}, {"--ff", "mlp", "--width", "5"}, {"--ff", "relu"}, {"--width", "100"}} {
		if err := constructCmd(bad, &out); err == nil {
			t.Errorf("construct %v succeeded", bad)
		}
	}
}
