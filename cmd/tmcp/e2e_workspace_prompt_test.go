package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// TestBuildWorkspaceTypesCommandsAfterTheFirstPrompt builds workspaces
// whose shells print a line, then take a second before their first prompt
// (their ENV file sleeps). Each pane's command must be typed after its
// prompt: the screen shows the prompt and the command on one row, then
// the command's output, and never the command echoed ahead of the prompt.
// The prompt is sh's own, or one that does not look like a prompt but
// carries a semantic prompt mark (OSC 133 A), as shell integration emits.
func TestBuildWorkspaceTypesCommandsAfterTheFirstPrompt(t *testing.T) {
	cases := []struct {
		name, rc string
		prompt   func(string) bool // the row's text ahead of the command
	}{
		{"sh's prompt", "echo loading-rc\nsleep 1\n",
			func(p string) bool { return strings.HasSuffix(p, "$") || strings.HasSuffix(p, "#") }},
		{"a marked prompt", "echo loading-rc\nsleep 1\nPS1=\"$(printf '\\033]133;A\\007')ready:\"\n",
			func(p string) bool { return p == "ready:" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := tmuxtest.New(t)
			rc := filepath.Join(t.TempDir(), "slow-rc")
			if err := os.WriteFile(rc, []byte(c.rc), 0o644); err != nil {
				t.Fatal(err)
			}
			doc := fmt.Sprintf("session_name: slow\nenvironment:\n  ENV: %s\nwindows:\n  - panes:\n      - echo first-$((1+1))\n      - echo second-$((1+2))\n", rc)
			s := startTMCP(t, srv, "")
			var out workspaceReply
			s.ok("build_workspace", map[string]any{"yaml": doc}, &out)
			if len(out.Windows) != 1 || len(out.Windows[0].Panes) != 2 {
				t.Fatalf("build_workspace: %+v, want one window of two panes", out)
			}
			for i, pane := range out.Windows[0].Panes {
				word := []string{"first", "second"}[i]
				command, output := fmt.Sprintf("echo %s-$((1+%d))", word, i+1), fmt.Sprintf("%s-%d", word, i+2)
				waitScreen(t, srv, pane, "the command's output on a row of its own", func(l []string) bool { return hasLine(l, output) })
				lines := bareCapture(srv, pane)
				screen := strings.Join(lines, "\n")
				typed := -1
				for j, l := range lines {
					if strings.HasSuffix(strings.TrimRight(l, " "), command) {
						typed = j
						break
					}
				}
				if typed < 0 {
					t.Errorf("pane %s: no row shows the command %q:\n%s", pane, command, screen)
					continue
				}
				if prompt := strings.TrimSpace(strings.TrimSuffix(strings.TrimRight(lines[typed], " "), command)); !c.prompt(prompt) {
					t.Errorf("pane %s: the command was echoed ahead of the shell's prompt (row %q):\n%s", pane, lines[typed], screen)
				}
				if typed+1 >= len(lines) || strings.TrimRight(lines[typed+1], " ") != output {
					t.Errorf("pane %s: the row after the command is not its output %q alone:\n%s", pane, output, screen)
				}
				if !hasLine(lines, "loading-rc") {
					t.Errorf("pane %s: the ENV file did not run (no loading-rc row), so nothing delayed the prompt:\n%s", pane, screen)
				}
			}
		})
	}
}

// TestBuildWorkspaceFailsWhenAShellShowsNoPromptInTime builds a workspace
// whose shell sleeps past the call's budget before its prompt: the call
// fails naming the pane, types nothing, and removes the session.
func TestBuildWorkspaceFailsWhenAShellShowsNoPromptInTime(t *testing.T) {
	srv := tmuxtest.New(t)
	rc := filepath.Join(t.TempDir(), "stuck-rc")
	if err := os.WriteFile(rc, []byte("sleep 60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startTMCP(t, srv, "")
	doc := fmt.Sprintf("session_name: stuck\nenvironment:\n  ENV: %s\nwindows:\n  - panes: [echo never-typed]\n", rc)
	msg := s.fail("build_workspace", map[string]any{"yaml": doc})
	for _, w := range []string{"first prompt of pane %", "its commands were not typed", "the partly built session was removed"} {
		if !strings.Contains(msg, w) {
			t.Errorf("%q, want it to say %q", msg, w)
		}
	}
	if got := sessionNames(srv); !slices.Equal(got, []string{"main"}) {
		t.Errorf("sessions after a build whose shell showed no prompt: %v, want main alone", got)
	}
}
