package ctw

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestTraceCSV(t *testing.T) {
	cfg := Config{A: 2, D: 2, Lambda: 0.5, Alpha: 0.5, Init: Condition}
	x := []byte{0, 1, 1, 0, 1, 1, 0, 1}
	var wb, pb bytes.Buffer
	if err := WriteWeightsCSV(&wb, cfg, x); err != nil {
		t.Fatal(err)
	}
	if err := WritePredictionsCSV(&pb, cfg, x); err != nil {
		t.Fatal(err)
	}
	wl := strings.Split(strings.TrimSpace(wb.String()), "\n")
	pl := strings.Split(strings.TrimSpace(pb.String()), "\n")
	if wl[0] != "position,symbol,omega_0,omega_1,omega_2" || pl[0] != "position,symbol,loss_nats,p_0,p_1" {
		t.Fatalf("headers %q, %q", wl[0], pl[0])
	}
	if len(wl) != len(x)+1 || len(pl) != len(x)+1 {
		t.Fatalf("%d and %d lines for %d symbols", len(wl), len(pl), len(x))
	}
	for i := range x {
		f := strings.Split(pl[i+1], ",")
		p0, _ := strconv.ParseFloat(f[3], 64)
		p1, _ := strconv.ParseFloat(f[4], 64)
		loss, _ := strconv.ParseFloat(f[2], 64)
		if f[0] != strconv.Itoa(i+1) || f[1] != strconv.Itoa(int(x[i])) || math.Abs(p0+p1-1) > 1e-9 || math.Abs(loss+math.Log([]float64{p0, p1}[x[i]])) > 1e-8 {
			t.Errorf("row %d: %q", i+1, pl[i+1])
		}
	}
	if err := WriteWeightsCSV(&wb, Config{A: 0}, x); err == nil {
		t.Error("a bad configuration was accepted")
	}
}
