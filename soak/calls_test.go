package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCallNamesTheKindOfEachErrorOnce checks the kind call records: from
// the facts for a hung or cancelled call, from the text for a tool error.
func TestCallNamesTheKindOfEachErrorOnce(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "test"}, nil)
	type none struct{}
	mcp.AddTool(server, &mcp.Tool{Name: "dead"}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, none, error) {
		return nil, none{}, errors.New("pane %1 is dead")
	})
	mcp.AddTool(server, &mcp.Tool{Name: "vague"}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, none, error) {
		return nil, none{}, errors.New("something went wrong: context canceled")
	})
	mcp.AddTool(server, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, none, error) {
		<-ctx.Done()
		return nil, none{}, ctx.Err()
	})
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	c := &caller{st: newStats(), hangGrace: 50 * time.Millisecond}
	c.cs.Store(cs)

	if r := c.call(ctx, "dead", "%1", nil, time.Second); r.Kind != errPaneDead || outcome(r) != "error:"+errPaneDead {
		t.Errorf("a tool error naming a dead pane: kind %q outcome %q (%s), want %s", r.Kind, outcome(r), r.Err, errPaneDead)
	}
	// Only the facts make a call cancelled, never a tool's words.
	if r := c.call(ctx, "vague", "", nil, time.Second); r.Kind != errUnnamed {
		t.Errorf("a tool error that says context canceled: kind %q, want %s", r.Kind, errUnnamed)
	}
	if r := c.call(ctx, "block", "", nil, 10*time.Millisecond); !r.Hung || r.Kind != errHung {
		t.Errorf("a call past its bound and grace: hung %v kind %q (%s), want hung", r.Hung, r.Kind, r.Err)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	if r := c.call(cctx, "block", "", nil, time.Second); r.Hung || r.Kind != errCancelled {
		t.Errorf("a call whose context was cancelled: hung %v kind %q (%s), want %s", r.Hung, r.Kind, r.Err, errCancelled)
	}
	if got := c.st.errKinds; got[errPaneDead] != 1 || got[errUnnamed] != 1 || got[errHung] != 1 || got[errCancelled] != 1 {
		t.Errorf("error kinds recorded: %v, want one of each", got)
	}
}

// TestEveryFailureIsWrittenAndTheSummaryKeepsTheFirst checks that the
// failures writer is told every failure, while the summary keeps the
// first maxFailuresKept.
func TestEveryFailureIsWrittenAndTheSummaryKeepsTheFirst(t *testing.T) {
	var all strings.Builder
	st := newStats()
	st.all = &all
	for i := range maxFailuresKept + 5 {
		st.fail("wrong", "call %d", i)
	}
	st.fail("kill", "late")
	if got := strings.Count(all.String(), "\n"); got != maxFailuresKept+6 {
		t.Errorf("%d failures written, want %d", got, maxFailuresKept+6)
	}
	if !strings.Contains(all.String(), "[kill] late\n") {
		t.Errorf("the last failure is not written: %q", all.String()[max(0, all.Len()-100):])
	}
	var sum strings.Builder
	st.writeFailures(&sum)
	if want := fmt.Sprintf("failures    %d (first %d shown)", maxFailuresKept+6, maxFailuresKept); !strings.Contains(sum.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, sum.String())
	}
}
