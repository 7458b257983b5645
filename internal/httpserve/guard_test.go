package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/tmcp/tmcp/internal/mcpserver"
)

func TestHostGuardAdmitsOnlyThisServersNames(t *testing.T) {
	bound := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8765}
	cases := []struct {
		bindHost string
		allow    []string
		host     string
		want     bool
	}{
		{"127.0.0.1", nil, "127.0.0.1:8765", true},
		{"127.0.0.1", nil, "localhost:8765", true},
		{"127.0.0.1", nil, "LOCALHOST:8765", true},
		{"127.0.0.1", nil, "[::1]:8765", true},
		{"127.0.0.1", nil, "localhost", false}, // port 80, not ours
		{"127.0.0.1", nil, "localhost:8766", false},
		{"127.0.0.1", nil, "evil.example:8765", false},
		{"127.0.0.1", nil, "127.0.0.1.evil.example:8765", false},
		{"127.0.0.1", nil, "", false},
		{"0.0.0.0", nil, "0.0.0.0:8765", false},
		{"0.0.0.0", []string{"box.lan"}, "box.lan:8765", true},
		{"0.0.0.0", []string{"box.lan"}, "box.lan", true}, // behind a proxy on 80
		{"0.0.0.0", []string{"box.lan"}, "evil.box.lan:8765", false},
		{"0.0.0.0", []string{"box.lan:443"}, "box.lan:443", true},
		{"0.0.0.0", []string{"box.lan:443"}, "box.lan:8765", false},
		{"box.lan", nil, "box.lan:8765", true},
		{"box.lan", nil, "box.lan:9999", false},
	}
	for _, c := range cases {
		g, err := newHostGuard(bound, c.bindHost, c.allow)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.allows(c.host); got != c.want {
			t.Errorf("bound %s as %q, --allow-host %v: Host %q admitted %v, want %v", bound, c.bindHost, c.allow, c.host, got, c.want)
		}
	}
}

func TestOriginGuardRefusesEveryOriginNotAllowed(t *testing.T) {
	cases := []struct {
		allow   []string
		origins []string
		want    int
	}{
		{nil, nil, http.StatusOK},
		{nil, []string{"https://evil.example"}, http.StatusForbidden},
		{nil, []string{"null"}, http.StatusForbidden},
		{nil, []string{"http://127.0.0.1:8765"}, http.StatusForbidden},
		{[]string{"https://app.example/"}, []string{"https://app.example"}, http.StatusOK},
		{[]string{"https://app.example"}, []string{"HTTPS://APP.EXAMPLE"}, http.StatusOK},
		{[]string{"https://app.example"}, []string{"https://app.example.evil"}, http.StatusForbidden},
		{[]string{"https://app.example"}, []string{"https://app.example", "https://evil.example"}, http.StatusForbidden},
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		for _, o := range c.origins {
			r.Header.Add("Origin", o)
		}
		w := httptest.NewRecorder()
		newOriginGuard(c.allow).wrap(ok).ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("--allow-origin %v, Origin %v: %d, want %d", c.allow, c.origins, w.Code, c.want)
		}
	}
}

func TestTheLiveViewsOriginGuardAlsoAdmitsThePagesOwnOrigin(t *testing.T) {
	cases := []struct {
		scheme, host string
		allow        []string
		origins      []string
		want         int
	}{
		{"http", "127.0.0.1:8765", nil, nil, http.StatusOK},
		{"http", "127.0.0.1:8765", nil, []string{"http://127.0.0.1:8765"}, http.StatusOK},
		{"https", "tmcp.lan:8765", nil, []string{"https://TMCP.lan:8765"}, http.StatusOK},
		{"https", "127.0.0.1:8765", nil, []string{"http://127.0.0.1:8765"}, http.StatusForbidden},
		{"http", "127.0.0.1:8765", nil, []string{"http://127.0.0.1:9999"}, http.StatusForbidden},
		{"http", "127.0.0.1:8765", nil, []string{"http://localhost:8765"}, http.StatusForbidden},
		{"http", "127.0.0.1:8765", nil, []string{"http://127.0.0.1:8765", "http://127.0.0.1:8765"}, http.StatusForbidden},
		{"http", "127.0.0.1:8765", []string{"https://app.example"}, []string{"https://app.example"}, http.StatusOK},
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/live/api/panes", nil)
		r.Host = c.host
		for _, o := range c.origins {
			r.Header.Add("Origin", o)
		}
		w := httptest.NewRecorder()
		newOriginGuard(c.allow).wrapSameOrigin(c.scheme, ok).ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s, Host %s, --allow-origin %v, Origin %v: %d, want %d", c.scheme, c.host, c.allow, c.origins, w.Code, c.want)
		}
	}
}

