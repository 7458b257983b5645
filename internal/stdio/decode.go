package stdio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireVersion is the only JSON-RPC version a message may name.
const wireVersion = "2.0"

// probe reads the members that say what kind of message an object is,
// without judging their values.
type probe struct {
	Version json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// decodeLine reads one line. It returns the message the line carries, or
// the error reply owed for it, or neither: for a blank line, and for a
// response that cannot be read, since nothing may answer a response.
// A line starting with '[' is a batch, which the caller splits first.
func decodeLine(line []byte) (jsonrpc.Message, *jsonrpc.Response) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	// A message is read without first checking the line is JSON: reading
	// the probe checks that too, and the check costs a pass only on failure.
	msg, reply := decodeValue(line)
	if reply != nil && !reply.ID.IsValid() && !json.Valid(line) {
		return nil, errorReply(jsonrpc.ID{}, jsonrpc.CodeParseError, "Parse error: the line is not JSON")
	}
	return msg, reply
}

// decodeValue reads one JSON value that should be a message: a whole line,
// or one member of a batch. It does not tell JSON from what is not.
func decodeValue(v []byte) (jsonrpc.Message, *jsonrpc.Response) {
	var p probe
	if len(v) == 0 || v[0] != '{' || json.Unmarshal(v, &p) != nil {
		return nil, errorReply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid Request: not a JSON-RPC message object")
	}
	if p.Method == nil && (p.Result != nil || p.Error != nil) {
		// A response: the SDK drops one that answers nothing it asked.
		msg, err := jsonrpc.DecodeMessage(v)
		if err != nil {
			return nil, nil
		}
		return msg, nil
	}
	id, idOK := readID(p.ID)
	switch {
	case !idOK:
		return nil, errorReply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid Request: the id is not a string or an integer")
	case string(p.ID) == "null":
		// MCP, unlike JSON-RPC, forbids a null id; the SDK would take
		// the request for a notification and never answer it.
		return nil, errorReply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid Request: the id must not be null")
	}
	switch {
	case !isVersion(p.Version):
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	case p.Method == nil:
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, "Invalid Request: no method, and no result or error")
	case p.Method[0] != '"':
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, "Invalid Request: the method is not a string")
	}
	msg, err := jsonrpc.DecodeMessage(v)
	if err != nil {
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: %v", err))
	}
	return msg, nil
}

// isVersion reports whether raw is the string "2.0", however escaped.
func isVersion(raw json.RawMessage) bool {
	var v string
	return json.Unmarshal(raw, &v) == nil && v == wireVersion
}

// readID reads a request id, absent or null being the zero ID; ok is false
// when it is neither a string nor an integer (MCP's rule), and so cannot be
// echoed: the SDK would round a fraction to an id the client never sent.
func readID(raw json.RawMessage) (id jsonrpc.ID, ok bool) {
	if raw == nil || string(raw) == "null" {
		return jsonrpc.ID{}, true
	}
	var v any
	var s string
	if json.Unmarshal(raw, &s) == nil {
		v = s
	} else if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		v = float64(n)
	} else {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil
}

// errorReply is the error response to the request with the given id (the
// zero ID is written as null).
func errorReply(id jsonrpc.ID, code int64, message string) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message}}
}
