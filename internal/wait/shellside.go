package wait

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tmcp/tmcp/internal/tmux"
)

// What run_command types into a pane's shell. Once per shell, tmcp types a
// short helper (the shell's "helper line"); after that, a run types the
// command as the person would have, with a few bytes of the helper around
// it, and the helper writes the job's invisible marks:
//
//	(__tmcp 1a2b3&&(echo 'build done'));__tmcp 1a2b3 $?
//
// The command runs in a subshell of its own, so exit cannot end the pane's
// shell. The first call of the helper, in the subshell around it, makes
// C-c end that one with 130 rather than kill it (which would make the
// shell drop the rest of the line), and marks the start; the second marks
// the end with the status. The command's own subshell has C-c's default
// action, so a C-c that lands as it starts a program ends it still. A
// shell that lacks the helper (a new shell in the pane) runs nothing of
// the command, and says the helper was not found.
// Nothing in the line needs a file or a tmux binary on the shell's side,
// so the same line works in a shell on another machine. Where the shell
// can reach its tmux (TMUX_PANE is set), the end's call also leaves the
// token and the status in the pane's @tmcp_end option, in the background:
// the one trace of the end that outlives tmcp, for a tmcp started later.
//
// A command the line editor or the shell's parser could take apart when
// typed as it is (several lines, control bytes, a comment, unbalanced
// quotes) is handed over through the terminal instead: the typed line asks
// the helper to read it with echo off, tmcp types it encoded once the
// helper says it is reading, and the person sees one short line that
// names the command.
//
// fish is not a POSIX shell: its helper hooks fish's own preexec and
// postexec events, and a run types "__tmcp 1a2b3c" on a line of its own
// (a leading space keeps it out of fish's history), then the command. The
// command runs in the pane's fish itself, so cd and set -g act on it;
// during the run, exit is a function of the helper's that ends the
// command rather than the shell (fishExit).

// shellFamily is how run_command speaks to a shell.
type shellFamily int

const (
	posixShell shellFamily = iota
	bashShell              // POSIX, and its history is kept clean
	zshShell               // likewise, by zsh's own hook
	mkshShell              // POSIX; a line that begins with a space is kept out of its history
	fishShell
)

// familyOf returns the family of a pane's current command, by name.
func familyOf(command string) shellFamily {
	word, _, _ := strings.Cut(strings.TrimSpace(command), " ")
	switch path.Base(strings.TrimPrefix(word, "-")) {
	case "bash":
		return bashShell
	case "zsh":
		return zshShell
	case "fish":
		return fishShell
	case "mksh", "lksh":
		return mkshShell
	}
	return posixShell
}

// posixHelper marks a job's start (one argument, the token, in the
// subshell) or its end (the token and the status, in the pane's shell),
// reads a command handed over through the terminal (__tmcp_r), and runs
// it (__tmcp_x). The history is seen to after the end mark, or before it
// where it reads what tmcp left for this job (mksh's), which the next
// run, begun at the mark, would replace.
func posixHelper(historyFirst bool) string {
	end := `printf '\033]133;E;%s;tmcp-%s\007' "$2" "$1";__tmcp_k "$1" "$2";__tmcp_h "$@";`
	if historyFirst {
		end = `__tmcp_h "$@";printf '\033]133;E;%s;tmcp-%s\007' "$2" "$1";__tmcp_k "$1" "$2";`
	}
	return ` __tmcp(){ if [ $# -eq 1 ];then trap 'exit 130' INT;printf '\033]133;C;tmcp-%s\007' "$1";` +
		`else ` + end + `fi;}` + posixReader
}

// posixReader reads a command handed over (__tmcp_r) and runs it
// (__tmcp_x). C-c, or an empty line (a person's Enter: tmcp hands over
// none), ends the read with echo back on, and nothing runs.
const posixReader = `;__tmcp_r(){ trap 'stty echo;trap - INT;return 130' INT;stty -echo;printf '\033]133;R;tmcp-%s\007' "$1";__tmcp_cmd=;` +
	`while IFS= read -r __tmcp_l;do [ "$__tmcp_l" = . ]&&break;[ -z "$__tmcp_l" ]&&{ __tmcp_cmd=;stty echo;trap - INT;return 130;};__tmcp_cmd=$__tmcp_cmd$__tmcp_l;done;stty echo;trap - INT;` +
	`__tmcp_cmd=$(printf %b "$__tmcp_cmd");};__tmcp_x(){ (eval "$__tmcp_cmd");}`

