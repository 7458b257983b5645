package main

import (
	"bytes"
	"context"
	"fmt"
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
	// wholeListTarget and modelVisibleTarget are tmcp's own budgets at the
	// default tier, measured as mcpserver.MeasureWire measures them.
	wholeListTarget    = mcpserver.WireBudget
	modelVisibleTarget = mcpserver.ModelVisibleBudget
)

// toolSizes measures, for each tier, what a client pays for the tool
// list: the tools/list response as tmcp writes it plus the instructions,
// and the part a model reads.
func (b *bench) toolSizes(ctx context.Context) error {
	b.notes.ModelVisibleBytes = map[string]int{}
	for _, t := range []struct{ tier, label string }{
		{tierReadonly, rowToolsReadonly}, {tierMutating, rowToolsMutating}, {tierDestructive, rowToolsDestructive},
	} {
		c, err := toolListBytes(ctx, b.bin, b.srv, t.tier)
		if err != nil {
			return fmt.Errorf("TMCP_SAFETY=%s: %w", t.tier, err)
		}
		b.notes.ModelVisibleBytes[t.tier] = c.ModelVisible
		r := valueRow(t.label, unitBytes, 1, float64(c.Whole()), nil)
		if t.tier == tierMutating {
			r = r.withTarget(fmt.Sprintf("≤ 32 KiB (%d)", wholeListTarget), c.Whole() <= wholeListTarget)
			b.put(valueRow(rowModelVisible, unitBytes, 1, float64(c.ModelVisible), nil).
				withTarget(fmt.Sprintf("≤ 16 KiB (%d)", modelVisibleTarget), c.ModelVisible <= modelVisibleTarget))
			b.put(valueRow(rowWithoutOutputSchemas, unitBytes, 1, float64(c.Whole()-c.OutputSchemas), nil).
				withTarget(fmt.Sprintf("≤ 32 KiB (%d)", wholeListTarget), c.Whole()-c.OutputSchemas <= wholeListTarget))
		}
		b.put(r)
	}
	return nil
}

// toolListBytes starts tmcp at a tier and measures its tool list with
// mcpserver.MeasureWire, which reads the raw bytes tmcp writes.
func toolListBytes(ctx context.Context, bin string, srv *tmuxServer, tier string) (c mcpserver.WireCost, err error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	cmd := childCommand(ctx, append(srv.Env(), "TMCP_SAFETY="+tier), bin, "-socket-path", srv.Socket)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return c, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return c, err
	}
	if err := cmd.Start(); err != nil {
		return c, err
	}
	defer func() {
		stdin.Close()
		if werr := cmd.Wait(); err == nil && werr != nil {
			err = fmt.Errorf("tmcp: %w: %s", werr, strings.TrimSpace(stderr.String()))
		}
	}()
	return mcpserver.MeasureWire(stdin, stdout)
}
