package main

import (
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// floodThenMark floods a pane with 60 MB of x on one line, then writes
// FLOOD-END on a line of its own: far faster than anyone reads.
const floodThenMark = "head -c 60000000 /dev/zero | tr '\\0' x; echo; echo FLOOD-END"

func TestAWatchedFloodIsFollowedThroughTheHistory(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	s := startTMCP(t, srv, "")
	before, _ := s.since(map[string]any{"paneId": pane})
	ch := s.async("wait_for_text", map[string]any{"paneId": pane, "patterns": []string{"^FLOOD-END$"}, "regex": true, "timeoutSeconds": 40})
	srv.Must("send-keys", "-t", pane, floodThenMark, "Enter")
	r, _ := decodeText[waitTextOut](t, "wait_for_text", awaitCall(t, "wait_for_text", ch).res)
	if r.Outcome != "matched" || r.Matched != "FLOOD-END" || !strings.Contains(r.Reason, "flooded") {
		t.Fatalf("wait_for_text on a 60 MB flood: outcome %s matched %q reason %q; want FLOOD-END matched, the flood followed through the history", r.Outcome, r.Matched, r.Reason)
	}

	// What scrolled past between two looks is counted, never silently gone.
	lost, text := s.sinceLoss(map[string]any{"cursor": before.Cursor, "maxLines": 3})
	if !lost.OutputLost || !strings.Contains(text, "FLOOD-END") {
		t.Errorf("capture_since across the flood: outputLost %v text %s; want output lost counted, and FLOOD-END", lost.OutputLost, describe(text))
	}

	// After the flood, what the pane writes reaches the cursor whole.
	waitPrompt(t, srv, pane)
	after, _ := s.since(map[string]any{"paneId": pane})
	srv.Must("send-keys", "-t", pane, "seq 1 3 | sed s/^/after-/", "Enter")
	// Until the pane is calm the rows come from the history, up to a look
	// (40 ms) after the screen shows them: wait for the last through tmcp.
	if r, _ := s.waitText(map[string]any{"paneId": pane, "cursor": after.Cursor, "patterns": []string{"^after-3$"}, "regex": true, "timeoutSeconds": 10}); r.Outcome != "matched" {
		t.Fatalf("wait_for_text for after-3 after the flood: %s (%s)", r.Outcome, r.Reason)
	}
	calm, text := s.sinceLoss(map[string]any{"cursor": after.Cursor})
	if calm.OutputLost || !strings.Contains(text, "after-1\nafter-2\nafter-3") {
		t.Errorf("capture_since after the flood: outputLost %v text %s; want after-1 to after-3, nothing lost", calm.OutputLost, describe(text))
	}
}

func TestAJobThatFloodsItsPaneKeepsEveryByte(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	s := startTMCP(t, srv, "")
	const bytes = 30000000
	r, text := s.runCmd(map[string]any{"paneId": pane, "command": "head -c 30000000 /dev/zero | tr '\\0' x; echo; echo job-end",
		"timeoutSeconds": 40, "maxLines": 1})
	if !r.Finished || status(r.ExitStatus) != "0" || r.OutputLost || text != "job-end" || r.TotalBytes < bytes {
		t.Fatalf("run_command of a 30 MB flood: finished %v status %s lost %v totalBytes %d last %s; want every byte taken, status 0, job-end",
			r.Finished, status(r.ExitStatus), r.OutputLost, r.TotalBytes, describe(text))
	}
}

func TestABusyLogIsFollowedByteForByte(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	s := startTMCP(t, srv, "")
	before, _ := s.since(map[string]any{"paneId": pane})
	ch := s.async("wait_for_text", map[string]any{"paneId": pane, "patterns": []string{"^LOG-END$"}, "regex": true, "timeoutSeconds": 30})
	// 1,000 lines of 100 bytes every 0.1 s for 3 s: about 1 MB/s, a busy build.
	srv.Must("send-keys", "-t", pane, "for i in $(seq 1 30); do head -c 99000 /dev/zero | tr '\\0' y | fold -w 99; echo; sleep 0.1; done; echo LOG-END", "Enter")
	r, _ := decodeText[waitTextOut](t, "wait_for_text", awaitCall(t, "wait_for_text", ch).res)
	if r.Outcome != "matched" || strings.Contains(r.Reason, "flooded") {
		t.Fatalf("wait_for_text on a 1 MB/s log: outcome %s reason %q; want matched, byte for byte", r.Outcome, r.Reason)
	}
	// 3 MB is past the ring: the bytes it no longer holds are counted
	// apart (missedBytes); none was skipped or dropped by tmux.
	got, _ := s.sinceLoss(map[string]any{"cursor": before.Cursor, "maxLines": 1})
	if got.OutputLost || got.MissedBytes+int64(got.DroppedLines+1)*100 < 3000000 {
		t.Errorf("capture_since across the log: outputLost %v, %d lines dropped from the reply, %d bytes missed; want nothing lost, 3 MB of lines in all", got.OutputLost, got.DroppedLines, got.MissedBytes)
	}
}
