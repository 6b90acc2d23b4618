package explore

// A minimal client of the Chrome DevTools protocol over --remote-debugging-pipe
// (JSON messages separated by NUL bytes on the child's file descriptors 3
// and 4): enough to load a page, run JavaScript, click, press keys and take
// a screenshot in headless Chromium, with no dependency.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// chromiumPath finds Debian's chromium (or $VOMC_CHROMIUM).
func chromiumPath() (string, error) {
	if p := os.Getenv("VOMC_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH")
}

type browser struct {
	cmd     *exec.Cmd
	out     *os.File // our end of the child's fd 3 (commands)
	in      *os.File // our end of the child's fd 4 (answers, events)
	mu      sync.Mutex
	next    int
	pending map[int]chan cdpMessage
	session string
	done    chan struct{}
	errs    []string // console errors and exceptions of the page
	stderr  strings.Builder
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// startBrowser starts headless chromium with a fresh profile and opens a
// page of width×height CSS pixels; the test skips where there is no chromium.
func startBrowser(t *testing.T, width, height int) *browser {
	t.Helper()
	path, err := chromiumPath()
	if err != nil {
		t.Skip("browser test skipped: chromium is not installed (Debian: apt-get install chromium; or set VOMC_CHROMIUM)")
	}
	profile := t.TempDir()
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{out: cmdW, in: ansR, pending: map[int]chan cdpMessage{}, done: make(chan struct{})}
	b.cmd = exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--disable-extensions", "--mute-audio", "--hide-scrollbars", "--user-data-dir="+profile,
		"--remote-debugging-pipe", "about:blank")
	b.cmd.ExtraFiles = []*os.File{cmdR, ansW}
	b.cmd.Stderr = &b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Skipf("browser test skipped: chromium (%s) does not start: %v", path, err)
	}
	cmdR.Close()
	ansW.Close()
	go b.read()
	t.Cleanup(b.close)
	var target struct{ TargetID string }
	if err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b.stderr.String())
	}
	var att struct{ SessionID string }
	if err := b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		t.Fatal(err)
	}
	b.session = att.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable"} {
		if err := b.call(b.session, m, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height,
		"deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *browser) read() {
	defer close(b.done)
	r := bufio.NewReaderSize(b.in, 1<<20)
	for {
		line, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(line[:len(line)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		switch m.Method {
		case "Runtime.exceptionThrown":
			b.mu.Lock()
			b.errs = append(b.errs, "exception: "+string(m.Params))
			b.mu.Unlock()
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string
				Args []struct{ Value any }
			}
			json.Unmarshal(m.Params, &p)
			if p.Type == "error" {
				b.mu.Lock()
				b.errs = append(b.errs, fmt.Sprint("console.error: ", p.Args))
				b.mu.Unlock()
			}
		}
	}
}

func (b *browser) close() {
	b.out.Close() // chromium exits when its pipe closes
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
	}
	exited := make(chan struct{})
	go func() { b.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		b.cmd.Process.Kill()
		<-exited
	}
	b.in.Close()
}

// call sends a command and decodes its result into res (may be nil).
func (b *browser) call(session, method string, params any, res any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpMessage, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := b.out.Write(append(data, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if res != nil {
			return json.Unmarshal(m.Result, res)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("%s: chromium exited", method)
	case <-time.After(60 * time.Second):
		return fmt.Errorf("%s: no answer in 60 s", method)
	}
}

// eval runs a JavaScript expression (awaiting a promise) and decodes its
// JSON-able value into res.
func (b *browser) eval(expr string, res any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := b.call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		return err
	}
	if e := r.ExceptionDetails; e != nil {
		return fmt.Errorf("javascript %q: %s %s", expr, e.Text, e.Exception.Description)
	}
	if res != nil {
		return json.Unmarshal(r.Result.Value, res)
	}
	return nil
}

// waitFor evaluates cond until it is true.
func (b *browser) waitFor(ctx context.Context, cond string) error {
	for {
		var ok bool
		if err := b.eval(cond, &ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (page errors: %v)", cond, ctx.Err(), b.pageErrors())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (b *browser) pageErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errs...)
}

func (b *browser) navigate(url string) error {
	return b.call(b.session, "Page.navigate", map[string]any{"url": url}, nil)
}

// click clicks at viewport coordinates (x, y).
func (b *browser) click(x, y float64) error {
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		if err := b.call(b.session, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y,
			"button": "left", "clickCount": 1}, nil); err != nil {
			return err
		}
	}
	return nil
}

// mouse sends one mouse event (mouseMoved, mousePressed, mouseReleased)
// at viewport coordinates, with the left button down when pressed.
func (b *browser) mouse(typ string, x, y float64, pressed bool) error {
	p := map[string]any{"type": typ, "x": x, "y": y, "button": "none"}
	if pressed || typ != "mouseMoved" {
		p["button"], p["buttons"], p["clickCount"] = "left", 1, 1
	}
	return b.call(b.session, "Input.dispatchMouseEvent", p, nil)
}

// key presses and releases a key such as "ArrowRight".
func (b *browser) key(key string, code int) error {
	for _, typ := range []string{"rawKeyDown", "keyUp"} {
		if err := b.call(b.session, "Input.dispatchKeyEvent", map[string]any{"type": typ, "key": key, "code": key,
			"windowsVirtualKeyCode": code}, nil); err != nil {
			return err
		}
	}
	return nil
}

// screenshot returns a PNG of the whole page.
func (b *browser) screenshot() ([]byte, error) {
	var r struct{ Data string }
	if err := b.call(b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}
