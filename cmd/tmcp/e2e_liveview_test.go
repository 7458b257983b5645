package main

// End-to-end test of the live view of tmcp --http in a real headless
// browser: Debian's chromium, driven over the DevTools protocol.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

const (
	// pageShowsWithin is how soon a line written into a pane must show on
	// the live page.
	pageShowsWithin = time.Second
	// browserTimeout bounds the browser's part of the test.
	browserTimeout = 30 * time.Second
	// pagePoll is how often the test looks at the page while it waits.
	pagePoll = 5 * time.Millisecond
)

// startBrowser starts headless chromium (as root: without its sandbox)
// with a profile of the test's own, and returns a tab's context. Every
// process of that browser is ended when the test ends, and the test fails
// if one outlives it.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed: run scripts/install-deps.sh (it installs Debian's chromium)")
	}
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.UserDataDir(profile))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // kills the browser and waits for it
		if left := browserProcesses(profile); len(left) > 0 {
			for _, pid := range left {
				_ = syscallKill(pid)
			}
			t.Errorf("browser processes %v outlived the test; killed", left)
		}
	})
	// The browser lives as long as the context of its first action: no
	// timeout on that one.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// browserProcesses returns the processes started with the profile dir:
// chromium passes --user-data-dir to every process it starts.
func browserProcesses(profile string) []int {
	want := []byte("--user-data-dir=" + profile + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(cmdline, want) && procState(pid) != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

func syscallKill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// pageText returns the text of the element with an id on the page.
func pageText(ctx context.Context, id string) (string, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.getElementById(%q).textContent`, id)))
}

// awaitPageText waits until the element with an id holds want, and
// returns how long that took; it fails the test past within.
func awaitPageText(t *testing.T, ctx context.Context, id, want string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		s, err := pageText(ctx, id)
		if err != nil {
			t.Fatalf("reading #%s: %v", id, err)
		}
		if strings.Contains(s, want) {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("#%s did not show %q within %v; it reads:\n%s", id, want, within, s)
		}
		time.Sleep(pagePoll)
	}
}

func TestLiveViewShowsAPaneInABrowser(t *testing.T) {
	srv := tmuxtest.New(t)
	h := startHTTP(t, srv, launchOptions{})
	page := strings.TrimSuffix(h.url, "/mcp") + "/"
	pane := mainPane(srv)
	waitPrompt(t, srv, pane) // a line typed ahead of the prompt has it glued to its output
	tmuxOne(srv, "send-keys", "-t", pane, "echo before-the-page-$((1+1))", "Enter")
	waitScreen(t, srv, pane, "the line written before the page opened", func(l []string) bool { return hasLine(l, "before-the-page-2") })

	ctx := startBrowser(t)
	steps, cancel := context.WithTimeout(ctx, browserTimeout)
	defer cancel()
	paneButton := chromedp.CSS(fmt.Sprintf(`#panes button[data-pane=%q]`, pane))
	if err := chromedp.Do(steps,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), testToken),
		chromedp.Click(chromedp.ID("connect")),
		chromedp.WaitVisible(paneButton),
		chromedp.Click(paneButton),
	); err != nil {
		t.Fatalf("opening the page, giving the token and picking pane %s: %v; tmcp stderr:\n%s", pane, err, h.stderr.String())
	}
	awaitPageText(t, ctx, "screen", "before-the-page-2", 5*time.Second)

	// The line is the shell's output, not the echo of what was typed.
	start := time.Now()
	tmuxOne(srv, "send-keys", "-t", pane, "echo written-live-$((20+22))", "Enter")
	awaitPageText(t, ctx, "screen", "written-live-42", pageShowsWithin)
	t.Logf("a line written into %s showed on the page %v after send-keys began", pane, time.Since(start).Round(time.Millisecond))

	// A call made on the pane over MCP shows beside it.
	h.connect(t, testToken, nil).call("capture_pane", map[string]any{"paneId": pane})
	awaitPageText(t, ctx, "calls", "capture_pane", 2*time.Second)

	// The token went nowhere the browser keeps.
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "|" + document.cookie + "|" + localStorage.length + "|" + sessionStorage.length`))
	if err != nil {
		t.Fatal(err)
	}
	if want := page + "||0|0"; kept != want {
		t.Errorf("URL|cookies|localStorage|sessionStorage = %q, want %q", kept, want)
	}
}

func TestLiveViewDataNeedTheToken(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	h := startHTTP(t, srv, launchOptions{})
	base := strings.TrimSuffix(h.url, "/mcp")
	pane := mainPane(srv)
	get := func(path, token string, edit func(*http.Request)) int {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if edit != nil {
			edit(req)
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		res, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	origin := func(o string) func(*http.Request) { return func(r *http.Request) { r.Header.Set("Origin", o) } }
	events := "/live/api/events?pane=" + strings.ReplaceAll(pane, "%", "%25")
	wrong := "wrong-token-0123456789abcdef"
	cases := []struct {
		what, path, token string
		edit              func(*http.Request)
		want              int
	}{
		{"the panes without a token", "/live/api/panes", "", nil, http.StatusUnauthorized},
		{"the panes with a wrong token", "/live/api/panes", wrong, nil, http.StatusUnauthorized},
		{"a pane's events without a token", events, "", nil, http.StatusUnauthorized},
		{"a pane's events with a wrong token", events, wrong, nil, http.StatusUnauthorized},
		{"the panes with the token in the URL", "/live/api/panes?access_token=" + testToken, "", nil, http.StatusBadRequest},
		{"the panes from another site", "/live/api/panes", testToken, origin("http://evil.example"), http.StatusForbidden},
		{"the page under another name", "/", "", func(r *http.Request) { r.Host = "evil.example:" + portOf(h.url) }, http.StatusForbidden},
		{"the panes with the token", "/live/api/panes", testToken, nil, http.StatusOK},
		{"the panes from the page's own origin", "/live/api/panes", testToken, origin(base), http.StatusOK},
		{"the page, which holds no data", "/", "", nil, http.StatusOK},
	}
	for _, c := range cases {
		if got := get(c.path, c.token, c.edit); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
}