// posixEndOption has the helper leave a job's end in the pane's
// endOption, through its tmux, where it can reach it.
const posixEndOption = `;__tmcp_k(){ [ -n "$TMUX_PANE" ]&&(command tmux set -pt "$TMUX_PANE" @tmcp_end "$1 $2" >/dev/null 2>&1 &);}`

// posixEndFile has the helper leave a job's end in file (see endFile),
// with printf, a builtin: a missing directory is no error. file holds no
// quote or backslash (see KeepJobs), so single quotes keep it whole in
// every shell, fish's too.
func posixEndFile(file string) string {
	return `;__tmcp_k(){ { printf '%s %s\n' "$1" "$2" >|'` + file + `';} 2>/dev/null;}`
}

// posixHistory keeps history as it is, for shells that need no care.
const posixHistory = `;__tmcp_h(){ :;}`

// mkshHistory adds the command as written to mksh's history (print -rs);
// the typed lines begin with a space, which keeps them out. Nothing in
// mksh gives the helper the text of the line it runs in, so a command
// typed as written is read back from where tmcp left it with the job's
// token: the file typed (see typedFile), with the shell's own read, or,
// when typed is "", the pane's typedOption, through a tmux process where
// the shell reaches its tmux. A command handed over is the one the helper
// read.
func mkshHistory(typed string) string {
	fetch := `[ -n "$TMUX_PANE" ]&&__tmcp_l=$(command tmux show -pvt "$TMUX_PANE" ` + typedOption + ` 2>/dev/null)`
	if typed != "" {
		fetch = `{ IFS= read -r __tmcp_l <'` + typed + `';} 2>/dev/null`
	}
	return `;__tmcp_h(){ if [ "$3" != - ];then if [ -n "$__tmcp_cmd" ];then print -rs -- "$__tmcp_cmd";` +
		`else __tmcp_l=;` + fetch + `;case $__tmcp_l in "$1 "?*) print -rs -- "${__tmcp_l#"$1 "}";;esac;fi;fi;__tmcp_cmd=;}`
}

// typedOption is the pane option where tmcp leaves "TOKEN COMMAND" before
// it types a command as written into mksh, for mksh's history, when the
// shell is not on tmcp's machine (see typedFile).
const typedOption = "@tmcp_typed"

// typedFile is the file where tmcp leaves "TOKEN COMMAND" for the mksh
// of the pane whose jobs end in endFile: beside it, on tmcp's machine.
func typedFile(endFile string) string {
	if endFile == "" {
		return ""
	}
	return endFile + ".typed"
}

// bashHistory replaces the typed line in bash's history with the command
// as written (history -s drops the entry it follows), or drops it when
// asked to (a third argument, "-"); the helper line itself is dropped too.
const bashHistory = `;__tmcp_h(){ local l;l=$(HISTTIMEFORMAT= history 1);case $l in *"(__tmcp $1"*);;*) return;;esac;` +
	`if [ -n "$__tmcp_cmd" ];then case $(HISTTIMEFORMAT= history 2) in *"(__tmcp "*"&&("*"));__tmcp "*"__tmcp_r $1&&"*) history -d -2;;esac;fi;` +
	`if [ "$3" = - ];then history -d -1;elif [ -n "$__tmcp_cmd" ];then history -s -- "$__tmcp_cmd";` +
	`else l=${l#*"(__tmcp $1&&("};case $l in " ("*) l=${l# };;esac;history -s -- "${l%"));__tmcp $1 \$?"*}";fi;__tmcp_cmd=;}` +
	`;case $(HISTTIMEFORMAT= history 1) in *'eval "$__tmcp_l"'*) history -d -1;;esac`

