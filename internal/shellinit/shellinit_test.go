package shellinit

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestScriptNamesEachSupportedShell(t *testing.T) {
	for _, tc := range []struct{ shell, guard string }{
		{"bash", "__tmcp_init"},
		{"/bin/zsh", "__tmcp_init"},
		{"-fish", "__tmcp_init"},
	} {
		s, err := Script(tc.shell)
		if err != nil {
			t.Fatalf("Script(%q): %v", tc.shell, err)
		}
		for _, want := range []string{tc.guard, "133;A;tmcp_cwd=", "133;C;tmcp_n=", "133;D;", "tmcp_n=", "]7;", "file://", "TMCP_NONCE", "@tmcp_marks"} {
			if !strings.Contains(s, want) {
				t.Errorf("Script(%q) lacks %q", tc.shell, want)
			}
		}
	}
}

func TestScriptRefusesAnUnknownShellNamingTheSupportedOnes(t *testing.T) {
	_, err := Script("tcsh")
	if err == nil || !strings.Contains(err.Error(), `"tcsh"`) || !strings.Contains(err.Error(), Supported) {
		t.Fatalf("Script(tcsh) = %v, want an error naming tcsh and %s", err, Supported)
	}
}

// TestScriptsParse checks each snippet with its own shell's parser, where
// the shell is installed.
func TestScriptsParse(t *testing.T) {
	for _, tc := range []struct {
		shell string
		args  []string
	}{
		{"bash", []string{"--norc", "--noprofile", "-n"}},
		{"zsh", []string{"-f", "-n"}},
		{"fish", []string{"--no-config", "-n"}},
	} {
		path, err := exec.LookPath(tc.shell)
		if err != nil {
			t.Logf("%s not installed (scripts/install-deps.sh installs it): not checked", tc.shell)
			continue
		}
		s, _ := Script(tc.shell)
		cmd := exec.Command(path, tc.args...)
		cmd.Stdin = strings.NewReader(s)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s -n on its snippet: %v\n%s", tc.shell, err, out)
		}
	}
}

// TestInjectionFilesParse checks each start-up file tmcp writes with its
// own shell's parser.
func TestInjectionFilesParse(t *testing.T) {
	d, err := WriteDir()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Remove()
	for _, tc := range []struct {
		shell string
		args  []string
		files []string
	}{
		{"bash", []string{"--norc", "--noprofile", "-n"}, []string{"bash/tmcp.bash"}},
		{"zsh", []string{"-f", "-n"}, []string{"zsh/.zshenv", "zsh/.zprofile", "zsh/.zshrc", "zsh/.zlogin"}},
		{"fish", []string{"--no-config", "-n"}, []string{"fish/fish/vendor_conf.d/tmcp.fish"}},
	} {
		path, err := exec.LookPath(tc.shell)
		if err != nil {
			t.Logf("%s not installed (scripts/install-deps.sh installs it): not checked", tc.shell)
			continue
		}
		for _, f := range tc.files {
			if out, err := exec.Command(path, append(tc.args, filepath.Join(d.Path(), f))...).CombinedOutput(); err != nil {
				t.Errorf("%s -n %s: %v\n%s", tc.shell, f, err, out)
			}
		}
	}
}