func TestTokenFilesAreReadWithTheirTiersAndRefusedWhenUnsafe(t *testing.T) {
	const a, b = "aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb"
	cases := []struct {
		name    string
		content string
		mode    os.FileMode
		want    []Token
		errWith string
	}{
		{"tiers and the default", "# comment\n" + a + " readonly\n\n" + b + "\n", 0o600,
			[]Token{{a, mcpserver.ReadOnly}, {b, mcpserver.Mutating}}, ""},
		{"owner read only", a + " Destructive\n", 0o400, []Token{{a, mcpserver.Destructive}}, ""},
		{"readable by the group", a + "\n", 0o640, nil, "chmod 600"},
		{"writable by others", a + "\n", 0o602, nil, "chmod 600"},
		{"a misspelt tier", a + " destrucive\n", 0o600, nil, `line 1: tier "destrucive"`},
		{"three words", a + " readonly extra\n", 0o600, nil, "line 1: want TOKEN"},
		{"a short token", "short\n", 0o600, nil, "too short"},
		{"empty", "\n# none\n", 0o600, nil, "holds no token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens")
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, c.mode); err != nil {
				t.Fatal(err)
			}
			got, err := ReadTokenFile(path, mcpserver.Mutating)
			if c.errWith != "" {
				if err == nil || !strings.Contains(err.Error(), c.errWith) {
					t.Fatalf("got %v, %v; want an error with %q", got, err, c.errWith)
				}
				if strings.Contains(err.Error(), a) {
					t.Errorf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil || len(got) != len(c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("token %d: %v, want %v", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestTheKeyringKnowsEachTokenAndItsTier(t *testing.T) {
	ro := Token{"readonly-token-000000", mcpserver.ReadOnly}
	de := Token{"destructive-token-000", mcpserver.Destructive}
	k, err := newKeyring([]Token{ro, de})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		presented string
		want      *Token
	}{
		{ro.Secret, &ro},
		{de.Secret, &de},
		{"readonly-token-00000", nil},
		{"readonly-token-0000000", nil},
		{"", nil},
	} {
		info, err := k.verify(context.Background(), c.presented, nil)
		switch {
		case c.want == nil:
			if !errors.Is(err, auth.ErrInvalidToken) {
				t.Errorf("token %q: %v, %v; want ErrInvalidToken", c.presented, info, err)
			}
		case err != nil:
			t.Errorf("token %q: %v", c.presented, err)
		case info.UserID != c.want.Fingerprint() || info.Extra[tierKey] != c.want.Tier:
			t.Errorf("token %q: user %s tier %v, want %s %v", c.presented, info.UserID, info.Extra[tierKey], c.want.Fingerprint(), c.want.Tier)
		}
	}
	if _, err := newKeyring([]Token{ro, ro}); err == nil {
		t.Error("the same token twice was accepted")
	}
	if _, err := newKeyring(nil); err == nil {
		t.Error("no token at all was accepted")
	}
}

func TestAMadeTokenIsKeptPrivateAndReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tmcp", "http-8765.token")
	first, err := GenerateToken(path, mcpserver.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 || len(first.Secret) < 32 || first.Tier != mcpserver.ReadOnly {
		t.Errorf("made %q at tier %v in a file of mode %04o; want 32+ characters, readonly, 0600", first.Secret, first.Tier, info.Mode().Perm())
	}
	dir, _ := os.Stat(filepath.Dir(path))
	if dir.Mode().Perm() != 0o700 {
		t.Errorf("token directory mode %04o, want 0700", dir.Mode().Perm())
	}
	again, err := GenerateToken(path, mcpserver.ReadOnly)
	if err != nil || again.Secret != first.Secret {
		t.Errorf("second start: %q, %v; want the token made first", again.Secret, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := GenerateToken(path, mcpserver.ReadOnly); err == nil {
		t.Error("a made token that others can read was reused")
	}
}

func TestA401CarriesABearerChallenge(t *testing.T) {
	k, err := newKeyring([]Token{{"the-right-token-000", mcpserver.ReadOnly}})
	if err != nil {
		t.Fatal(err)
	}
	h := requireToken(k, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t, ok := tierOf(r); !ok || t != mcpserver.ReadOnly {
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	for _, c := range []struct {
		authorization, query string
		code                 int
		challenge            string
	}{
		{"", "", http.StatusUnauthorized, `Bearer realm="tmcp"`},
		{"Bearer wrong-token-0000000", "", http.StatusUnauthorized, `Bearer realm="tmcp", error="invalid_token"`},
		{"Basic dXNlcjpwYXNz", "", http.StatusUnauthorized, `Bearer realm="tmcp", error="invalid_token"`},
		{"Bearer the-right-token-000", "", http.StatusOK, ""},
		{"bearer the-right-token-000", "", http.StatusOK, ""},
		{"Bearer the-right-token-000", "access_token=the-right-token-000", http.StatusBadRequest, `error="invalid_request"`},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp?"+c.query, nil)
		if c.authorization != "" {
			r.Header.Set("Authorization", c.authorization)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Header().Get("WWW-Authenticate"); w.Code != c.code || !strings.Contains(got, c.challenge) || (c.challenge == "" && got != "") {
			t.Errorf("Authorization %q, query %q: %d with challenge %q, want %d with %q", c.authorization, c.query, w.Code, got, c.code, c.challenge)
		}
	}
}