// zshHistory keeps tmcp's lines out of zsh's history through its
// zshaddhistory hook; the end mark's call adds the command as written in
// their place, taken from the line by the hook or read by the helper, so
// that a line the shell could not parse (it never ends) adds nothing.
const zshHistory = `;__tmcp_h(){ [[ $3 != - && -n $__tmcp_cmd ]]&&print -rs -- "$__tmcp_cmd";__tmcp_cmd=;}` +
	`;__tmcp_z(){ case $1 in *"__tmcp "*");__tmcp "*) ;;*) return 0;;esac;` +
	`[[ $1 == *' $? -'* || $1 == *__tmcp_r\ * ]]&&return 1;local c=${1#*"&&("};[[ $c == " ("* ]]&&c=${c# };__tmcp_cmd=${c%%\)\);__tmcp *};return 1;}` +
	`;zshaddhistory_functions+=(__tmcp_z)`

// fishHelper: "__tmcp TOKEN" names the next command's job; fish's preexec
// and postexec events mark its start and its end with $status. __tmcp_r
// reads a command handed over through the terminal and names its job;
// an empty line (a person's Enter) ends it, as C-c does, running nothing.
// While a job runs, exit is __tmcp_exit (fishExit), unless the person has
// an exit function of their own.
const fishHelper = ` function __tmcp; set -g __tmcp_next $argv[1]; end` +
	`; function __tmcp_c --on-event fish_preexec; set -q __tmcp_next; or return; set -g __tmcp_job $__tmcp_next; set -e __tmcp_next` +
	`; if not functions -q exit; functions -c __tmcp_exit exit; set -g __tmcp_shadow; end; printf '\e]133;C;tmcp-%s\a' $__tmcp_job; end` +
	`; function __tmcp_e --on-event fish_postexec; set -l s $status; set -q __tmcp_job; or return` +
	`; set -q __tmcp_shadow; and functions -e exit; set -e __tmcp_shadow; set -q __tmcp_status; and set s $__tmcp_status; set -e __tmcp_status` +
	`; printf '\e]133;E;%s;tmcp-%s\a' $s $__tmcp_job; __tmcp_k $__tmcp_job $s; set -e __tmcp_job; end` +
	`; function __tmcp_r; stty -echo; printf '\e]133;R;tmcp-%s\a' $argv[1]; set -l parts; while true; set -l l (head -n 1); test "$l" = .; and break; test -z "$l"; and begin; set -e __tmcp_cmd; stty echo; return 130; end; set -a parts $l; end; stty echo` +
	`; set -g __tmcp_cmd (printf %b (string join '' $parts) | string collect); set -g __tmcp_next $argv[1]; end` +
	fishExit

// fishEndOption and fishEndFile are fish's posixEndOption and
// posixEndFile.
const fishEndOption = `; function __tmcp_k; set -q TMUX_PANE; and command tmux set -pt $TMUX_PANE @tmcp_end "$argv[1] $argv[2]" >/dev/null 2>&1 &; disown 2>/dev/null; end`

func fishEndFile(file string) string {
	return `; function __tmcp_k; test -d '` + filepath.Dir(file) + `'; and printf '%s %s\n' $argv[1] $argv[2] >'` + file + `' 2>/dev/null; end`
}

// fishExit is what exit does in a command run in fish, which runs in the
// pane's own shell: where fish's exit would end that shell, it ends the
// command instead, as exit ends a POSIX subshell. It keeps the status for
// the end mark (the last command's with no argument; 255 for a number
// past 0 to 255, where fish's own would clamp or fail) and sends fish its
// own SIGINT, the one way a function can stop the rest of the command
// line: fish then reads the next line as after C-c, with $status 130. It
// never calls fish's exit there, which would end the shell: for a word
// that is no number or for more than one it prints fish's error line and
// returns 2, ending nothing, as fish's does. In a file being sourced
// fish's exit ends that file only, so there it is fish's own (the stack
// trace's words are translated, hence "_").
const fishExit = `; function __tmcp_exit; set -l s $status` +
	`; if status stack-trace | string match -q -- (string split %ls -- (_ 'from sourcing file %ls'\n))[1]'*'; builtin exit $argv; return; end` +
	`; if contains -- -h $argv; or contains -- --help $argv; builtin exit --help; return; end` +
	`; set -l a $argv; set -l i (contains -i -- -- $a); and set -e a[$i]` +
	`; if set -q a[2]; echo 'exit: too many arguments' >&2; return 2; else if set -q a[1]` +
	`; set s (string trim -- $a | string replace -r '^\+?0*(?=[0-9])' ''); string match -qr '^-?[0-9]+$' -- "$s"` +
	`; or begin; printf 'exit: %s: invalid integer\n' $a >&2; return 2; end` +
	`; string match -qr '^[0-9]{1,3}$' -- $s; and test $s -le 255; or set s 255; end` +
	`; set -g __tmcp_status $s; command kill -s INT $fish_pid; end`

