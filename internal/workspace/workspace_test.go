package workspace

import (
	"github.com/tmcp/tmcp/internal/tmux"
	"reflect"
	"strings"
	"testing"
)

func TestParseReadsATmuxpDocumentIntoAPlan(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want Plan
		dirs []Dir
	}{
		{
			name: "the smallest document",
			doc:  "session_name: s\nwindows:\n  - window_name: w\n",
			want: Plan{Session: "s", Windows: []Window{{Name: "w", Panes: []Pane{{}}}}},
		},
		{
			name: "windows, layouts, directories, commands and environment",
			doc: `session_name: dev
start_directory: /srv
environment:
  EDITOR: vi
  LEVEL: 3
shell_command_before: cd .
windows:
  - window_name: edit
    layout: main-vertical
    start_directory: app
    shell_command_before:
      - export A=1
    panes:
      - vi
      -
      - shell_command: [make, make test]
        start_directory: /tmp
        focus: true
  - window_name: logs
    focus: true
    panes:
      - shell_command: tail -f log
        start_directory: ~/logs
`,
			want: Plan{Session: "dev", dir: "/srv", Environment: []string{"EDITOR=vi", "LEVEL=3"}, Windows: []Window{
				{Name: "edit", Layout: "main-vertical", Named: true, Panes: []Pane{
					{Dir: "/srv/app", Commands: []string{"cd .", "export A=1", "vi"}},
					{Dir: "/srv/app", Commands: []string{"cd .", "export A=1"}},
					{Dir: "/tmp", Commands: []string{"cd .", "export A=1", "make", "make test"}, Focus: true},
				}},
				{Name: "logs", Focus: true, Panes: []Pane{{Dir: "/home/u/logs", Commands: []string{"cd .", "tail -f log"}}}},
			}},
			dirs: []Dir{{"/srv", 2}, {"/srv/app", 10}, {"/tmp", 17}, {"/home/u/logs", 23}},
		},
		{
			name: "a layout string and an alias",
			doc: `session_name: s
windows:
  - window_name: a
    layout: 020a,80x24,0,0{40x24,0,0,1,39x24,41,0,2}
    panes: &two [top, "", ]
  - window_name: b
    panes: *two
`,
			want: Plan{Session: "s", Windows: []Window{
				{Name: "a", Layout: "020a,80x24,0,0{40x24,0,0,1,39x24,41,0,2}", Panes: []Pane{{Commands: []string{"top"}}, {}}},
				{Name: "b", Panes: []Pane{{Commands: []string{"top"}}, {}}},
			}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse([]byte(c.doc), "/home/u", tmux.CheckLayout)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			dirs := got.Dirs()
			got.dirs = nil
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Parse:\n got %+v\nwant %+v", got, c.want)
			}
			if !reflect.DeepEqual(dirs, c.dirs) {
				t.Errorf("Dirs: %v, want %v", dirs, c.dirs)
			}
		})
	}
}

