package cli

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func testFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.String("r", "", "read capture `FILE`")
	fs.String("o", "text", "output `FORMAT`")
	fs.Bool("once", false, "one snapshot - and exit")
	fs.Int("count", 0, "print `N` snapshots")
	return fs
}

var demo = Page{Name: "demo", Summary: "a demo", Synopsis: []string{"[-r FILE]"}, Description: []string{".starts with a dot"},
	Values: map[string][]string{"o": {"text", "json"}}}

// TestMan: every flag is in OPTIONS with its placeholder and default,
// dashes and a leading dot are escaped for roff.
func TestMan(t *testing.T) {
	m := Man(demo, testFlags(), Date)
	for _, want := range []string{`.BI \-r " " FILE`, `.B \-\-once`, `output FORMAT (default text)`, `\&.starts with a dot`, `one snapshot \- and exit`} {
		if !strings.Contains(m, want) {
			t.Errorf("man page lacks %q:\n%s", want, m)
		}
	}
}

// TestCompletionsParse: the scripts are valid for their shells (each
// shell present checks its own; bash is always there).
func TestCompletionsParse(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		shell, file, text string
		args              []string
	}{
		{"bash", "demo.bash", Bash(demo, testFlags()), []string{"-n"}},
		{"zsh", "_demo", Zsh(demo, testFlags()), []string{"-n"}},
		{"fish", "demo.fish", Fish(demo, testFlags()), []string{"--no-execute"}},
	} {
		sh, err := exec.LookPath(c.shell)
		if err != nil {
			t.Logf("%s not installed: its completion is not parsed here", c.shell)
			continue
		}
		p := filepath.Join(dir, c.file)
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(sh, append(c.args, p)...).CombinedOutput(); err != nil {
			t.Errorf("%s %v %s: %v\n%s\n%s", c.shell, c.args, p, err, out, c.text)
		}
	}
	b := Bash(demo, testFlags())
	if !strings.Contains(b, `-o) COMPREPLY=($(compgen -W "text json"`) || !strings.Contains(b, `-r) COMPREPLY=($(compgen -f`) ||
		!strings.Contains(b, `-[!-]*r) COMPREPLY=($(compgen -f`) {
		t.Errorf("bash completion:\n%s", b)
	}
}

// TestCheckCompletion: each shell's script offers every flag and value
// word, and a script that lacks one is caught.
func TestCheckCompletion(t *testing.T) {
	fs := testFlags()
	for shell, script := range map[string]string{"bash": Bash(demo, fs), "zsh": Zsh(demo, fs), "fish": Fish(demo, fs)} {
		if err := CheckCompletion(shell, script, demo, fs); err != nil {
			t.Error(err)
		}
		fs.Bool("new", false, "a flag added after the script was made")
		if err := CheckCompletion(shell, script, demo, fs); err == nil || !strings.Contains(err.Error(), "--new") {
			t.Errorf("%s: a new flag missing from the script: %v", shell, err)
		}
		fs = testFlags()
		p := demo
		p.Values = map[string][]string{"o": {"text", "json", "yaml"}}
		if err := CheckCompletion(shell, script, p, fs); err == nil || !strings.HasSuffix(err.Error(), "-o yaml") {
			t.Errorf("%s: a new value missing from the script: %v", shell, err)
		}
	}
}