// bootstrapLine is what tmcp types, once per shell, to hand the shell its
// helper: with echo off it reads one line and runs it, after its R mark
// says it reads. A leading space keeps it out of the history of fish
// and of shells set to ignore such lines; bash's helper drops it.
func bootstrapLine(f shellFamily, token string) string {
	if f == fishShell {
		return ` stty -echo; printf '\e]133;R;tmcp-` + token + `\a'; set -l __tmcp_l (head -n 1); stty echo; eval $__tmcp_l`
	}
	// C-c during the read must not leave the terminal without echo, nor
	// the shell in the read (bash and zsh go on reading once a trap has
	// run): the trap sends the shell its own SIGINT, untrapped, which ends
	// the line. The line's opening is as it was: tmcp init's zsh snippet
	// keeps it out of the history by it.
	return ` trap 'stty echo' INT;stty -echo;printf '\033]133;R;tmcp-` + token + `\007';trap 'stty echo;trap - INT;kill -INT $$' INT;IFS= read -r __tmcp_l;stty echo;trap - INT;eval "$__tmcp_l"`
}

// readMark is the R mark of job token, as a command of the shell's.
func readMark(f shellFamily, token string) string {
	if f == fishShell {
		return `; printf '\e]133;R;tmcp-` + token + `\a'`
	}
	return `;printf '\033]133;R;tmcp-` + token + `\007'`
}

// eraseEcho is what the helper runs last to take the echo of the line that
// handed it over off the screen: the cursor goes back up to the prompt's
// row, which the shell's next prompt then takes. The echo began at column
// x and ran n bytes, in a pane width columns wide.
func eraseEcho(f shellFamily, x, n, width int) string {
	if width <= 0 || x < 0 {
		return ""
	}
	up := (x+n-1)/width + 1
	if f == fishShell {
		return fmt.Sprintf(`; printf '\e[%dA\r\e[J'`, up)
	}
	return fmt.Sprintf(`;printf '\033[%dA\r\033[J'`, up)
}

// helperLine is what tmcp hands, once, to a shell of a family before its
// first run there. The shell leaves each job's end in endFile (see
// Service.endFile), or in the pane's endOption when endFile is "". Its
// marks carry nonce after the job's token ("tmcp-TAG:NONCE").
func helperLine(f shellFamily, endFile, nonce string) string {
	return strings.ReplaceAll(helperCode(f, endFile), markerPrefix+"%s", markerPrefix+"%s:"+nonce)
}

// farNonce is what the helper line of a shell reached through ssh (or
// docker, kubectl…) adds for the shell's own marks: tmcp cannot read the
// nonce that shell's tmcp init chose, so it gives it the helper's, which
// the shell's marks carry from its next prompt on.
func farNonce(f shellFamily, nonce string) string {
	if f == fishShell {
		return `; set -q __tmcp_init; and set -g __tmcp_n ` + nonce
	}
	return `;[ -n "${__tmcp_init-}" ]&&__tmcp_n=` + nonce
}

// helperCode is helperLine with marks that carry the token alone.
func helperCode(f shellFamily, endFile string) string {
	if f == fishShell {
		if endFile != "" {
			return fishHelper + fishEndFile(endFile)
		}
		return fishHelper + fishEndOption
	}
	end := posixEndOption
	if endFile != "" {
		end = posixEndFile(endFile)
	}
	switch f {
	case bashShell:
		return posixHelper(false) + end + bashHistory
	case zshShell:
		return posixHelper(false) + end + zshHistory
	case mkshShell:
		return posixHelper(true) + end + mkshHistory(typedFile(endFile))
	}
	return posixHelper(false) + end + posixHistory
}

// maxReadable bounds a command typed as it is; a longer one is handed
// over through the terminal.
const maxReadable = 4096

// handoverLine bounds each line of a command handed over, well under the
// terminal's line buffer.
const handoverLine = 1000

