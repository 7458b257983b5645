package wait

import (
	"os"
	"strings"
	"testing"
)

// The steps of a run, as typingOption names them: C-c, which a mending
// tmcp sends at any step before stepRun, must never reach a command that
// runs, so exactly the line whose Enter runs the command, and what
// follows it, are stepRun; reads says where the shell waits in a read of
// the helper's once a line is typed.
func TestStepsNameTheLineThatRunsTheCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		family    shellFamily
		command   string
		handOver  bool
		fresh     bool
		wantNames string // the steps' names, space-separated
		wantReads string // 'r' where the shell waits in a read once typed, '-' elsewhere
	}{
		{"POSIX, typed as written", bashShell, "echo hi", false, false, "run", "-"},
		{"POSIX, typed as written, fresh shell", zshShell, "echo hi", false, true, "bootstrap helper run", "r--"},
		{"POSIX, handed over", posixShell, "echo a\necho b", false, false, "reader handover run", "rr-"},
		{"POSIX, handed over, fresh shell", mkshShell, "echo a\necho b", true, true, "bootstrap helper reader handover run", "r-rr-"},
		{"fish, typed as written", fishShell, "echo hi", false, false, "tag run", "--"},
		{"fish, typed as written, fresh shell", fishShell, "echo hi", false, true, "bootstrap helper tag run", "r---"},
		{"fish, handed over", fishShell, "echo a\necho b", false, false, "reader handover handover run", "rr--"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typed := typedFor(tc.family, "abcde", tc.command, false, tc.handOver)
			bootstrap, helper := "", ""
			if tc.fresh {
				bootstrap, helper = bootstrapLine(tc.family, "abcde"), helperLine(tc.family, "", "0123456789abcdef")
			}
			var names []string
			var reads strings.Builder
			for _, st := range stepsOf(bootstrap, helper, typed) {
				names = append(names, st.name)
				reads.WriteByte(map[bool]byte{true: 'r', false: '-'}[st.reads])
			}
			if got := strings.Join(names, " "); got != tc.wantNames || reads.String() != tc.wantReads {
				t.Errorf("steps of %q: %s, reads %s; want %s, reads %s", tc.command, got, reads.String(), tc.wantNames, tc.wantReads)
			}
		})
	}
}

func TestAliveTellsARunningProcessFromAGoneOne(t *testing.T) {
	t.Parallel()
	if !alive(os.Getpid()) {
		t.Errorf("alive(%d), this process: false, want true", os.Getpid())
	}
	// Process ids stop well below this on Linux (pid_max is at most 2^22).
	if alive(1 << 30) {
		t.Errorf("alive(%d), no process: true, want false", 1<<30)
	}
}
