package tmux

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func TestEscapeExpansionsDoublesEveryHashAndPercent(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"cat > /tmp/log", "cat > /tmp/log"},
		{"x-#S-%d", "x-##S-%%d"},
		{"##%%", "####%%%%"},
		{"#{pane_id} #(id) %H:%M", "##{pane_id} ##(id) %%H:%%M"},
		{"é#日%", "é##日%%"},
		{"#", "##"},
		{"%", "%%"},
	}
	for _, c := range cases {
		if got := EscapeExpansions(c.in); got != c.want {
			t.Errorf("EscapeExpansions(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// unescapeExpansions is what tmux does to pipe-pane's command: strftime
// (%% to %), then the format (## to #). Only the sequences an escaped
// string can hold are modelled; anything else is reported as not literal.
func unescapeExpansions(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '#' || s[i] == '%' {
			if i+1 == len(s) || s[i+1] != s[i] {
				return "", false
			}
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

func FuzzEscapeExpansionsIsUndoneByTmuxsExpansions(f *testing.F) {
	for _, s := range []string{"", "#S", "%d", "##", "%%#", "#{a}%Y", "\xff#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := EscapeExpansions(s)
		got, ok := unescapeExpansions(e)
		if !ok || got != s {
			t.Fatalf("EscapeExpansions(%q) = %q, which expands to %q (literal %v)", s, e, got, ok)
		}
	})
}

func TestUnquoteOptionUndoesShowOptionsQuoting(t *testing.T) {
	cases := []struct{ in, want string }{
		{"on", "on"},
		{"''", ""},
		{`"a b"`, "a b"},
		{`'a "b"'`, `a "b"`},
		{`"x#S"`, "x#S"},
		{`"a\tb\nc \"q\" \$HOME \\ 's é\001"`, "a\tb\nc \"q\" $HOME \\ 's é\x01"},
		{`\~root`, "~root"},
		{`\;`, ";"},
		{`"\~"`, "~"},
		{`a\033b`, "a\x1bb"},
		{`trailing\`, `trailing\`},
	}
	for _, c := range cases {
		if got := UnquoteOption(c.in); got != c.want {
			t.Errorf("UnquoteOption(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseOptionLineReadsNameInheritanceAndValue(t *testing.T) {
	cases := []struct {
		in   string
		want Setting
	}{
		{"base-index 0", Setting{Name: "base-index", Value: "0"}},
		{`status-right* "%H:%M"`, Setting{Name: "status-right", Value: "%H:%M", Inherited: true}},
		{`command-alias[2] "server-info=show-messages -JT"`, Setting{Name: "command-alias[2]", Value: "server-info=show-messages -JT"}},
		{"@e ''", Setting{Name: "@e", Value: ""}},
		{"update-environment", Setting{Name: "update-environment"}},
	}
	for _, c := range cases {
		if got := ParseOptionLine(c.in); got != c.want {
			t.Errorf("ParseOptionLine(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseShellEnvironment(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []Setting
		bad  bool
	}{
		{name: "empty", in: "", want: nil},
		{name: "removed and set", in: "unset DISPLAY;\nFOO=\"bar\"; export FOO;\n",
			want: []Setting{{Name: "DISPLAY", Removed: true}, {Name: "FOO", Value: "bar"}}},
		{name: "escapes and a newline that looks like a variable",
			in:   "FOO=\"a b\nBAR=\\\"x\\\" \\$y \\` \\\\\"; export FOO;\nunset Z;",
			want: []Setting{{Name: "FOO", Value: "a b\nBAR=\"x\" $y ` \\"}, {Name: "Z", Removed: true}}},
		{name: "empty value", in: `E=""; export E;`, want: []Setting{{Name: "E"}}},
		{name: "a forged tail inside the value", in: "A=\"x\\\"; export A;\"; export A;",
			want: []Setting{{Name: "A", Value: `x"; export A;`}}},
		{name: "unterminated", in: `A="x`, bad: true},
		{name: "not shell form", in: "A=b", bad: true},
	}
	for _, c := range cases {
		got, err := ParseShellEnvironment(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("%s: %q parsed as %+v, want an error", c.name, c.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: ParseShellEnvironment(%q) = %+v, %v; want %+v", c.name, c.in, got, err, c.want)
		}
	}
}

// hostileValues reach tmux through options and the environment and must
// come back as they were.
var hostileValues = map[string]string{
	"plain":     "on",
	"empty":     "",
	"spaces":    "a b  c",
	"newline":   "a\nB=c\nunset X;",
	"quotes":    `"'\"\'`,
	"dollar":    "$HOME ${HOME} `id` $(id)",
	"tilde":     "~root",
	"format":    "#{session_name} #S #(touch /tmp/tmcp-never) %d",
	"control":   "\x01\x07\x1b[31m\t\r",
	"utf8":      "é 日本",
	"backslash": `\ \\ \n \044`,
	"dash":      "-x",
	"semicolon": "a ; kill-server",
}

func TestOptionsAndEnvironmentRoundTripHostileValues(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	ctx := context.Background()
	for name, value := range hostileValues {
		if err := c.SetOption(ctx, SessionScope, "main", "@probe", value, false); err != nil {
			t.Fatalf("%s: SetOption: %v", name, err)
		}
		opts, err := c.ShowOptions(ctx, SessionScope, "main", "@probe")
		if err != nil || len(opts) != 1 || opts[0] != (Setting{Name: "@probe", Value: value}) {
			t.Errorf("%s: option %q read back as %+v, %v", name, value, opts, err)
		}
		if err := c.SetEnvironment(ctx, "main", "PROBE", value); err != nil {
			t.Fatalf("%s: SetEnvironment: %v", name, err)
		}
		vars, err := c.ShowEnvironment(ctx, "main", "")
		if err != nil {
			t.Fatalf("%s: ShowEnvironment: %v", name, err)
		}
		found := false
		for _, v := range vars {
			if v.Name == "PROBE" {
				found = v.Value == value && !v.Removed
			}
		}
		if !found {
			t.Errorf("%s: variable %q not read back among %+v", name, value, vars)
		}
	}
}

func TestPipePaneKeepsHashAndPercentLiteral(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	ctx := context.Background()
	dir := t.TempDir()
	if err := c.PipePane(ctx, "%0", "cat > '"+dir+"/x-#S-%d-##-%%'"); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "x-#S-%d-##-%%")
	if !tmuxtest.WaitFor(5*time.Second, func() bool { _, err := os.Stat(want); return err == nil }) {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("no file %s; the directory holds %v", want, entries)
	}
	long := strings.Repeat("#", MaxPipeCommand/2+1)
	if err := c.PipePane(ctx, "%0", long); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a command too long once escaped: err %v", err)
	}
}
