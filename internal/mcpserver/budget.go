package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Budgets for what every conversation pays before its first call, at the
// default tier, measured as MeasureWire measures them.
const (
	// WireBudget bounds the tools/list responses as written on the wire
	// plus the instructions string.
	WireBudget = 32 << 10
	// ModelVisibleBudget bounds the part a model reads: for each tool the
	// compact JSON of {"name","description","input_schema"}, plus the
	// instructions string.
	ModelVisibleBudget = 16 << 10
)

// WireCost is what a client pays for tmcp's tools before its first call.
type WireCost struct {
	Tools         int // tools listed
	Instructions  int // bytes of the instructions string
	ToolsList     int // bytes of the tools/list responses as written, newline included, every page
	OutputSchemas int // bytes the output schemas take of ToolsList, each with its key
	ModelVisible  int // compact {"name","description","input_schema"} of every tool, plus Instructions
}

// Whole is the tools/list responses plus the instructions: what WireBudget bounds.
func (c WireCost) Whole() int { return c.ToolsList + c.Instructions }

// MeasureWire speaks newline-delimited JSON-RPC to an MCP server over its
// stdin (w) and stdout (r): it initializes a session, lists the tools
// (every page) and counts the bytes of the responses exactly as the
// server wrote them. The caller bounds the time it may take by closing r.
func MeasureWire(w io.Writer, r io.Reader) (WireCost, error) {
	var c WireCost
	rpc := &rawRPC{w: w, r: bufio.NewReader(r)}
	line, err := rpc.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "tmcp-wire", "version": "1"}})
	if err != nil {
		return c, err
	}
	var init struct {
		Result struct {
			Instructions string `json:"instructions"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &init); err != nil {
		return c, fmt.Errorf("decoding the initialize response: %w", err)
	}
	c.Instructions = len(init.Result.Instructions)
	c.ModelVisible = c.Instructions
	if err := rpc.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		return c, err
	}
	params := map[string]any{}
	for {
		line, err := rpc.call("tools/list", params)
		if err != nil {
			return c, err
		}
		c.ToolsList += len(line)
		var page struct {
			Result struct {
				Tools []struct {
					Name         string          `json:"name"`
					Description  string          `json:"description"`
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &page); err != nil {
			return c, fmt.Errorf("decoding the tools/list response: %w", err)
		}
		for _, t := range page.Result.Tools {
			c.Tools++
			visible, err := compactJSON(struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"input_schema"`
			}{t.Name, t.Description, t.InputSchema})
			if err != nil {
				return c, fmt.Errorf("tool %s: %w", t.Name, err)
			}
			c.ModelVisible += len(visible)
			if len(t.OutputSchema) > 0 {
				out, err := compactJSON(t.OutputSchema)
				if err != nil {
					return c, fmt.Errorf("tool %s: %w", t.Name, err)
				}
				c.OutputSchemas += len(`,"outputSchema":`) + len(out)
			}
		}
		if page.Result.NextCursor == "" {
			return c, nil
		}
		params = map[string]any{"cursor": page.Result.NextCursor}
	}
}

// compactJSON encodes v as compact UTF-8 JSON, without escaping <, > and &.
func compactJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// rawRPC is the client side of newline-delimited JSON-RPC 2.0 that keeps
// each response line as the server wrote it.
type rawRPC struct {
	w      io.Writer
	r      *bufio.Reader
	lastID int
}

// call sends a request and returns its response line, skipping any
// message in between (notifications, requests from the server).
func (c *rawRPC) call(method string, params any) ([]byte, error) {
	c.lastID++
	id := c.lastID
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the response to %s: %w", method, err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("reading the response to %s: %q is not JSON-RPC: %w", method, line, err)
		}
		switch {
		case m.ID == nil || *m.ID != id || m.Method != "":
		case m.Error != nil:
			return nil, fmt.Errorf("%s: %s", method, m.Error)
		default:
			return line, nil
		}
	}
}

func (c *rawRPC) send(msg map[string]any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing %v: %w", msg["method"], err)
	}
	return nil
}
