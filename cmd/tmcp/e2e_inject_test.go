package main

// End-to-end tests of the shell integration tmcp injects into the bash,
// zsh and fish shells of the panes it makes, over stdio against a private
// tmux server per test, each shell in a home of the test's whose own
// start-up files set a variable, a prompt and a history file.

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// personsShell is a shell and the start-up files of the person using it.
type personsShell struct {
	name     string
	files    map[string]string // in the home
	history  string            // the history file their files name
	login    string            // prints "login" in a login shell
	plain    string            // prints "plain" where no integration is loaded
	leftOver string            // prints the variables tmcp set that the shell should not keep
}

// personsShells: bash reads the login files (a login shell, as tmux starts
// it); zsh's .zshenv moves its ZDOTDIR, where the rest are; fish's
// config.fish sets its prompt and history name.
var personsShells = []personsShell{
	{
		name: "bash",
		files: map[string]string{
			".bash_profile": "MYVAR=person-profile\nPS1='mine$ '\nHISTFILE=~/my_history\nPROMPT_COMMAND='history -a'\n",
			".bashrc":       "MYVAR=person-bashrc-read-by-a-login-shell\n",
		},
		history:  "my_history",
		login:    `shopt -q login_shell && echo login; echo "$0"`,
		plain:    `echo "${__tmcp_n:-plain}"`,
		leftOver: `env | grep -E '^(TMCP_|POSIXLY_CORRECT=|ENV=)' | cut -d= -f1; shopt -o posix | tr -s ' \t' ' '`,
	},
	{
		name: "zsh",
		files: map[string]string{
			".zshenv":        "ZDOTDIR=~/zdot\n",
			"zdot/.zprofile": "MYPROFILE=read\n",
			"zdot/.zshrc":    "MYVAR=person-zshrc-$MYPROFILE\nPS1='mine$ '\nHISTFILE=$ZDOTDIR/my_history\nSAVEHIST=100 HISTSIZE=100\nsetopt INC_APPEND_HISTORY\n",
		},
		history:  "zdot/my_history",
		login:    `[[ -o login ]] && echo login; echo "$0"`,
		plain:    `echo "${__tmcp_n:-plain}"`,
		leftOver: `env | grep -E '^(TMCP_|ZDOTDIR=)' | cut -d= -f1; echo "zdotdir ${ZDOTDIR#$HOME/}"`,
	},
	{
		name: "fish",
		files: map[string]string{
			".config/fish/config.fish": "set -g MYVAR person-config\nset -g fish_history mine\nfunction fish_prompt; printf 'mine$ '; end\n",
			// There: fish does not make them in the background on its first
			// start, into a home the test removes.
			".local/share/fish/generated_completions/.keep": "",
		},
		history:  ".local/share/fish/mine_history",
		login:    `status is-login; and echo login`,
		plain:    `set -q __tmcp_n; and echo marked; or echo plain`,
		leftOver: `env | string match -r '^(?:TMCP_|XDG_DATA_DIRS=)[^=]*' ; true`,
	},
}

