package httpserve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestOnlyAnInitializeWaitsForASessionSlot(t *testing.T) {
	cases := []struct {
		name      string
		method    string
		sessionID string
		body      string
		refused   bool
	}{
		{"initialize", http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, true},
		{"initialize in a batch", http.MethodPost, "", `[{"jsonrpc":"2.0","method":"ping","id":2},{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, true},
		{"discover probe", http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, false},
		{"ping without a session", http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, false},
		{"not JSON", http.MethodPost, "", `initialize`, false},
		{"a call in a session", http.MethodPost, "abc", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, false},
		{"stream", http.MethodGet, "abc", ``, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var passed string
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				passed = string(b)
			})
			l := &sessionLimit{slots: make(chan struct{}, 1), find: func(string) *mcp.ServerSession { return nil }}
			l.slots <- struct{}{} // the one session allowed is open
			req := httptest.NewRequest(c.method, Path, strings.NewReader(c.body))
			if c.sessionID != "" {
				req.Header.Set(sessionHeader, c.sessionID)
			}
			rec := httptest.NewRecorder()
			l.wrap(next).ServeHTTP(rec, req)
			refused := rec.Code == http.StatusServiceUnavailable
			if refused != c.refused {
				t.Fatalf("with every slot taken: status %d, refused %v, want refused %v", rec.Code, refused, c.refused)
			}
			if !refused && passed != c.body {
				t.Errorf("the handler behind read %q, want the whole body %q", passed, c.body)
			}
			if len(l.slots) != 1 {
				t.Errorf("%d slots taken after the request, want the 1 taken before", len(l.slots))
			}
		})
	}
}
