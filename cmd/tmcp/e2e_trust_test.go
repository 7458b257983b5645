package main

// End-to-end tests of what tmcp believes of a pane: only the marks its
// shell wrote with the shell's nonce, never marks a program printed.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	panes "github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// printedMarks is a command that prints every mark tmcp reads — the
// semantic prompt marks with no nonce and with a guessed one, a job's end
// mark with a made-up token, a working directory (OSC 7, and as tmcp
// init gives it), a title (OSC 0) — then a line, and fails: believed, the
// marks would end the run early with status 0 and no output, or make a
// plain shell pass for one that marks its prompts.
const printedMarks = `printf '\033]133;A\007\033]133;B\007\033]133;C\007\033]133;D;0\007` +
	`\033]7;file://evil/etc\007\033]0;spoofed\007` +
	`\033]133;D;0;tmcp_n=guess\007\033]133;A;tmcp_cwd=file://evil/etc;tmcp_n=guess\007\033]133;B;tmcp_n=guess\007` +
	`\033]133;E;0;tmcp-00000\007\033]133;E;0;tmcp-00000:0000000000000000\007'; echo printed; false`

// TestMarksAProgramPrintsChangeNothingInEveryShell runs printedMarks in
// every shell, with and without tmcp's integration, then three more
// commands: each run's status and output are exact, as if the marks had
// been text, and list_panes says of the shell what it said before.
func TestMarksAProgramPrintsChangeNothingInEveryShell(t *testing.T) {
	everyShell(t, func(t *testing.T, shell, name string, integrated bool) {
		srv := tmuxtest.New(t)
		var pane string
		if integrated {
			pane = integratedPane(t, srv, shell, "")
			waitPane(t, srv, pane, "#{?#{@tmcp_marks},set,}", "set")
		} else {
			home := t.TempDir()
			pane = newWindow(srv, "env HOME="+home+" HISTFILE="+filepath.Join(home, "hist")+" "+strings.TrimPrefix(plainShells[shell], "env "))
			waitPrompt(t, srv, pane)
		}
		s := startTMCP(t, srv, "")
		run := func(command, wantStatus, wantText string) {
			t.Helper()
			r, text := s.runCmd(map[string]any{"paneId": pane, "command": command, "timeoutSeconds": 15})
			if status(r.ExitStatus) != wantStatus || text != wantText || r.TimedOut {
				t.Fatalf("%s: run_command %.60q: %+v output %q, want %s and %q", name, command, r, text, wantStatus, wantText)
			}
		}
		run("echo first", "0", "first")
		// The shell's next prompt, and its directory, come just
		// after the run's end.
		var before *shellOut
		tmuxtest.WaitFor(settle, func() bool { before = listedShell(s, pane); return !integrated || before != nil && before.Cwd != "" })
		if integrated != (before != nil && before.Cwd != "") {
			t.Fatalf("%s: list_panes shell state %+v before the marks are printed", name, before)
		}
		run(printedMarks, "1", "printed")
		run("echo next", "0", "next")
		run("echo two", "0", "two")
		run("printf '%s\\n' three", "0", "three")
		var after *shellOut
		tmuxtest.WaitFor(settle, func() bool { after = listedShell(s, pane); return !integrated || after != nil && after.Cwd != "" })
		switch {
		case !integrated && after != nil:
			t.Errorf("%s: list_panes shell state %+v from marks a program printed, want none", name, after)
		case integrated && (after == nil || after.State != "prompt" || status(after.LastStatus) != "0" || after.Cwd != before.Cwd):
			t.Errorf("%s: list_panes shell state %+v after the printed marks, want at the prompt, status 0, cwd %q", name, after, before.Cwd)
		}
	})
}

// TestTheShellsNonceReachesNoReplyAndNoAuditLine drives a pane whose
// shell loaded tmcp init with every tool that reads it, and looks for the
// shell's nonce, which each of its marks carries, in every reply and in
// the audit log: it is in none.
func TestTheShellsNonceReachesNoReplyAndNoAuditLine(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			needShell(t, shell)
			t.Parallel()
			srv := tmuxtest.New(t)
			pane := integratedPane(t, srv, shell, "")
			var nonce string
			if !tmuxtest.WaitFor(settle, func() bool {
				_, _, nonce, _ = panes.ParseShellMarks(strings.TrimSpace(srv.Must("display", "-p", "-t", pane, "#{@tmcp_marks}")))
				return nonce != ""
			}) {
				t.Fatal("the shell never named its nonce in the pane's option")
			}
			audit := filepath.Join(t.TempDir(), "audit.jsonl")
			s := startTMCPWithEnv(t, srv, "mutating", []string{"TMCP_AUDIT=" + audit})
			var replies []string
			keep := func(r *mcp.CallToolResult) {
				b, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				replies = append(replies, string(b))
			}
			since, _ := s.since(map[string]any{"paneId": pane})
			keep(s.call("run_command", map[string]any{"paneId": pane, "command": "echo one", "timeoutSeconds": 10}))
			keep(s.call("send_keys", map[string]any{"paneId": pane, "keys": "cd /tmp && echo two"}))
			keep(s.call("wait_for_command", map[string]any{"paneId": pane, "cursor": since.Cursor, "timeoutSeconds": 10}))
			keep(s.call("wait_for_text", map[string]any{"paneId": pane, "cursor": since.Cursor, "patterns": []string{"two"}, "timeoutSeconds": 10}))
			keep(s.call("capture_since", map[string]any{"paneId": pane, "cursor": since.Cursor}))
			keep(s.call("capture_pane", map[string]any{"paneId": pane, "styles": true}))
			keep(s.call("list_panes", nil))
			keep(s.call("get_pane_info", map[string]any{"paneId": pane}))
			keep(s.call("search_panes", map[string]any{"pattern": "two"}))
			for i, r := range replies {
				if strings.Contains(r, nonce) {
					t.Errorf("reply %d holds the shell's nonce: %s", i, r)
				}
			}
			if !strings.Contains(strings.Join(replies, "\n"), "two") {
				t.Errorf("no reply shows the pane's output: %s", strings.Join(replies, "\n"))
			}
			if data, err := os.ReadFile(audit); err != nil || strings.Contains(string(data), nonce) {
				t.Errorf("the audit log (%v) holds the shell's nonce:\n%s", err, data)
			}
		})
	}
}
