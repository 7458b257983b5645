// Package stdio carries MCP as newline-delimited JSON-RPC over a reader
// and a writer, as the SDK's IOTransport does, except that nothing a client
// writes ends the session. A line that is not JSON gets a parse error
// (-32700, id null); JSON that is not a message gets an invalid request
// (-32600, with the id when one can be read); a blank line, and a response
// nobody can be told about, are dropped; lines have no length limit. The
// session ends only at EOF, on a read or write error, or on Close.
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noBatchesSince is the first MCP version without JSON-RPC batches.
const noBatchesSince = "2025-06-18"

// Transport is an mcp.Transport over Reader and Writer. Connect may be
// called once.
type Transport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// Arrive, if set, is called by the read loop with each message before
	// Read can return it, and the next line is not read until it returns.
	// It sees a message the moment it is read, with no goroutine between
	// (a server stamps a call's arrival there), and may set its Extra.
	Arrive func(jsonrpc.Message)
}

// Connect starts reading messages and returns the connection.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c := &conn{
		r:        t.Reader,
		w:        t.Writer,
		arrive:   t.Arrive,
		incoming: make(chan jsonrpc.Message),
		closed:   make(chan struct{}),
		readDone: make(chan struct{}),
		batches:  map[jsonrpc.ID]*batch{},
	}
	go c.readLoop()
	return c, nil
}

// conn is one session's connection. Its read loop answers bad lines
// itself and hands good messages to Read; every write, the SDK's and its
// own, is one call to w under writeMu, so lines never interleave.
type conn struct {
	r      io.ReadCloser
	w      io.WriteCloser
	arrive func(jsonrpc.Message)

	incoming chan jsonrpc.Message
	readDone chan struct{} // closed when the read loop ends, after readErr is set
	readErr  error

	closeOnce sync.Once
	closed    chan struct{}

	writeMu sync.Mutex
	// initID is the id of the initialize request, whose reply names the
	// protocol version; version is that version once it has been sent.
	initID  jsonrpc.ID
	version string
	// batches maps the id of each unanswered call of a batch to its batch.
	batches map[jsonrpc.ID]*batch
}

// batch is a batch whose replies are being gathered into one array.
type batch struct {
	replies []json.RawMessage
	pending int
}

// readLoop reads lines until EOF or an error, answering or delivering
// each; a line may be any length.
func (c *conn) readLoop() {
	defer close(c.readDone)
	br := bufio.NewReader(c.r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if werr := c.take(line); werr != nil {
				c.readErr = werr
				return
			}
		}
		if err != nil {
			c.readErr = err
			return
		}
	}
}

// take answers or delivers one line. It fails when a reply cannot be
// written or the connection is closed.
func (c *conn) take(line []byte) error {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) > 0 && trimmed[0] == '[' && json.Valid(trimmed) {
		return c.takeBatch(trimmed)
	}
	msg, reply := decodeLine(trimmed)
	if reply != nil {
		return c.writeOwn(reply)
	}
	if msg != nil {
		return c.deliver(msg)
	}
	return nil
}

// takeBatch answers or delivers the members of a batch, gathering the
// replies to its calls into one array as JSON-RPC asks.
func (c *conn) takeBatch(line []byte) error {
	var members []json.RawMessage
	if err := json.Unmarshal(line, &members); err != nil || len(members) == 0 {
		return c.writeOwn(errorReply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch"))
	}
	c.writeMu.Lock()
	if c.version >= noBatchesSince {
		c.writeMu.Unlock()
		return c.writeOwn(errorReply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("Invalid Request: protocol version %s has no JSON-RPC batches", c.version)))
	}
	b := &batch{}
	var deliver []jsonrpc.Message
	for _, m := range members {
		msg, reply := decodeValue(m)
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if _, dup := c.batches[req.ID]; dup {
				msg, reply = nil, errorReply(req.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: the id is already in use")
			} else {
				c.batches[req.ID] = b
				b.pending++
			}
		}
		if reply != nil {
			data, err := encode(reply)
			if err != nil {
				c.writeMu.Unlock()
				return err
			}
			b.replies = append(b.replies, data)
		}
		if msg != nil {
			deliver = append(deliver, msg)
		}
	}
	var err error
	if b.pending == 0 && len(b.replies) > 0 {
		err = c.writeBatch(b)
	}
	c.writeMu.Unlock()
	if err != nil {
		return err
	}
	for _, msg := range deliver {
		if err := c.deliver(msg); err != nil {
			return err
		}
	}
	return nil
}

