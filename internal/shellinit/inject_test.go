package shellinit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestInjectSetsWhatEachShellReadsAndKeepsWhatThePersonHad(t *testing.T) {
	d, err := WriteDir()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Remove()
	p := d.Path()
	for _, tc := range []struct {
		name, shell string
		person      map[string]string
		want        []string // besides the nonce; nil: nothing injected
	}{
		{"bash", "/bin/bash", nil, []string{"POSIXLY_CORRECT=1", "ENV=" + p + "/bash/tmcp.bash"}},
		{"bash with ENV", "/usr/bin/bash", map[string]string{"ENV": "/home/me/.shinit"},
			[]string{"POSIXLY_CORRECT=1", "ENV=" + p + "/bash/tmcp.bash", "TMCP_SAVED_ENV=/home/me/.shinit"}},
		{"bash in POSIX mode", "/bin/bash", map[string]string{"POSIXLY_CORRECT": ""}, nil},
		{"zsh", "/bin/zsh", nil, []string{"ZDOTDIR=" + p + "/zsh"}},
		{"zsh with ZDOTDIR", "/bin/zsh", map[string]string{"ZDOTDIR": "/home/me/.config/zsh"},
			[]string{"ZDOTDIR=" + p + "/zsh", "TMCP_SAVED_ZDOTDIR=/home/me/.config/zsh"}},
		{"fish", "/usr/bin/fish", nil, []string{"XDG_DATA_DIRS=" + p + "/fish:/usr/local/share:/usr/share", "TMCP_XDG_DATA_DIRS_UNSET=1"}},
		{"fish with XDG_DATA_DIRS", "/usr/bin/fish", map[string]string{"XDG_DATA_DIRS": "/opt/share"},
			[]string{"XDG_DATA_DIRS=" + p + "/fish:/opt/share"}},
		{"sh", "/bin/sh", nil, nil},
		{"tcsh", "/bin/tcsh", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, ok := d.Inject(tc.shell, func(name string) (string, bool) {
				v, ok := tc.person[name]
				return v, ok
			})
			if tc.person == nil && Injects(tc.shell) != ok {
				t.Errorf("Injects(%s) = %v, Inject's ok %v", tc.shell, Injects(tc.shell), ok)
			}
			if tc.want == nil {
				if ok || in.Env != nil {
					t.Fatalf("Inject(%s) = %+v, want nothing injected", tc.shell, in)
				}
				return
			}
			if !ok || in.Shell != filepath.Base(tc.shell) || len(in.Nonce) != 24 {
				t.Fatalf("Inject(%s) = %+v, %v; want the shell's name and a 24-digit nonce", tc.shell, in, ok)
			}
			want := append(slices.Clone(tc.want), NonceVar+"="+in.Nonce)
			if !slices.Equal(in.Env, want) {
				t.Errorf("Inject(%s).Env = %q, want %q", tc.shell, in.Env, want)
			}
			again, _ := d.Inject(tc.shell, func(string) (string, bool) { return "", false })
			if again.Nonce == in.Nonce {
				t.Errorf("two injections share nonce %s", in.Nonce)
			}
		})
	}
}

// TestWriteDirIsPrivateAndHoldsEachShellsFiles: the directory is the
// owner's alone, and holds the files each shell is pointed at, each
// loading the snippet the shell would.
func TestWriteDirIsPrivateAndHoldsEachShellsFiles(t *testing.T) {
	d, err := WriteDir()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(d.Path())
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the directory: %v, mode %v; want 0700", err, st.Mode().Perm())
	}
	for file, holds := range map[string]string{
		"bash/tmcp.bash":                    "init.bash",
		"bash/init.bash":                    "__tmcp_init",
		"zsh/.zshenv":                       ".zshenv",
		"zsh/.zprofile":                     ".zprofile",
		"zsh/.zshrc":                        "init.zsh",
		"zsh/.zlogin":                       ".zlogin",
		"zsh/init.zsh":                      "__tmcp_init",
		"fish/fish/vendor_conf.d/tmcp.fish": "init.fish",
		"fish/init.fish":                    "__tmcp_init",
	} {
		b, err := os.ReadFile(filepath.Join(d.Path(), file))
		if err != nil || !strings.Contains(string(b), holds) {
			t.Errorf("%s: %v; want a file that holds %q", file, err, holds)
		}
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Path()); !os.IsNotExist(err) {
		t.Errorf("after Remove the directory is still there: %v", err)
	}
}
