// Package shellinit holds the shell integration snippets that "tmcp init
// SHELL" prints: for bash, zsh and fish, each makes the shell emit the
// semantic prompt marks OSC 133 A (prompt start), B (command line start),
// C (output start) and D;STATUS (command end), and OSC 7 (the working
// directory, as file://HOST/PATH), which tmcp reads from a pane's output
// to know when any command ends and with what status.
//
// Each snippet guards itself with a shell variable, so loading it twice
// emits each mark once, and it adds to what is there (PROMPT_COMMAND,
// PS0, precmd hooks, the prompt) rather than replacing it, so a prompt
// framework or a terminal's own integration keeps working beside it.
package shellinit

import (
	_ "embed"
	"fmt"
	"strings"
)

var (
	//go:embed init.bash
	bashScript string
	//go:embed init.zsh
	zshScript string
	//go:embed init.fish
	fishScript string
)

// Supported names the shells a snippet exists for.
const Supported = "bash, zsh, fish"

// HowToLoad says, for each supported shell, the line that loads its
// snippet and the rc file it goes in.
const HowToLoad = `eval "$(tmcp init bash)" in ~/.bashrc, eval "$(tmcp init zsh)" in ~/.zshrc, or tmcp init fish | source in ~/.config/fish/config.fish`

// Script returns the snippet for shell, one of [Supported] (a path, or a
// login shell's leading dash, is accepted too).
func Script(shell string) (string, error) {
	name := shell[strings.LastIndexByte(shell, '/')+1:]
	switch strings.TrimPrefix(name, "-") {
	case "bash":
		return bashScript, nil
	case "zsh":
		return zshScript, nil
	case "fish":
		return fishScript, nil
	}
	return "", fmt.Errorf("no shell integration for %q: the shells supported are %s", shell, Supported)
}
