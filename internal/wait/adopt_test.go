package wait

import (
	"slices"
	"strings"
	"testing"
)

func TestOutputInHistory(t *testing.T) {
	helperRow := "#  trap 'stty echo' INT;stty -echo;printf '\\033]133;R;tmcp-fd098\\007';IFS= read -r __tmcp_l"
	cases := []struct {
		name    string
		rows    []string
		running bool
		want    []string
		found   bool
	}{
		{"ended, back at the prompt",
			[]string{helperRow, "# (__tmcp fd098&&(echo a; echo b));__tmcp fd098 $?", "a", "b", "# "}, false, []string{"a", "b"}, true},
		{"ended, its prompt not drawn yet",
			[]string{"# (__tmcp fd098&&(echo a; echo b));__tmcp fd098 $?", "a", "b"}, false, []string{"a", "b"}, true},
		{"running, a line like the prompt is output",
			[]string{"# (__tmcp fd098&&(echo a; sleep 9));__tmcp fd098 $?", "# a"}, true, []string{"# a"}, true},
		{"running",
			[]string{"# (__tmcp fd098&&(echo a; sleep 9));__tmcp fd098 $?", "a"}, true, []string{"a"}, true},
		{"ended with no output",
			[]string{"$ (__tmcp fd098&&(true));__tmcp fd098 $?", "$ "}, false, []string{}, true},
		{"the person ran more since: taken as output, up to the last prompt",
			[]string{"$ (__tmcp fd098&&(echo a));__tmcp fd098 $?", "a", "$ ls", "file", "$ "}, false, []string{"a", "$ ls", "file"}, true},
		{"tmcp ran more since: cut at its next run",
			[]string{"$ (__tmcp fd098&&(echo a));__tmcp fd098 $?", "a", "$ (__tmcp 11111&&(echo b));__tmcp 11111 $?", "b", "$ "}, false, []string{"a"}, true},
		{"a prompt glued to the output, drawn after a line typed ahead",
			[]string{"$ (__tmcp fd098&&(sleep 1; echo ready));__tmcp fd098 $?", "$ ready", "$ cost", "$ "}, false, []string{"ready", "$ cost"}, true},
		{"typed ahead, ended before its next prompt: the prompt learned from other runs typed ahead",
			[]string{"2000", "(__tmcp 83a53&&(echo tok; exit 6));__tmcp 83a53 $?", "soak$ tok", "(__tmcp fd098&&(sleep 1; echo ready));__tmcp fd098 $?", "soak$ ready"},
			false, []string{"ready"}, true},
		{"typed ahead, the other runs' output beginning alike",
			[]string{"(__tmcp 11111&&(echo ready-1 ok));__tmcp 11111 $?", "soak$ ready-1 ok", "(__tmcp fd098&&(echo ready-2 ok));__tmcp fd098 $?", "soak$ ready-2 ok", "soak$ "},
			false, []string{"ready-2 ok"}, true},
		{"typed ahead alone, ended before its next prompt: the row kept whole, not taken for the prompt, and not settled",
			[]string{"(__tmcp fd098&&(sleep 1; echo ready));__tmcp fd098 $?", "soak$ ready"}, false, []string{"soak$ ready"}, true},
		{"typed ahead alone, its next prompt drawn",
			[]string{"1999", "2000", "(__tmcp fd098&&(sleep 1; echo ready));__tmcp fd098 $?", "soak$ ready", "soak$ "}, false, []string{"ready"}, true},
		{"kept out of history: a leading space",
			[]string{"$  (__tmcp fd098&&(echo a));__tmcp fd098 $? -", "a", "$ "}, false, []string{"a"}, true},
		{"the last of two runs of the same token's rows",
			[]string{"$ (__tmcp fd098&&(echo old));__tmcp fd098 $?", "old", "$ (__tmcp fd098&&(echo new));__tmcp fd098 $?", "new", "$ "}, false, []string{"new"}, true},
		{"handed over",
			[]string{"$ __tmcp_r fd098&&(__tmcp fd098&&(__tmcp_x));__tmcp fd098 $? # for i in", "1", "2", "$ "}, false, []string{"1", "2"}, true},
		{"zsh: nocorrect first",
			[]string{"% (nocorrect __tmcp fd098&&(echo a));__tmcp fd098 $?", "a", "% (nocorrect __tmcp 11111&&(echo b));__tmcp 11111 $?", "b", "% "}, false, []string{"a"}, true},
		{"zsh, handed over",
			[]string{"% nocorrect __tmcp_r fd098&&(__tmcp fd098;__tmcp_x);__tmcp fd098 $? '# for i in'", "1", "2", "% "}, false, []string{"1", "2"}, true},
		{"fish, with the spaces typed after its lines, and its next run",
			[]string{"root@vm /tmp#  __tmcp fd098 ", "root@vm /tmp# echo a ", "a", "root@vm /tmp#  __tmcp 11111 ", "root@vm /tmp# echo b ", "b", "root@vm /tmp# "}, false, []string{"a"}, true},
		{"fish: the job's name, then the command",
			[]string{"root@vm /tmp#  __tmcp fd098", "root@vm /tmp# echo a", "a", "root@vm /tmp# "}, false, []string{"a"}, true},
		{"fish, handed over",
			[]string{"root@vm /tmp#  __tmcp_r fd098", `root@vm /tmp#  eval "$__tmcp_cmd" # for i`, "1", "root@vm /tmp# "}, false, []string{"1"}, true},
		{"tmcp's next run typed ahead of the prompt",
			[]string{"soak$ (__tmcp fd098&&(sleep 1; echo ready));__tmcp fd098 $?", "ready", "(__tmcp 11111&&(echo b; exit 3));__tmcp 11111 $?", "soak$ b", "soak$ "}, false, []string{"ready"}, true},
		{"typed ahead of the prompt itself, its prompt glued to the output",
			[]string{"soak$ (__tmcp 22222&&(true));__tmcp 22222 $?", "(__tmcp fd098&&(sleep 1; echo ready));__tmcp fd098 $?", "soak$ ready", "soak$ (__tmcp 11111&&(seq 2));__tmcp 11111 $?", "1", "2", "soak$ "}, false, []string{"ready"}, true},
		{"typed ahead, then a long output typed ahead of its prompt",
			[]string{"(__tmcp fd098&&(echo a));__tmcp fd098 $?", "soak$ a", "(__tmcp 11111&&(seq 3));__tmcp 11111 $?", "soak$ 1", "2", "3", "soak$ "}, false, []string{"a"}, true},
		{"running, typed ahead of its prompt",
			[]string{"soak$ (__tmcp 22222&&(true));__tmcp 22222 $?", "(__tmcp fd098&&(sleep 2; echo ready));__tmcp fd098 $?", "soak$ "}, true, []string{""}, true},
		{"ended, typed ahead of its prompt, after a run of its own shell's helper",
			[]string{"soak$  trap 'stty echo' INT;stty -echo;printf '\\033]133;R;tmcp-dd2ee\\007';IFS= read -r __tmcp_l;stty echo;trap - INT;eval \"$__tmcp_l\"",
				"soak$ (__tmcp dd2ee&&(echo before));__tmcp dd2ee $?", "before", "(__tmcp fd098&&(sleep 2; echo across));__tmcp fd098 $?", "soak$ across", "soak$ "},
			false, []string{"across"}, true},
		{"ended, typed ahead of its prompt, the next prompt not drawn yet",
			[]string{"soak$ (__tmcp 11111&&(true));__tmcp 11111 $?", "(__tmcp fd098&&(sleep 2; echo across));__tmcp fd098 $?", "soak$ across"},
			false, []string{"across"}, true},
		{"scrolled out of the history",
			[]string{"a", "b", "$ "}, false, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, found, settled := outputInHistory(c.rows, "fd098", c.running)
			if found != c.found || !slices.Equal(got, c.want) {
				t.Fatalf("outputInHistory = %q, %v; want %q, %v", got, found, c.want, c.found)
			}
			// Only a job that ended typed ahead of a prompt not known waits
			// for the next prompt to be drawn.
			if want := !strings.Contains(c.name, "not settled"); settled != want {
				t.Errorf("settled %v, want %v", settled, want)
			}
		})
	}
}