// typing is what a run types: lines, each followed by Enter, and, when the
// command is handed over, its encoded lines, typed once the helper is
// reading (the pane shows the R mark).
type typing struct {
	lines    []string
	handover []string
	after    []string // typed once the handover is read
	// recall is left in the pane's typedFile or typedOption before the
	// lines are typed, for a shell that reads the command back (mksh).
	recall string
}

// typedFor returns what to type to run command as job token (the id,
// without the marks' prefix) in a shell of family f; handOver hands it
// over even when it could be typed as written.
func typedFor(f shellFamily, token, command string, suppressHistory, handOver bool) typing {
	readable := !handOver && typedAsIs(command, f)
	if f == fishShell {
		if readable {
			line := command
			if suppressHistory {
				line = " " + line
			}
			return typing{lines: []string{" __tmcp " + token, line}}
		}
		// History cannot take the command in fish 3: the line is kept out.
		return typing{lines: []string{" __tmcp_r " + token}, handover: handover(command),
			after: []string{` eval "$__tmcp_cmd"` + summary(command, 40, f)}}
	}
	end := ";__tmcp " + token + " $?"
	if suppressHistory {
		end += " -"
	}
	// A leading space keeps the line out of mksh's history, and out of
	// the others' where they are set to (bash's and zsh's helpers keep it
	// out anyway, and put the command in its place).
	lead := ""
	if suppressHistory || f == mkshShell {
		lead = " "
	}
	if readable {
		var t typing
		if f == mkshShell && !suppressHistory {
			t.recall = token + " " + command
		}
		// "((" would open an arithmetic command in bash, zsh and mksh:
		// a command that begins with "(" is set apart by a space.
		if strings.HasPrefix(command, "(") {
			command = " " + command
		}
		t.lines = []string{lead + "(" + noCorrect(f) + "__tmcp " + token + "&&(" + command + "))" + end}
		return t
	}
	line := lead + noCorrect(f) + "__tmcp_r " + token + "&&(__tmcp " + token + ";__tmcp_x)" + end
	// 80 bytes, and zsh's nocorrect.
	room := 80 + len(noCorrect(f)) - len(line)
	return typing{lines: []string{line + summary(command, room, f)}, handover: handover(command)}
}

// noCorrect is what a line typed at a shell's prompt begins with, before
// its first simple command, so that the shell corrects none of its words:
// zsh with setopt correct or correct_all would otherwise ask whether to
// correct a word ("zsh: correct 'gti' to 'git' [nyae]?") and wait for a
// key, and the run with it. The modifier holds for the whole line; eval,
// which runs a command handed over, never corrects.
func noCorrect(f shellFamily) string {
	if f == zshShell {
		return "nocorrect "
	}
	return ""
}

// fishPasted splits a line to type at fish's prompt into its leading
// spaces, typed as keys (fish drops them from a paste, and one keeps the
// line out of its history), and the rest, pasted (see Hub.TypePasted),
// with a space after it. fish expands an abbreviation on a space or ; | &
// < > ) typed after it, which a paste never is, and on Enter, for the
// word at the cursor: after the space there is none. fish (3.6 here)
// binds the paste's keys whatever the terminal's mode, so this holds in a
// fish that never asked for bracketed paste (fish --no-config) too, and
// for every abbreviation the person has or defines later, --regex and
// --position anywhere ones included. fish keeps the line in its history
// without the space.
func fishPasted(line string) (lead, text string) {
	text = strings.TrimLeft(line, " ")
	return line[:len(line)-len(text)], text + " "
}

