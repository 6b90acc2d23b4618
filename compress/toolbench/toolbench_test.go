package toolbench

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vomc/vomc/compress"
)

// fakeTools puts fake xz and 7z on an otherwise empty PATH: xz writes 10
// bytes, 7z reports a packed size of 42.
func fakeTools(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	dir := t.TempDir()
	scripts := map[string]string{
		"xz": `#!/bin/sh
if [ "$1" = --version ]; then echo "xz (fake) 1.0"; echo second line; exit 0; fi
printf 0123456789`,
		"7z": `#!/bin/sh
case "$1" in
a) exit 0;;
l) echo "Path = a.7z"; echo "Packed Size = 42";;
esac`,
	}
	for name, s := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
}

func TestAvailableFake(t *testing.T) {
	fakeTools(t)
	ts := Available()
	if len(ts) != 2 || ts[0].Name != "xz-9e" || ts[0].Version != "xz (fake) 1.0" || ts[1].Name != "7z-ppmd6" || ts[1].Version != "7z" {
		t.Fatalf("tools %+v", ts)
	}
	f := filepath.Join(t.TempDir(), "in")
	os.WriteFile(f, []byte("abc"), 0o644)
	for i, want := range []int64{10, 42} {
		if n, err := ts[i].Size(f); err != nil || n != want {
			t.Errorf("%s: size %d, %v; want %d", ts[i].Name, n, err, want)
		}
	}
}

func TestRun(t *testing.T) {
	fakeTools(t)
	dir := t.TempDir()
	var files []string
	for i, s := range []string{"hello hello hello hello", ""} {
		p := filepath.Join(dir, string(rune('a'+i)))
		os.WriteFile(p, []byte(s), 0o644)
		files = append(files, p)
	}
	m, err := compress.PPM(compress.DefaultPPM())
	if err != nil {
		t.Fatal(err)
	}
	var got []File
	tot, err := Run(files, []compress.Model{m}, Available(), 2, func(f File) { got = append(got, f) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Bytes != 23 || got[1].Bytes != 0 {
		t.Fatalf("files %+v", got)
	}
	z, _ := compress.EncodeBytes([]byte("hello hello hello hello"), m)
	if got[0].Sizes[0] != int64(len(z)) || got[0].Sizes[1] != 10 || got[0].Sizes[2] != 42 {
		t.Errorf("sizes %v, model %d", got[0].Sizes, len(z))
	}
	if tot.In != 23 || tot.Out[1] != 20 || tot.Out[2] != 84 || tot.Out[0] != got[0].Sizes[0]+got[1].Sizes[0] {
		t.Errorf("totals %+v", tot)
	}
	if BitsPerByte(3, 0) != 0 || BitsPerByte(1, 2) != 4 {
		t.Error("BitsPerByte")
	}
	if _, err := Run([]string{filepath.Join(dir, "missing")}, nil, nil, 1, nil); err == nil {
		t.Error("a missing file was accepted")
	}
	broken := Tool{Name: "broken", Size: stdoutSize("false")}
	if _, err := Run(files[:1], nil, []Tool{broken}, 1, nil); err == nil {
		t.Error("a failing tool was accepted")
	}
}

// TestReport checks the table of Report: a row per file, the totals and a
// speed line per model, with the fake tools' columns.
func TestReport(t *testing.T) {
	fakeTools(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	os.WriteFile(p, []byte("abcabcabcabcabcabcab"), 0o644) // 20 bytes
	m, err := compress.PPM(compress.DefaultPPM())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Report(&b, []string{p}, []compress.Model{m}, Available(), 1); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"one core\n", "  [1] " + m.Name(), "  xz-9e: xz (fake) 1.0", "[1]    xz-9e 7z-ppmd6   (bits/byte)",
		filepath.Join(filepath.Base(dir), "a.txt"), "  4.0000  16.8000\n", "TOTAL                         20", "[1] " + m.Name()} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if shortName("/x/averyveryverylongdirectoryname/f") != "f" {
		t.Error("shortName of a long path")
	}
	if err := Report(&b, []string{filepath.Join(dir, "missing")}, nil, nil, 1); err == nil {
		t.Error("a missing file was accepted")
	}
}
