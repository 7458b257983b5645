package wait

import (
	"strings"
	"testing"
)

func TestTypedAsIs(t *testing.T) {
	for _, tt := range []struct {
		command     string
		posix, fish bool
	}{
		{"echo 'build done'", true, true},
		{`printf '%s\t%s\n' "a'b" 'c"d'`, true, true},
		{"make -j4 && ./run.sh | tee log", true, true},
		{"echo $(date) `id -u` $((1+2))", true, true},
		{"sleep 5 &", true, true},
		{"echo a#b 'c # d'", true, true},
		{"echo hi # a comment", false, false},
		{"#only a comment", false, false},
		{"echo 'unbalanced", false, false},
		{`echo "unbalanced`, false, false},
		{"echo `unbalanced", false, false},
		{"echo )", false, false},
		{"case x in x) echo;; esac", false, false},
		{"echo hi |", false, false},
		{"true &&", false, false},
		{`echo trailing \`, false, false},
		{"cat <<EOF", false, false},
		{"echo hi!", false, true},
		{"echo 'x'\\''y'", true, true},
		{"line one\nline two", false, false},
		{"tab\there", false, false},
		{"bell\a", false, false},
		{"echo ^C", false, false},
		{"echo é日本", true, true},
		{"if then", true, false},
		{"for i in 1 2; echo $i; end", true, false},
		{"echo end of it", true, true},
		{"true; and begin; echo x; end", true, false},
		{"echo 'if' \"for\"", true, true},
		{"   ", false, false},
		{strings.Repeat("x", maxReadable+1), false, false},
	} {
		if got := typedAsIs(tt.command, bashShell); got != tt.posix {
			t.Errorf("typedAsIs(%q, bash) = %v, want %v", tt.command, got, tt.posix)
		}
		if got := typedAsIs(tt.command, fishShell); got != tt.fish {
			t.Errorf("typedAsIs(%q, fish) = %v, want %v", tt.command, got, tt.fish)
		}
	}
}

// TestTypedLineIsTheCommandAndAFewBytes: the person sees the command as
// written, with at most 40 bytes of tmcp's own (and zsh's nocorrect); one
// handed over shows a line of at most 80 that names it.
func TestTypedLineIsTheCommandAndAFewBytes(t *testing.T) {
	long := "echo " + strings.Repeat("x", 2048)
	for _, f := range []shellFamily{posixShell, bashShell, zshShell, fishShell} {
		for _, suppress := range []bool{false, true} {
			for _, command := range []string{"echo 'build done'", `printf '%s\n' "it's"`, long} {
				typed := typedFor(f, "1a2b3", command, suppress, false)
				all := strings.Join(typed.lines, "")
				if len(typed.handover) > 0 || !strings.Contains(all, command) || len(all)-len(command) > 40+len(noCorrect(f)) {
					t.Errorf("family %d, suppress %v: %.40q typed with %d bytes more, handover %d lines; want it as written, +40 at most",
						f, suppress, command, len(all)-len(command), len(typed.handover))
				}
				if suppress != strings.HasPrefix(typed.lines[len(typed.lines)-1], " ") {
					t.Errorf("family %d, suppress %v: last line %q", f, suppress, typed.lines[len(typed.lines)-1])
				}
			}
			multi := "for i in 1 2\ndo\n  echo line $i\ndone\n" + strings.Repeat("# filler\n", 300)
			typed := typedFor(f, "1a2b3", multi, suppress, false)
			if len(typed.handover) < 2 {
				t.Errorf("family %d: a multi-line command of %d bytes handed over in %d lines", f, len(multi), len(typed.handover))
			}
			for _, l := range append(typed.lines, typed.after...) {
				if len(l) > 80+len(noCorrect(f)) || strings.Contains(l, "\n") {
					t.Errorf("family %d: a handed-over command shows %q (%d bytes), want one line of 80 at most", f, l, len(l))
				}
			}
			if !strings.Contains(strings.Join(append(typed.lines, typed.after...), ""), "# for i in 1 2 …") {
				t.Errorf("family %d: the line %q does not name the command", f, typed.lines)
			}
		}
	}
}

// TestOnlyMkshRecallsACommandTypedAsWritten: mksh reads back, from the
// pane's option, the command it is to keep in its history, with the job's
// token; nothing is left there for a command handed over (the helper
// read it), kept out of history, or typed into another shell.
func TestOnlyMkshRecallsACommandTypedAsWritten(t *testing.T) {
	for _, tt := range []struct {
		family             shellFamily
		command            string
		suppress, handOver bool
		want               string
	}{
		{mkshShell, "echo 'build done'", false, false, "1a2b3 echo 'build done'"},
		{mkshShell, "(echo sub; exit 5)", false, false, "1a2b3 (echo sub; exit 5)"},
		{mkshShell, `printf '%s\n' x`, false, false, `1a2b3 printf '%s\n' x`},
		{mkshShell, "echo secret", true, false, ""},
		{mkshShell, "echo x", false, true, ""},
		{mkshShell, "for i in 1 2\ndo echo $i\ndone", false, false, ""},
		{bashShell, "echo x", false, false, ""},
		{zshShell, "echo x", false, false, ""},
		{posixShell, "echo x", false, false, ""},
		{fishShell, "echo x", false, false, ""},
	} {
		if got := typedFor(tt.family, "1a2b3", tt.command, tt.suppress, tt.handOver).recall; got != tt.want {
			t.Errorf("family %d, %q (suppress %v, handOver %v): recall %q, want %q", tt.family, tt.command, tt.suppress, tt.handOver, got, tt.want)
		}
	}
}

func TestHandoverSplitsNeverInsideAnEscape(t *testing.T) {
	command := strings.Repeat("a'", 3000)
	lines := handover(command)
	if lines[len(lines)-1] != "." {
		t.Fatalf("last line %q, want the end line", lines[len(lines)-1])
	}
	joined := strings.Join(lines[:len(lines)-1], "")
	if joined != printfEncode(command) {
		t.Fatal("the lines do not add up to the encoded command")
	}
	for _, l := range lines {
		if len(l) > handoverLine {
			t.Errorf("a line of %d bytes, want %d at most", len(l), handoverLine)
		}
		if i := strings.LastIndexByte(l, '\\'); i >= 0 && len(l)-i < 5 {
			t.Errorf("line ends inside an escape: %q", l[i:])
		}
	}
}

func TestOutputSaysTheHelperOrTheParseFailed(t *testing.T) {
	for _, tt := range []struct {
		out              string
		family           shellFamily
		missing, parsing bool
	}{
		{"\r\nbash: __tmcp: command not found\r\n", bashShell, true, false},
		{"\r\ndash: 1: __tmcp_r: not found\r\n", posixShell, true, false},
		{"\r\nzsh: command not found: __tmcp\r\n", zshShell, true, false},
		{"\r\nfish: Unknown command: __tmcp_r\r\n", fishShell, true, false},
		{"(__tmcp 1a2b3&&(echo x));__tmcp 1a2b3 $?\r\n", bashShell, false, false},
		{"\r\nbash: syntax error near unexpected token `then'\r\n", bashShell, false, true},
		{"\r\n-bash: syntax error near unexpected token `;;'\r\n", bashShell, false, true},
		{"$?\r\n\x1b[?2004l\rbash: syntax error near unexpected token `then'\r\n\x1b[?2004h$ ", bashShell, false, true},
		{"\r\n\x1b[1mzsh: parse error near `then'\r\n", zshShell, false, true},
		{"$?\r\r\nE: mksh: syntax error: unexpected ')'\r\n# ", mkshShell, false, true},
		// Typed ahead of the prompt: the terminal echoed the line before.
		{"(__tmcp 1a2b3&&(if then));__tmcp 1a2b3 $?\r\n$ dash: 11: Syntax error: \"then\" unexpected\r\n", posixShell, false, true},
		{"\r\ndash: 1: Syntax error: \"then\" unexpected\r\n", posixShell, false, true},
		{"\r\nsh: 1: Syntax error: \";;\" unexpected\r\n", posixShell, false, true},
		{"\r\nmksh: syntax error: 'then' unexpected\r\n", mkshShell, false, true},
		{"\r\nzsh: parse error near `then'\r\n", zshShell, false, true},
		{"\r\nfish: command substitutions not allowed here\r\n(exit 5)\r\n^~~~~~~^\r\n", fishShell, false, true},
		{"\r\nfish: Unsupported use of '='.\r\nx=1\r\n ^\r\n", fishShell, false, true},
		// The words in the echo of a command are not the shell's: such a
		// command would otherwise run again, handed over.
		{"$ (__tmcp 1a2b3&&(grep 'syntax error' log));__tmcp 1a2b3 $?\r\n", bashShell, false, false},
		{"host:~$ (__tmcp 1a2b3&&(echo bash: syntax error));__tmcp 1a2b3 $?\r\n", bashShell, false, false},
		{"\r\n$ (__tmcp 1a2b3&&(echo bash: syntax error));__tmcp 1a2b3 $?\r\n", bashShell, false, false},
		{"\r\n$ echo 'a parse error'\r\n", zshShell, false, false},
		{"\r\nroot@vm /tmp# echo 'fish: x'\r\n", fishShell, false, false},
		{"\r\nfish: Job 1, 'sleep 1 &' has ended\r\n", fishShell, false, false},
	} {
		if got := helperMissingIn([]byte(tt.out)); got != tt.missing {
			t.Errorf("helperMissingIn(%q) = %v", tt.out, got)
		}
		if got := unparsedLineIn([]byte(tt.out), tt.family); got != tt.parsing {
			t.Errorf("unparsedLineIn(%q, %v) = %v", tt.out, tt.family, got)
		}
	}
}

func TestTypedAlone(t *testing.T) {
	for _, tt := range []struct {
		command     string
		posix, fish bool
	}{
		{"echo 'build done'", true, true},
		{"make -j4 && ./run-tests | tee log", true, true},
		{"echo cd exit export", true, true}, // arguments, not commands
		{"FOO=1 make", false, true},         // an assignment, in a shell that takes them
		{"echo before; exit 3", false, false},
		{"true && exec bash", false, false},
		{"cd /tmp && ls", false, true}, // fish runs every command in itself anyway
		{"ls | { read x; echo $x; }", false, true},
		{"builtin cd /tmp", false, true},
		{"time cd /tmp", false, true},
		{"if true; then echo y; fi", false, false}, // fish: a block
		{"for f in *; do echo $f; done", false, false},
		{"export PATH=$PATH:/opt/bin", false, true},
		{"source ./env.sh", false, true},
		{". ./env.sh", false, true},
		{"echo a\nb", false, false},  // two lines: handed over
		{"echo 'open", false, false}, // not typed as written at all
		{"^x^y", false, true},        // history's quick substitution
		{" ^x^y", false, true},
		{"echo ^x^y", true, true},
	} {
		if got := typedAlone(tt.command, bashShell); got != tt.posix {
			t.Errorf("typedAlone(%q, bash) = %v, want %v", tt.command, got, tt.posix)
		}
		if got := typedAlone(tt.command, fishShell); got != tt.fish {
			t.Errorf("typedAlone(%q, fish) = %v, want %v", tt.command, got, tt.fish)
		}
	}
}

// TestFishPasted: the leading spaces of a line typed at fish's prompt go
// as keys, the rest is pasted with a space after it.
func TestFishPasted(t *testing.T) {
	for _, tt := range []struct{ line, lead, text string }{
		{"gs", "", "gs "},
		{" __tmcp 1a2b3", " ", "__tmcp 1a2b3 "},
		{"  echo 'a  b' ", "  ", "echo 'a  b'  "},
	} {
		if lead, text := fishPasted(tt.line); lead != tt.lead || text != tt.text {
			t.Errorf("fishPasted(%q) = %q, %q; want %q, %q", tt.line, lead, text, tt.lead, tt.text)
		}
	}
}

// TestZshLinesCorrectNothingAndExpandNoAlias: zsh's typed lines begin
// with nocorrect, before their first simple command, and the words naming
// a command handed over are one quoted word, which no global alias
// expands; no other shell's lines change.
func TestZshLinesCorrectNothingAndExpandNoAlias(t *testing.T) {
	for _, tt := range []struct {
		f        shellFamily
		command  string
		suppress bool
		want     string
	}{
		{zshShell, "echo hi G", false, "(nocorrect __tmcp 1a2b3&&(echo hi G));__tmcp 1a2b3 $?"},
		{zshShell, "echo hi", true, " (nocorrect __tmcp 1a2b3&&(echo hi));__tmcp 1a2b3 $? -"},
		{zshShell, "echo hi G\necho", false, "nocorrect __tmcp_r 1a2b3&&(__tmcp 1a2b3;__tmcp_x);__tmcp 1a2b3 $? '# echo hi G …'"},
		{bashShell, "echo hi G", false, "(__tmcp 1a2b3&&(echo hi G));__tmcp 1a2b3 $?"},
		{bashShell, "echo hi G\necho", false, "__tmcp_r 1a2b3&&(__tmcp 1a2b3;__tmcp_x);__tmcp 1a2b3 $? # echo hi G …"},
	} {
		if got := typedFor(tt.f, "1a2b3", tt.command, tt.suppress, false).lines[0]; got != tt.want {
			t.Errorf("family %d, %q (suppress %v): typed %q, want %q", tt.f, tt.command, tt.suppress, got, tt.want)
		}
	}
}