// personsServer starts a test server whose new panes run sh.name as their
// default shell, in a home holding the person's files, and none of the
// test's own environment that would point the shell elsewhere.
func personsServer(t *testing.T, sh personsShell) (*tmuxtest.Server, string) {
	t.Helper()
	path, err := exec.LookPath(sh.name)
	if err != nil {
		t.Fatalf("%s is not installed: scripts/install-deps.sh installs it", sh.name)
	}
	srv := tmuxtest.New(t)
	home := t.TempDir()
	for name, text := range sh.files {
		file := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv.Must("set-option", "-g", "default-shell", path)
	srv.Must("set-environment", "-g", "HOME", home)
	for _, name := range []string{"ZDOTDIR", "ENV", "BASH_ENV", "POSIXLY_CORRECT", "XDG_DATA_DIRS", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "HISTFILE"} {
		srv.Must("set-environment", "-g", "-r", name)
	}
	return srv, home
}

// TestTmcpStartsItsShellsWithTheIntegrationLoaded: a pane tmcp makes with
// no command (a session, a window, a split, a respawned pane) runs the
// person's shell as tmux would, a login shell that read their own files
// (their variable, their prompt, their history file), with tmcp's
// integration loaded: the first run_command, made at once, is typed as
// the command alone, and nothing of tmcp's reaches the screen, the
// environment or the history. With TMCP_SHELL_INTEGRATION=off the same
// shell comes plain, and the first run takes tmcp's wrapper.
func TestTmcpStartsItsShellsWithTheIntegrationLoaded(t *testing.T) {
	for _, sh := range personsShells {
		for _, off := range []bool{false, true} {
			name := sh.name + map[bool]string{false: "", true: " opted out"}[off]
			t.Run(name, func(t *testing.T) {
				srv, home := personsServer(t, sh)
				var s *session
				if off {
					s = startTMCPWithEnv(t, srv, "destructive", []string{"TMCP_SHELL_INTEGRATION=off"})
				} else {
					s = startTMCP(t, srv, "destructive")
				}
				run := func(pane, command string) string {
					t.Helper()
					r, text := s.runCmd(map[string]any{"paneId": pane, "command": command, "timeoutSeconds": 15})
					if !r.Finished {
						t.Fatalf("%s pane %s: run_command %q: %+v; screen %q", name, pane, command, r, bareCapture(srv, pane))
					}
					return text
				}
				// The typed line of a command run alone: the person's prompt
				// and the command, and fish's space.
				alone := func(pane, command string) {
					t.Helper()
					screen := bareCapture(srv, pane)
					if slices.ContainsFunc(screen, func(l string) bool { return strings.Contains(l, "__tmcp") }) ||
						!slices.ContainsFunc(screen, func(l string) bool { return strings.TrimRight(l, " ") == "mine$ "+command }) {
						t.Errorf("%s pane %s: %q not typed alone at the person's prompt: %q", name, pane, command, screen)
					}
				}

				var made []string
				var c createdOut
				s.ok("create_session", map[string]any{"name": "made"}, &c)
				made = append(made, c.PaneID)
				s.ok("create_window", map[string]any{"sessionName": "main"}, &c)
				made = append(made, c.PaneID)
				s.ok("split_window", map[string]any{"paneId": c.PaneID}, &c)
				made = append(made, c.PaneID)
				// A workspace: two windows, the first split, one pane typing a
				// command at its shell's first prompt, and an environment of its
				// own, which stays the session's.
				var ws struct {
					Windows []struct {
						Panes []string `json:"panes"`
					} `json:"windows"`
				}
				s.ok("build_workspace", map[string]any{"yaml": "session_name: ws\nenvironment:\n  WS_VAR: ws-value\nwindows:\n" +
					"  - window_name: a\n    panes:\n      - echo typed-$WS_VAR\n      - \n  - window_name: b\n    panes:\n      - \n"}, &ws)
				for _, w := range ws.Windows {
					made = append(made, w.Panes...)
				}
				if len(made) != 6 {
					t.Fatalf("%s: the workspace's panes: %+v", name, ws)
				}
				for i, pane := range made {
					if i == 1 {
						s.ok("respawn_pane", map[string]any{"paneId": pane}, nil)
					}
					// The first run, at once: the shell may not have drawn its
					// prompt yet.
					want := map[string]string{"bash": "person-profile", "zsh": "person-zshrc-read", "fish": "person-config"}[sh.name]
					if got := run(pane, "echo $MYVAR"); got != want {
						t.Fatalf("%s pane %s: the person's variable is %q, want %q: their files were not read", name, pane, got, want)
					}
					if !off {
						alone(pane, "echo $MYVAR")
					} else if screen := bareCapture(srv, pane); !slices.ContainsFunc(screen, func(l string) bool { return strings.Contains(l, "__tmcp") }) {
						t.Errorf("%s pane %s: the first run in a plain shell shows no wrapper: %q", name, pane, screen)
					}
				}
				if env := srv.Must("show-environment", "-t", "ws"); !strings.Contains(env, "WS_VAR=ws-value") || strings.Contains(env, "TMCP_") {
					t.Errorf("%s: the workspace session's environment: %q, want its own WS_VAR and nothing of tmcp's", name, env)
				}
				pane := made[0]
				wantLogin := map[string]string{"bash": "login\n-bash", "zsh": "login\n-zsh", "fish": "login"}[sh.name]
				if got := run(pane, sh.login); got != wantLogin {
					t.Errorf("%s pane %s: %q, want %q: a login shell, as tmux starts it", name, pane, got, wantLogin)
				}
				if !off {
					// The history is where the person's files said, and holds
					// their commands only.
					file := filepath.Join(home, sh.history)
					var kept string
					if !tmuxtest.WaitFor(settle, func() bool {
						b, _ := os.ReadFile(file)
						kept = string(b)
						return strings.Contains(kept, "echo $MYVAR")
					}) {
						t.Fatalf("%s: the history file %s lacks the commands run: %q", name, file, kept)
					}
					if strings.Contains(strings.ToLower(kept), "tmcp") {
						t.Errorf("%s: the history holds tmcp's text:\n%s", name, kept)
					}
				}
				wantLeft := map[string]string{"bash": "posix off", "zsh": "zdotdir zdot", "fish": ""}[sh.name]
				if got := run(pane, sh.leftOver); got != wantLeft {
					t.Errorf("%s pane %s: %q shows %q, want %q: tmcp's variables gone, the person's back", name, pane, sh.leftOver, got, wantLeft)
				}
				if got := run(pane, sh.plain); (got == "plain") != off || got == "" {
					t.Errorf("%s pane %s: %q shows %q, want %s", name, pane, sh.plain, got, map[bool]string{false: "the integration loaded", true: "plain"}[off])
				}
			})
		}
	}
}
