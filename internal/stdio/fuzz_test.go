package stdio

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sentinel is a valid request the fuzz target sends after the garbage.
const sentinel = `{"jsonrpc":"2.0","id":"fuzz-sentinel","method":"ping"}`

// FuzzReader feeds arbitrary bytes to the reader. It must never panic;
// every non-blank line other than a batch yields exactly one message or
// one error reply (or nothing, for a response); the replies are JSON-RPC
// errors as the spec names them; and a valid request after the garbage is
// still delivered, last.
func FuzzReader(f *testing.F) {
	for _, seed := range []string{
		"",
		"\n\n \r\n",
		"hello",
		"\xff\xfe\x00",
		"{",
		"{}",
		"[]",
		"[1,{}]",
		`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"}]`,
		`42`,
		`null`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":"2.0","id":7}`,
		`{"jsonrpc":"2.0","id":7,"result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":7,"error":"not an object"}`,
		`{"JSONRPC":"2.0","ID":7,"Method":"ping"}`,
		`{"jsonrpc":"2.0","method":"initialize","id":"i","params":{}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nhello\n" + sentinel,
		strings.Repeat("[", 10000),
		`{"jsonrpc":"2.0","id":"` + strings.Repeat("a", 70000) + `","method":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, line := range bytes.Split(data, []byte("\n")) {
			checkLine(t, line)
		}
		stream := append(append(bytes.Clone(data), '\n'), sentinel+"\n"...)
		c, out := connect(t, bytes.NewReader(stream))
		msgs := readAll(t, c)
		if len(msgs) == 0 {
			t.Fatalf("nothing delivered; want the sentinel at least")
		}
		if req, ok := msgs[len(msgs)-1].(*jsonrpc.Request); !ok || req.ID.Raw() != "fuzz-sentinel" {
			t.Fatalf("last message delivered %#v, want the sentinel", msgs[len(msgs)-1])
		}
		for _, l := range out.lines() {
			if l != "" && !json.Valid([]byte(l)) {
				t.Fatalf("wrote a line that is not JSON: %.200q", l)
			}
		}
	})
}

// checkLine checks what decodeLine makes of one line that is not a batch.
func checkLine(t *testing.T, line []byte) {
	t.Helper()
	trimmed := bytes.TrimSpace(line)
	msg, reply := decodeLine(line)
	switch {
	case len(trimmed) == 0:
		if msg != nil || reply != nil {
			t.Fatalf("blank line %q yielded %v, %v", line, msg, reply)
		}
		return
	case trimmed[0] == '[' && json.Valid(trimmed):
		return // a batch: the connection splits it
	case msg != nil && reply != nil:
		t.Fatalf("line %.200q yielded a message and a reply", line)
	case msg == nil && reply == nil && !responseShaped(trimmed):
		t.Fatalf("line %.200q yielded nothing", line)
	}
	if msg != nil {
		if _, err := jsonrpc.EncodeMessage(msg); err != nil {
			t.Fatalf("line %.200q: the message delivered cannot be encoded: %v", line, err)
		}
		return
	}
	if reply == nil {
		return
	}
	if responseShaped(trimmed) {
		t.Fatalf("line %.200q is a response, yet was answered", line)
	}
	wire, err := encode(reply)
	if err != nil {
		t.Fatalf("line %.200q: encoding the reply: %v", line, err)
	}
	var got struct {
		Error struct{ Code int } `json:"error"`
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(wire, &got) != nil || json.Unmarshal(wire, &members) != nil || members["id"] == nil {
		t.Fatalf("line %.200q: reply %s is not a JSON-RPC error with an id member", line, wire)
	}
	want := jsonrpc.CodeInvalidRequest
	if !json.Valid(trimmed) {
		want = jsonrpc.CodeParseError
	}
	if got.Error.Code != want {
		t.Fatalf("line %.200q: reply %s, want code %d", line, wire, want)
	}
	if want == jsonrpc.CodeParseError && string(members["id"]) != "null" {
		t.Fatalf("line %.200q: parse error with id %s, want null", line, members["id"])
	}
}

// responseShaped reports whether v is a JSON object with no method member
// and a result or an error member, which no one may answer. Members are
// matched without regard to case, as encoding/json matches them.
func responseShaped(v []byte) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(v, &members) != nil {
		return false
	}
	var method, result bool
	for k := range members {
		switch {
		case strings.EqualFold(k, "method"):
			method = true
		case strings.EqualFold(k, "result"), strings.EqualFold(k, "error"):
			result = true
		}
	}
	return result && !method
}