// summary is a comment naming a command handed over, within n bytes. It
// holds only letters, digits and a few plain marks: interactive zsh takes
// no comments, and reads it as arguments that must neither open a quote
// nor expand. In zsh it is one quoted word: a global alias would expand
// a bare word (alias -g G='| grep' would pipe the end mark into grep).
func summary(command string, n int, f shellFamily) string {
	first, _, more := strings.Cut(strings.TrimSpace(command), "\n")
	var b strings.Builder
	for _, r := range first {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(" -_./,:+@%", r) {
			r = ' '
		}
		b.WriteRune(r)
	}
	text := strings.Join(strings.Fields(b.String()), " ")
	if more {
		text += " …"
	}
	open, end := " # ", ""
	if f == zshShell {
		open, end = " '# ", "'"
	}
	room := n - len(open) - len(end)
	if room < 8 {
		return ""
	}
	if len(text) > room {
		cut := room - len("…")
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return open + text + end
}

// handover encodes a command for the helper's read: printable ASCII for
// printf's %b, in lines the terminal takes whole, then the end line ".".
func handover(command string) []string {
	enc := printfEncode(command)
	var lines []string
	for len(enc) > handoverLine {
		cut := handoverLine
		// Never inside an escape, which is \0 and three digits.
		if k := strings.LastIndexByte(enc[cut-4:cut], '\\'); k >= 0 {
			cut = cut - 4 + k
		}
		lines = append(lines, enc[:cut])
		enc = enc[cut:]
	}
	return append(lines, enc, ".")
}

// typedAsIs reports whether a command can be typed into a shell of family
// f exactly as written: one line of printable text that the shell parses
// whole inside the helper's parentheses. It errs on the side of no: a
// command it turns away is handed over instead, which runs it the same.
func typedAsIs(command string, f shellFamily) bool {
	return plainLine(command) && parsesWhole(command, f)
}

// plainLine reports whether a command is one line of printable text,
// short enough to type, that holds no interrupt key's echo.
func plainLine(command string) bool {
	if len(command) > maxReadable || strings.TrimSpace(command) == "" || !utf8.ValidString(command) {
		return false
	}
	for _, r := range command {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false // control bytes, newlines and tabs among them
		}
	}
	// The echo of an interrupt key is told from the typed text by these.
	for _, k := range keyEchoes {
		if strings.Contains(command, k.echo) {
			return false
		}
	}
	return true
}

// parsesWhole scans a one-line command as a shell would, closely enough
// to turn away whatever could run on past the line, end it early, or be
// rewritten before it runs: unbalanced quotes or parentheses, a comment,
// a trailing backslash or operator, a here-document, history expansion
// with "!" (but in fish), and in fish a block keyword, whose block fish's
// editor would hold open for more lines.
func parsesWhole(command string, f shellFamily) bool {
	whole, _ := scanLine(command, f)
	return whole
}

// scanLine is parsesWhole, and also returns the words the line runs as
// commands, as far as an unquoted word at a command's place tells (a
// variable assignment there counts as one).
func scanLine(command string, f shellFamily) (whole bool, commands []string) {
	depth := 0
	inSingle, inDouble, inBack := false, false, false
	wordStart := true
	var word strings.Builder // the unquoted word being read
	commandWord := true      // the next word names a command
	blockOpened := func() bool {
		w := word.String()
		word.Reset()
		if w == "" {
			return false
		}
		opened := commandWord && f == fishShell && fishBlocks[w]
		if commandWord {
			commands = append(commands, w)
		}
		commandWord = commandWord && (leadsCommand[w] || strings.Contains(w, "="))
		return opened
	}
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case inSingle:
			if c == '\'' {
				inSingle = false
			}
			if c == '\\' && f == fishShell && i+1 < len(command) {
				i++ // fish takes \' and \\ inside single quotes
			}
			continue
		case c == '\\':
			if i+1 == len(command) {
				return false, nil
			}
			i++
			wordStart = false
			word.WriteByte('\\')
			continue
		case c == '!' && f != fishShell:
			return false, nil
		case inDouble:
			if c == '"' {
				inDouble = false
			}
			continue
		}
		switch c {
		case '\'':
			inSingle = true
		case '"':
			inDouble = true
		case '`':
			inBack = !inBack
		case '#':
			if wordStart {
				return false, nil
			}
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return false, nil
			}
		case '<':
			if strings.HasPrefix(command[i:], "<<") {
				return false, nil
			}
		}
		wordStart = strings.IndexByte(" \t;&|()<>", c) >= 0
		if wordStart {
			if blockOpened() {
				return false, nil
			}
			if c != ' ' && c != '\t' {
				commandWord = true
			}
		} else if c != '\'' && c != '"' {
			word.WriteByte(c)
		}
	}
	if inSingle || inDouble || inBack || depth != 0 || blockOpened() {
		return false, nil
	}
	tail := strings.TrimRight(command, " ")
	for _, op := range []string{"|", "&&", "||"} {
		if strings.HasSuffix(tail, op) {
			return false, nil
		}
	}
	return true, commands
}