// deliver hands msg to Read.
func (c *conn) deliver(msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.IsCall() {
		c.writeMu.Lock()
		c.initID = req.ID
		c.writeMu.Unlock()
	}
	if c.arrive != nil {
		c.arrive(msg)
	}
	select {
	case c.incoming <- msg:
		return nil
	case <-c.closed:
		return mcp.ErrConnectionClosed
	}
}

// Read returns the next message, or io.EOF once the input has ended.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msg := <-c.incoming:
		return msg, nil
	case <-c.readDone:
		return nil, c.readErr
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write writes msg as one line, or, when it is the last reply a batch
// awaited, the batch's replies as one array.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := encode(msg)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.noteVersion(resp)
		if b, ok := c.batches[resp.ID]; ok {
			delete(c.batches, resp.ID)
			b.replies = append(b.replies, data)
			if b.pending--; b.pending > 0 {
				return nil
			}
			return c.writeBatch(b)
		}
	}
	return c.writeLine(data)
}

// writeOwn writes a reply of the connection's own.
func (c *conn) writeOwn(reply *jsonrpc.Response) error {
	data, err := encode(reply)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.writeLine(data)
}

// writeBatch writes a batch's replies as one array; writeMu is held.
func (c *conn) writeBatch(b *batch) error {
	data, err := json.Marshal(b.replies)
	if err != nil {
		return fmt.Errorf("encoding a batch reply: %w", err)
	}
	return c.writeLine(data)
}

// writeLine writes data and a newline in one call; writeMu is held.
func (c *conn) writeLine(data []byte) error {
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// noteVersion remembers the protocol version when resp answers the
// initialize request; writeMu is held.
func (c *conn) noteVersion(resp *jsonrpc.Response) {
	if !c.initID.IsValid() || resp.ID != c.initID || resp.Error != nil {
		return
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &r) == nil {
		c.version = r.ProtocolVersion
	}
}

// Close closes the reader and the writer; a Read waiting for input
// returns io.EOF.
func (c *conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = errors.Join(c.r.Close(), c.w.Close())
	})
	return err
}

// SessionID is empty: a stdio connection is the one session.
func (c *conn) SessionID() string { return "" }

// encode is the wire form of msg. Unlike the SDK's encoder it keeps a null
// id, which a reply to an unreadable request must carry.
func encode(msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if ok && resp.ID.IsValid() && resp.Error == nil {
		if data, ok := encodeResult(resp); ok {
			return data, nil
		}
	}
	if !ok || resp.ID.IsValid() {
		return jsonrpc.EncodeMessage(msg)
	}
	wire := struct {
		Version string          `json:"jsonrpc"`
		ID      any             `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   *jsonrpc.Error  `json:"error,omitempty"`
	}{Version: "2.0", Result: resp.Result}
	if resp.Error != nil {
		var we *jsonrpc.Error
		if !errors.As(resp.Error, &we) {
			we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError}
		}
		wire.Error = &jsonrpc.Error{Code: we.Code, Message: resp.Error.Error(), Data: we.Data}
	}
	data, err := json.Marshal(wire)
	if err != nil {
		return nil, fmt.Errorf("encoding a reply: %w", err)
	}
	return data, nil
}

// encodeResult is the wire form of a successful reply, the SDK's encoder's
// bytes made without its work: the SDK has already encoded the result as
// compact JSON, which its encoder would scan again only to copy it, a
// cost that grows with the reply (a listing of 1,000 panes). A result that
// holds a newline, or none at all, is left to the SDK's encoder.
func encodeResult(resp *jsonrpc.Response) ([]byte, bool) {
	if len(resp.Result) == 0 || bytes.IndexByte(resp.Result, '\n') >= 0 {
		return nil, false
	}
	var id bytes.Buffer
	enc := json.NewEncoder(&id)
	enc.SetEscapeHTML(false) // as the SDK encodes
	if err := enc.Encode(resp.ID.Raw()); err != nil {
		return nil, false
	}
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	idJSON := bytes.TrimRight(id.Bytes(), "\n")
	data := make([]byte, 0, len(head)+len(idJSON)+len(mid)+len(resp.Result)+1)
	data = append(data, head...)
	data = append(data, idJSON...)
	data = append(data, mid...)
	data = append(data, resp.Result...)
	return append(data, '}'), true
}