func TestAloneOutputInHistory(t *testing.T) {
	const command = "echo a; sleep 1; echo b"
	for _, tc := range []struct {
		name    string
		rows    []string
		running bool
		want    []string
		found   bool
	}{
		{"ended, back at the prompt", []string{"$ ls", "f", "$ " + command, "a", "b", "$ "}, false, []string{"a", "b"}, true},
		{"ended, the prompt's trailing blank trimmed", []string{"~ $ " + command, "a", "b", "~ $"}, false, []string{"a", "b"}, true},
		{"ended, the person typing at the next prompt", []string{"$ " + command, "a", "b", "$ git st"}, false, []string{"a", "b"}, true},
		{"the same command run twice: the last", []string{"$ " + command, "x", "$ " + command, "a", "b", "$ "}, false, []string{"a", "b"}, true},
		{"running, a line like the prompt is output", []string{"$ " + command, "$ a"}, true, []string{"$ a"}, true},
		{"ended with no output", []string{"$ " + command, "$ "}, false, []string{}, true},
		{"its row scrolled out of the history", []string{"a", "b", "$ "}, false, nil, false},
		{"the command alone on a row is no typed line", []string{command, "a", "$ "}, false, nil, false},
	} {
		lines, found := aloneOutputInHistory(tc.rows, command, tc.running)
		if found != tc.found || !slices.Equal(lines, tc.want) {
			t.Errorf("%s: lines %q found %v, want %q %v", tc.name, lines, found, tc.want, tc.found)
		}
	}
}