// leadsCommand are the words after which the next word names a command.
var leadsCommand = map[string]bool{"and": true, "or": true, "not": true, "!": true, "{": true, "time": true,
	"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true, "until": true,
	"builtin": true, "command": true, "exec": true, "noglob": true, "nocorrect": true}

// typedAlone reports whether a command can be typed into a shell that
// marks its prompts with nothing of tmcp's around it: it is typed as
// written (typedAsIs), and it runs nothing that would act on the shell
// itself where the wrapper's subshell keeps it apart (exit, cd, export, a
// variable set…), or in fish, whose runs are in the shell itself anyway,
// nothing that would end the shell. Such a command takes the wrapper, so
// that what it does is the same whichever way it is typed.
func typedAlone(command string, f shellFamily) bool {
	if !plainLine(command) {
		return false
	}
	// A line that begins with "^" is history's quick substitution in bash
	// and zsh (^old^new runs the last command changed): inside the
	// wrapper it begins nothing.
	if f != fishShell && strings.HasPrefix(strings.TrimLeft(command, " "), "^") {
		return false
	}
	whole, commands := scanLine(command, f) // what typedAsIs asks, and the commands
	if !whole {
		return false
	}
	for _, w := range commands {
		if f == fishShell && fishEnds[w] || f != fishShell && (actsOnShell[w] || compound[w] || strings.Contains(w, "=")) {
			return false
		}
	}
	return true
}

// compound are the reserved words of POSIX shells, bash and zsh that open
// or close a compound command. Typed alone, one left open makes the shell
// wait for more lines (as "if then" does in zsh): inside the wrapper's
// parentheses, it is an error the shell reports, and the command is
// handed over.
var compound = map[string]bool{
	"if": true, "then": true, "elif": true, "else": true, "fi": true, "case": true, "esac": true,
	"for": true, "select": true, "while": true, "until": true, "do": true, "done": true,
	"{": true, "}": true, "[[": true, "function": true, "repeat": true, "foreach": true, "end": true, "coproc": true,
}

// actsOnShell are the commands of POSIX shells, bash and zsh that act on
// the shell that runs them: its life, directory, variables, options,
// functions, jobs or history.
var actsOnShell = map[string]bool{
	"exit": true, "logout": true, "exec": true, "return": true, "break": true, "continue": true,
	"cd": true, "pushd": true, "popd": true, "chdir": true,
	"export": true, "unset": true, "set": true, "setopt": true, "unsetopt": true, "shopt": true, "emulate": true,
	"declare": true, "typeset": true, "local": true, "readonly": true, "integer": true, "float": true, "let": true, "read": true,
	"alias": true, "unalias": true, "function": true, "autoload": true, "functions": true, "unfunction": true, "hash": true, "rehash": true,
	"source": true, ".": true, "eval": true, "trap": true, "umask": true, "ulimit": true, "enable": true, "disable": true,
	"bind": true, "bindkey": true, "zle": true, "zmodload": true, "history": true, "fc": true,
	"jobs": true, "fg": true, "bg": true, "wait": true, "disown": true, "suspend": true, "kill": true,
	"shift": true, "getopts": true, "stty": true,
}

// fishEnds are the commands that would end fish when run in it.
var fishEnds = map[string]bool{"exit": true, "exec": true}

// fishBlocks are the words that open a block in fish, or end one.
var fishBlocks = map[string]bool{"if": true, "for": true, "while": true, "begin": true, "function": true, "switch": true, "end": true}

// helperTable remembers the panes whose shell has had its helper typed,
// by the shell's process and name: a shell that replaced it (exec) or a
// new one started in the pane lacks it, which the run finds out when the
// shell says the helper was not found.
type helperTable struct {
	mu     sync.Mutex
	shells map[string]helperKey // by pane id
}

type helperKey struct {
	pid     int
	command string
	nonce   string // the secret the helper's marks carry
}

func newHelperTable() *helperTable {
	return &helperTable{shells: map[string]helperKey{}}
}

// has reports whether the pane's shell has had its helper.
func (t *helperTable) has(paneID string, info tmux.Pane) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	k, ok := t.shells[paneID]
	return ok && k.pid == info.PID && k.command == info.Command
}

