package shellinit

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "embed"
)

// Injection: a shell tmcp starts (bash, zsh or fish, in a pane made with
// no command) is started with the integration already loaded, as VS Code,
// kitty and Ghostty start theirs, through its environment alone: the pane
// keeps tmux's own way of starting its shell (a login shell, argv[0]
// "-bash"), and respawning it later without tmcp starts it plainly.
//
//   - bash: POSIXLY_CORRECT puts it in POSIX mode, where the one start-up
//     file it reads is $ENV, tmcp's; that file leaves POSIX mode, puts ENV
//     back, and reads the person's files as bash would have (for a login
//     shell /etc/profile and the first of ~/.bash_profile, ~/.bash_login,
//     ~/.profile; else /etc/bash.bashrc and ~/.bashrc), then the snippet.
//   - zsh: ZDOTDIR names tmcp's directory, whose .zshenv, .zprofile,
//     .zshrc and .zlogin each read the person's own with their ZDOTDIR
//     back; .zshrc then loads the snippet; the last puts ZDOTDIR back.
//   - fish: XDG_DATA_DIRS begins with tmcp's entry, whose
//     fish/vendor_conf.d/tmcp.fish takes the entry out again and loads
//     the snippet at the first prompt, after the person's config.fish.
//
// The snippet takes the nonce tmcp passes in TMCP_NONCE.

var (
	//go:embed inject/bash.bash
	injectBash string
	//go:embed inject/zsh.zsh
	injectZsh string
	//go:embed inject/fish.fish
	injectFish string
)

// NonceVar is the variable that hands a shell the nonce its marks carry.
const NonceVar = "TMCP_NONCE"

// Names of the variables that carry what the person had, for the shell to
// put back: set when they had the variable, unset when they did not.
const (
	savedENV      = "TMCP_SAVED_ENV"
	savedZDOTDIR  = "TMCP_SAVED_ZDOTDIR"
	xdgDataUnset  = "TMCP_XDG_DATA_DIRS_UNSET"
	defaultXDGDat = "/usr/local/share:/usr/share" // the XDG base directory default
)

// zshFiles are the start-up files zsh reads from ZDOTDIR, in order, each
// with the condition (a zsh [[ ]] expression) under which it is the last
// zsh reads, and what it does after the person's own.
var zshFiles = []struct{ name, last, after string }{
	{".zshenv", "! -o rcs || ( ! -o interactive && ! -o login )", ""},
	{".zprofile", "! -o rcs", ""},
	{".zshrc", "! -o rcs || ! -o login", `[[ -o interactive ]] && source "$__tmcp_zd/init.zsh"`},
	{".zlogin", "-n 1", ""},
}

// A Dir is tmcp's private directory of start-up files that load the
// integration into the shells it starts. It holds tmcp's files only,
// nothing of the person's: theirs are read where they are.
type Dir struct {
	path string
}

// WriteDir writes the start-up files into a new private directory (mode
// 0700) under the system's temporary directory.
func WriteDir() (*Dir, error) {
	path, err := os.MkdirTemp("", "tmcp-shell-")
	if err != nil {
		return nil, fmt.Errorf("making the shell integration directory: %w", err)
	}
	d := &Dir{path: path}
	files := map[string]string{
		"bash/tmcp.bash":                    injectBash,
		"bash/init.bash":                    bashScript,
		"zsh/init.zsh":                      zshScript,
		"fish/fish/vendor_conf.d/tmcp.fish": injectFish,
		"fish/init.fish":                    fishScript,
	}
	for _, f := range zshFiles {
		r := strings.NewReplacer("@FILE@", f.name, "@LAST@", f.last, "@AFTER@", f.after)
		files["zsh/"+f.name] = r.Replace(injectZsh)
	}
	for name, text := range files {
		file := filepath.Join(path, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			d.Remove()
			return nil, fmt.Errorf("making the shell integration directory: %w", err)
		}
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			d.Remove()
			return nil, fmt.Errorf("writing the shell integration file %s: %w", name, err)
		}
	}
	return d, nil
}

// Path returns the directory.
func (d *Dir) Path() string { return d.path }

// Remove removes the directory and its files.
func (d *Dir) Remove() error { return os.RemoveAll(d.path) }

// Injects reports whether there is a way to start shell (a path, or a
// name) with the integration loaded: bash, zsh and fish.
func Injects(shell string) bool {
	switch filepath.Base(shell) {
	case "bash", "zsh", "fish":
		return true
	}
	return false
}

// Injection is how to start a shell with the integration loaded.
type Injection struct {
	Shell string   // the shell's name: bash, zsh or fish
	Nonce string   // the secret its marks will carry
	Env   []string // NAME=VALUE pairs to start it with (tmux's -e)
}

// Inject returns how to start shell (a path, as tmux's default-shell
// names it) with the integration loaded and a fresh nonce, or ok false
// when there is no way for that shell. lookup gives the value a variable
// would have in the new pane, and whether it is set there. A bash whose
// person asked for POSIX mode (POSIXLY_CORRECT) is left as it is: tmcp's
// file would take them out of it.
func (d *Dir) Inject(shell string, lookup func(name string) (string, bool)) (in Injection, ok bool) {
	var env []string
	name := filepath.Base(shell)
	switch name {
	case "bash":
		if _, posix := lookup("POSIXLY_CORRECT"); posix {
			return Injection{}, false
		}
		env = append(env, "POSIXLY_CORRECT=1", "ENV="+filepath.Join(d.path, "bash", "tmcp.bash"))
		if v, set := lookup("ENV"); set {
			env = append(env, savedENV+"="+v)
		}
	case "zsh":
		env = append(env, "ZDOTDIR="+filepath.Join(d.path, "zsh"))
		if v, set := lookup("ZDOTDIR"); set {
			env = append(env, savedZDOTDIR+"="+v)
		}
	case "fish":
		entry := filepath.Join(d.path, "fish")
		if v, set := lookup("XDG_DATA_DIRS"); set {
			env = append(env, "XDG_DATA_DIRS="+entry+":"+v)
		} else {
			// fish reads the default dirs only when the variable is unset.
			env = append(env, "XDG_DATA_DIRS="+entry+":"+defaultXDGDat, xdgDataUnset+"=1")
		}
	default:
		return Injection{}, false
	}
	nonce := newNonce()
	return Injection{Shell: name, Nonce: nonce, Env: append(env, NonceVar+"="+nonce)}, true
}

// newNonce returns a fresh secret for a shell's marks: 96 random bits in
// hex, as the snippets make their own.
func newNonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