func TestParseNamesTheLineOfEachProblem(t *testing.T) {
	many := "session_name: s\nwindows:\n" + strings.Repeat("  - window_name: w\n", MaxWindows+1)
	manyPanes := "session_name: s\nwindows:\n  - panes:\n" + strings.Repeat("      - x\n", MaxPanesPerWindow+1)
	cases := []struct {
		name, doc, want string
	}{
		{"empty", "", "the document is empty"},
		{"not yaml", "session_name: s\nwindows: [\n", "line 2: did not find expected node content"},
		{"a tab", "session_name: s\nwindows:\n\t- window_name: a\n", "line 3: found character that cannot start any token"},
		{"not a mapping", "- a\n- b\n", "line 1: the document must be a mapping"},
		{"no session_name", "windows:\n  - window_name: a\n", "line 1: session_name is missing"},
		{"session_name with a colon", "session_name: a:b\nwindows: [{}]\n", `line 1: session_name "a:b"`},
		{"session_name a list", "session_name: [a]\nwindows: [{}]\n", "line 1: session_name must be a string"},
		{"no windows", "session_name: s\n", "line 1: windows is missing"},
		{"windows empty", "session_name: s\nwindows: []\n", "line 2: windows must be a list of at least one window"},
		{"unknown session key", "session_name: s\noptions: {}\nwindows: [{}]\n", `line 2: "options" is not supported in the document`},
		{"unknown window key", "session_name: s\nwindows:\n  - window_name: a\n    window_index: 3\n", `line 4: "window_index" is not supported in window "a"`},
		{"unknown pane key", "session_name: s\nwindows:\n  - panes:\n      - shell_command: x\n        cmd: y\n", `line 5: "cmd" is not supported in a pane of window 0`},
		{"key twice", "session_name: s\nsession_name: t\nwindows: [{}]\n", `line 2: "session_name" is given twice`},
		{"bad layout", "session_name: s\nwindows:\n  - layout: sideways\n", `line 3: layout "sideways" is neither a named layout`},
		{"layout for other panes", "session_name: s\nwindows:\n  - layout: 80x24,0,0{40x24,0,0,1,39x24,41,0,2}\n    panes: [a]\n", "line 3: the layout describes 2 panes, and window 0 has 1"},
		{"pane a mapping of the wrong shape", "session_name: s\nwindows:\n  - panes:\n      - 7: x\n", `line 4: "7" is not supported in a pane`},
		{"pane a number list", "session_name: s\nwindows:\n  - panes:\n      - [a, [b]]\n", "line 4: each command of a pane of window 0 must be a string"},
		{"shell_command a mapping", "session_name: s\nwindows:\n  - panes:\n      - shell_command: {a: b}\n", "line 4: shell_command must be a command or a list"},
		{"multi-line command", "session_name: s\nwindows:\n  - panes:\n      - \"a\\nb\"\n", "line 4: a pane of window 0: a command must be one line"},
		{"focus not a boolean", "session_name: s\nwindows:\n  - focus: yes please\n", "line 3: focus must be true or false"},
		{"two focused windows", "session_name: s\nwindows:\n  - focus: true\n  - focus: true\n", "line 4: more than one window has focus"},
		{"two focused panes", "session_name: s\nwindows:\n  - panes:\n    - {focus: true}\n    - {focus: true}\n", "line 5: more than one pane"},
		{"relative directory with nothing above", "session_name: s\nwindows:\n  - start_directory: src\n", `line 3: start_directory "src" is relative`},
		{"empty directory", "session_name: s\nstart_directory: ''\nwindows: [{}]\n", "line 2: start_directory is empty"},
		{"environment not a mapping", "session_name: s\nenvironment: [A]\nwindows: [{}]\n", "line 2: environment must be a mapping"},
		{"environment bad name", "session_name: s\nenvironment:\n  A-B: 1\nwindows: [{}]\n", `line 3: environment: "A-B" is not a variable name`},
		{"environment value a list", "session_name: s\nenvironment:\n  A: [1]\nwindows: [{}]\n", "line 3: environment: A must be a string"},
		{"too many windows", many, "windows; at most"},
		{"too many panes", manyPanes, "line 4: window 0 has 17 panes"},
		{"too large", "session_name: s\n#" + strings.Repeat("x", MaxBytes), "bytes; at most"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc), "/home/u", tmux.CheckLayout)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse(%q): %v, want an error containing %q", c.doc, err, c.want)
			}
		})
	}
}

func TestParseExpandsHomeOnlyWhenItIsKnown(t *testing.T) {
	doc := "session_name: s\nstart_directory: ~\nwindows: [{}]\n"
	if p, err := Parse([]byte(doc), "/home/u", tmux.CheckLayout); err != nil || p.dir != "/home/u" || p.Windows[0].Panes[0].Dir != "/home/u" {
		t.Errorf("~ with a home: %+v, %v", p, err)
	}
	if _, err := Parse([]byte(doc), "", tmux.CheckLayout); err == nil || !strings.Contains(err.Error(), "line 2: start_directory \"~\": no home directory") {
		t.Errorf("~ without a home: %v", err)
	}
}
