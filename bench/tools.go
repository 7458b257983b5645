package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tmcp/tmcp/internal/mcpserver"
)

// Safety tiers, as TMCP_SAFETY takes them.
const (
	tierReadonly    = "readonly"
	tierMutating    = "mutating"
	tierDestructive = "destructive"
)

const (
	// toolsProtocolVersion is the MCP version the tool-list client asks for.
	toolsProtocolVersion = "2025-11-25"
	// wholeListTarget and modelVisibleTarget are tmcp's own budgets at the
	// default tier: the whole tools/list plus instructions, and the part a
	// model reads (names, descriptions, input schemas, instructions).
	wholeListTarget    = mcpserver.WireBudget
	modelVisibleTarget = mcpserver.ModelVisibleBudget
)

// toolSizes measures, for each tier, the bytes of the tools/list result
// plus the instructions of the initialize result, as tmcp writes them.
func (b *bench) toolSizes(ctx context.Context) error {
	b.notes.ModelVisibleBytes = map[string]int{}
	for _, t := range []struct{ tier, label string }{
		{tierReadonly, rowToolsReadonly}, {tierMutating, rowToolsMutating}, {tierDestructive, rowToolsDestructive},
	} {
		whole, visible, outputs, err := toolListBytes(ctx, b.bin, b.srv, t.tier)
		if err != nil {
			return fmt.Errorf("TMCP_SAFETY=%s: %w", t.tier, err)
		}
		b.notes.ModelVisibleBytes[t.tier] = visible
		r := valueRow(t.label, unitBytes, 1, float64(whole), nil)
		if t.tier == tierMutating {
			r = r.withTarget(fmt.Sprintf("≤ 24 KB (%d)", wholeListTarget), whole <= wholeListTarget)
			b.put(valueRow(rowModelVisible, unitBytes, 1, float64(visible), nil).
				withTarget(fmt.Sprintf("≤ 16 KB (%d)", modelVisibleTarget), visible <= modelVisibleTarget))
			b.put(valueRow(rowWithoutOutputSchemas, unitBytes, 1, float64(whole-outputs), nil).
				withTarget(fmt.Sprintf("≤ 24 KB (%d)", wholeListTarget), whole-outputs <= wholeListTarget))
		}
		b.put(r)
	}
	return nil
}

// toolListBytes starts tmcp at a tier and speaks JSON-RPC to it by hand,
// so that what is counted is exactly what tmcp wrote: the raw tools/list
// result (every page) plus the instructions text. visible is the part a
// model reads: each tool's name, description and input schema, and the
// instructions. outputs is what the output schemas take, with their keys.
func toolListBytes(ctx context.Context, bin string, srv *tmuxServer, tier string) (whole, visible, outputs int, err error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	cmd := childCommand(ctx, append(srv.Env(), "TMCP_SAFETY="+tier), bin, "-socket-path", srv.Socket)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		stdin.Close()
		if werr := cmd.Wait(); err == nil && werr != nil {
			err = fmt.Errorf("tmcp: %w: %s", werr, strings.TrimSpace(stderr.String()))
		}
	}()
	rpc := &jsonRPC{w: stdin, dec: json.NewDecoder(stdout)}
	init, err := rpc.call("initialize", map[string]any{"protocolVersion": toolsProtocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "tmcp-bench", "version": "1"}})
	if err != nil {
		return 0, 0, 0, err
	}
	var ir struct {
		Instructions string `json:"instructions"`
	}
	if err := json.Unmarshal(init, &ir); err != nil {
		return 0, 0, 0, err
	}
	if err := rpc.notify("notifications/initialized"); err != nil {
		return 0, 0, 0, err
	}
	whole, visible = len(ir.Instructions), len(ir.Instructions)
	params := map[string]any{}
	for {
		page, err := rpc.call("tools/list", params)
		if err != nil {
			return 0, 0, 0, err
		}
		whole += len(page)
		var lr struct {
			Tools []struct {
				Name         string          `json:"name"`
				Description  string          `json:"description"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(page, &lr); err != nil {
			return 0, 0, 0, err
		}
		for _, t := range lr.Tools {
			var schema bytes.Buffer
			if err := json.Compact(&schema, t.InputSchema); err != nil {
				return 0, 0, 0, err
			}
			visible += len(t.Name) + len(t.Description) + schema.Len()
			if len(t.OutputSchema) > 0 {
				schema.Reset()
				if err := json.Compact(&schema, t.OutputSchema); err != nil {
					return 0, 0, 0, err
				}
				outputs += len(`,"outputSchema":`) + schema.Len()
			}
		}
		if lr.NextCursor == "" {
			return whole, visible, outputs, nil
		}
		params = map[string]any{"cursor": lr.NextCursor}
	}
}

// jsonRPC is the client side of newline-delimited JSON-RPC 2.0.
type jsonRPC struct {
	w      io.Writer
	dec    *json.Decoder
	lastID int
}

// call sends a request and returns the raw result of its response,
// skipping any message in between.
func (c *jsonRPC) call(method string, params any) (json.RawMessage, error) {
	c.lastID++
	id := c.lastID
	if err := c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := c.dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("reading the answer to %s: %w", method, err)
		}
		switch {
		case m.ID == nil || *m.ID != id:
		case m.Error != nil:
			return nil, fmt.Errorf("%s: error %d: %s", method, m.Error.Code, m.Error.Message)
		default:
			return m.Result, nil
		}
	}
}

// notify sends a notification.
func (c *jsonRPC) notify(method string) error {
	return c.write(map[string]any{"jsonrpc": "2.0", "method": method})
}

func (c *jsonRPC) write(msg map[string]any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = c.w.Write(append(b, '\n'))
	return err
}