// nonce returns the secret the marks of the helper of the pane's shell
// carry, or, for a shell yet to have its helper, a new one for it.
func (t *helperTable) nonce(paneID string, info tmux.Pane) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if k, ok := t.shells[paneID]; ok && k.pid == info.PID && k.command == info.Command {
		return k.nonce
	}
	return newNonce()
}

// add records that the pane's shell has had its helper, whose marks carry
// nonce.
func (t *helperTable) add(paneID string, info tmux.Pane, nonce string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.shells[paneID] = helperKey{info.PID, info.Command, nonce}
}

// newNonce returns a helper's secret: 64 random bits, in hex, which the
// helper writes into its marks, so that a program that prints a job's
// marks (the token is on the screen, in the typed line) cannot end it.
// The helper is handed over with echo off: the nonce is never shown.
func newNonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// hadShell reports whether the pane's process, pid, is a shell that had
// its helper.
func (t *helperTable) hadShell(paneID string, pid int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	k, ok := t.shells[paneID]
	return ok && k.pid == pid
}

// forget makes the next run in the pane type the helper again.
func (t *helperTable) forget(paneID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.shells, paneID)
}

// helperMissingIn reports whether output holds a shell's word that the
// helper was not found: "bash: __tmcp: command not found", "zsh: command
// not found: __tmcp", "fish: Unknown command: __tmcp_r" and the like. The
// echo of a typed line never does: there the helper's name is followed by
// a space.
func helperMissingIn(b []byte) bool {
	for _, name := range []string{"__tmcp: ", "__tmcp_r: ", ": __tmcp\r", ": __tmcp_r\r", ": __tmcp\n", ": __tmcp_r\n"} {
		if bytes.Contains(b, []byte(name)) {
			return true
		}
	}
	return false
}

// A shell that cannot parse a typed line says so on a line of its own,
// naming itself: "bash: syntax error near …", "dash: 1: Syntax error: …",
// "E: mksh: syntax error: …", "zsh: parse error near …"; after its
// prompt, where the line was typed ahead of it and the terminal echoed it
// before. fish names the fault in its own words at the start of a line
// ("fish: Unsupported use of '='…") and keeps the line in its editor.
// Only such a line counts, never the echo of a command that merely holds
// the words: a command told apart wrongly would run twice.
var (
	unparsedSays = regexp.MustCompile(`(?i)\b[a-z]*sh: (?:.*: )?(?:syntax|parse) error`)
	fishJobSays  = regexp.MustCompile(`^fish: Job \d+, `) // a background job's end
)

// unparsedIn reports whether a line of output is a shell of family f
// saying it could not parse a line. A command typed as written that the
// shell cannot parse never ran; handed over, it runs through eval, which
// reports the error as the command's own, with its status. fish says
// other things in the same form, so a run in fish takes its word only
// once no start mark followed it (unparsedGrace).
func unparsedIn(line string, f shellFamily) bool {
	if f == fishShell {
		return strings.HasPrefix(line, "fish: ") && !fishJobSays.MatchString(line) && !helperMissingIn([]byte(line+"\n"))
	}
	// The echo of a typed line holds its opening.
	return unparsedSays.MatchString(line) && !strings.Contains(line, "__tmcp")
}

// unparsedLineIn reports whether raw output holds, after a newline, a
// line for which unparsedIn holds. A line is read as the terminal shows
// it at its start: from its last carriage return, past the escapes that
// begin it (bash writes "\x1b[?2004l\r" before its word).
func unparsedLineIn(b []byte, f shellFamily) bool {
	for i := bytes.IndexByte(b, '\n'); i >= 0; {
		line := b[i+1:]
		next := bytes.IndexByte(line, '\n')
		if next >= 0 {
			line = line[:next]
		}
		line = bytes.TrimRight(line, "\r")
		if k := bytes.LastIndexByte(line, '\r'); k >= 0 {
			line = line[k+1:]
		}
		if unparsedIn(string(leadingCSI.ReplaceAll(line, nil)), f) {
			return true
		}
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

// leadingCSI matches the control sequences at the start of a line.
var leadingCSI = regexp.MustCompile(`^(?:\x1b\[[0-?]*[ -/]*[@-~])+`)
