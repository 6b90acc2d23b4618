package python

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// pythonWithTorch returns the first interpreter that imports torch, numpy
// and pytest — $VOMC_PYTHON if set, else python3 on PATH, else
// /usr/bin/python3 — or "" and why none does.
func pythonWithTorch() (string, string) { return pythonWith("torch, numpy, pytest") }

// pythonWith returns the first interpreter ($VOMC_PYTHON, python3 on
// PATH, /usr/bin/python3) that runs "import "+modules, or "" and why none
// does.
func pythonWith(modules string) (string, string) {
	var cands []string
	if p := os.Getenv("VOMC_PYTHON"); p != "" {
		cands = append(cands, p)
	}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/python3")
	var why []string
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c] {
			continue
		}
		seen[c] = true
		out, err := exec.Command(c, "-c", "import "+modules).CombinedOutput()
		if err == nil {
			return c, ""
		}
		msg := strings.TrimSpace(string(out))
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:] // the exception line, e.g. "ModuleNotFoundError: No module named 'torch'"
		}
		if msg == "" {
			msg = err.Error()
		}
		why = append(why, c+": "+msg)
	}
	return "", strings.Join(why, "; ")
}

// runLogged runs cmd with its output streamed into the test log.
func runLogged(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			t.Log(sc.Text())
		}
		io.Copy(io.Discard, pr)
	}()
	err := cmd.Run()
	pw.Close()
	<-done
	return err
}

// TestPytest runs the pytest suite of vomc_torch (python/tests) from the
// repository root with a Python that has torch, numpy and pytest, streaming
// its output into the test log.
func TestPytest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the pytest suite of vomc_torch (about 30 s)")
	}
	py, why := pythonWithTorch()
	if py == "" {
		t.Skipf("no Python with torch, numpy and pytest (set VOMC_PYTHON to one): %s", why)
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, py, "-m", "pytest", "-q", "python/tests")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			t.Log(sc.Text())
		}
		io.Copy(io.Discard, pr)
	}()
	t.Logf("%s -m pytest -q python/tests", py)
	err := cmd.Run()
	pw.Close()
	<-done
	if err != nil {
		t.Fatalf("pytest: %v", err)
	}
}

// TestPytestFixtures checks that python/tests/testdata is what its
// generator writes today (`go run ./python/tests/testdata/gen`), so that the
// Python engine is tested against the Go code as it is, not as it was.
func TestPytestFixtures(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to run the fixture generator")
	}
	tmp := t.TempDir()
	cmd := exec.Command(gobin, "run", "./python/tests/testdata/gen", "-out", tmp)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./python/tests/testdata/gen: %v\n%s", err, out)
	}
	committed := filepath.Join("tests", "testdata")
	want := map[string]bool{}
	err = filepath.WalkDir(committed, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(committed, p)
		if d.IsDir() {
			if rel == "gen" {
				return filepath.SkipDir
			}
			return nil
		}
		want[rel] = true
		a, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(tmp, rel))
		if err != nil {
			t.Errorf("%s: committed, not generated (stale: regenerate with go run ./python/tests/testdata/gen)", rel)
			return nil
		}
		if !sameFixture(rel, a, b) {
			t.Errorf("%s differs from what the generator writes now: regenerate with go run ./python/tests/testdata/gen", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if rel, _ := filepath.Rel(tmp, p); !want[rel] {
				t.Errorf("%s: generated, not committed: regenerate with go run ./python/tests/testdata/gen and commit it", rel)
			}
		}
		return nil
	})
}

// sameFixture compares a committed fixture with a generated one: byte for
// byte, except that a data set's manifest may name another tool version.
func sameFixture(rel string, a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if filepath.Base(rel) != "manifest.json" {
		return false
	}
	var ma, mb map[string]any
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return false
	}
	delete(ma, "tool")
	delete(mb, "tool")
	return reflect.DeepEqual(ma, mb)
}
