package wait

import (
	"testing"

	"github.com/tmcp/tmcp/internal/agents"
)

func TestSubmittedTellsATakenPromptFromOneLeftInTheInput(t *testing.T) {
	claude := agents.BuiltIn().Select("claude", nil)
	codex := agents.BuiltIn().Select("codex", nil)
	generic := agents.BuiltIn().Select("top", nil)
	pasted := []string{"» old", "", "", "› fix it", "  ? for shortcuts"}
	for _, tt := range []struct {
		name         string
		p            agents.Profile
		shown, after []string
		input        string
		want         bool
		prompt       string // the cursor's row before the paste
		atCursor     string // the cursor's row after the submit key
	}{
		{"a busy marker came", codex, pasted, []string{"» fix it", "| Working (0s • esc to interrupt)", "› ", "  ? for shortcuts"}, "› fix it", true, "", ""},
		{"the Enter became a newline: the input row is still there", codex,
			pasted, []string{"» old", "", "› fix it", "", "  ? for shortcuts"}, "› fix it", false, "", ""},
		{"the input box grew and scrolled: the row is still there", codex,
			pasted, []string{"", "", "› fix it", "", "  ? for shortcuts"}, "› fix it", false, "", ""},
		{"the placeholder stayed, its count grown", claude,
			[]string{"│ > [Pasted text #1 +2 lines]"}, []string{"│ > [Pasted text #1 +3 lines]"}, "│ > [Pasted text #1 +2 lines]", false, "", ""},
		{"the placeholder left", claude,
			[]string{"│ > [Pasted text #1 +2 lines]"}, []string{"» a", "» b", "│ >"}, "│ > [Pasted text #1 +2 lines]", true, "", ""},
		{"the input was cleared", generic, []string{"task> job 1"}, []string{"» job 1", "task>"}, "task> job 1", true, "", ""},
		{"the input row shows in the transcript as well as before", generic,
			[]string{"task> x", "task> x"}, []string{"task> x", ""}, "task> x", true, "", ""},
		{"nothing of the paste showed, and nothing changed", generic, []string{"a"}, []string{"a"}, "", false, "", ""},
		{"nothing of the paste showed, then the screen changed", generic, []string{"a"}, []string{"b"}, "", true, "", ""},
		{"the transcript repeats the input rows, and the input is back to its prompt", generic,
			[]string{"» last line", "» last line"}, []string{"» last line", "» last line", "task> "}, "» last line", true, "task> ", "task>"},
		{"the Enter became a newline: the cursor is on a new row of the input", codex,
			pasted, []string{"» old", "", "› fix it", "", "  ? for shortcuts"}, "› fix it", false, "› ", ""},
		{"a blank prompt row tells nothing", generic,
			[]string{"x", "x"}, []string{"x", "x", ""}, "x", false, "", ""},
	} {
		if got, how := submitted(tt.p, tt.shown, tt.after, tt.input, tt.prompt, tt.atCursor); got != tt.want {
			t.Errorf("%s: submitted = %v (%s), want %v", tt.name, got, how, tt.want)
		}
	}
}

func TestInputRowIsTheCursorsRowOrTheLowestRowThePasteChanged(t *testing.T) {
	before := []string{"» old", "› ", "  ? for shortcuts"}
	shown := []string{"» old", "› fix it", "  ? for shortcuts"}
	if got := inputRow(before, shown, 1); got != "› fix it" {
		t.Errorf("cursor on the input: %q", got)
	}
	if got := inputRow(before, shown, 2); got != "› fix it" {
		t.Errorf("cursor on a row the paste did not change: %q, want the changed row", got)
	}
	if got := inputRow(before, before, 1); got != "" {
		t.Errorf("nothing changed: %q, want none", got)
	}
}
