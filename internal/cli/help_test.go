package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestHelp: usage lines, summary, the flags under their groups with
// placeholders and defaults, then help and version, all on one layout.
func TestHelp(t *testing.T) {
	p := demo
	p.Groups = []Group{{"Input", []string{"r"}}, {"Output", []string{"o", "count"}}}
	var b strings.Builder
	Help(&b, p, testFlags())
	got := b.String()
	for _, want := range []string{
		"Usage: demo [-r FILE]\nA demo.\n\nInput:\n  -r FILE               read capture FILE\n\nOutput:\n  -o FORMAT             output FORMAT (default text)\n  --count N",
		"\nOther flags:\n  --once                one snapshot - and exit\n",
		"\nHelp:\n  -h, --help            print this help and exit\n  --version ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("help lacks %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if len(line) > 79 {
			t.Errorf("line over 79 columns: %q", line)
		}
	}
}

// TestCheck: a flag in no group, a group or completion list naming a flag
// that does not exist, are each reported.
func TestCheck(t *testing.T) {
	p := demo
	p.Groups = []Group{{"Input", []string{"r", "gone"}}}
	err := Check(p, testFlags())
	for _, want := range []string{`group "Input" lists --gone`, "-o is in no group", "--once is in no group"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v, want it to say %q", err, want)
		}
	}
	p.Groups = []Group{{"All", []string{"r", "o", "once", "count"}}}
	if err := Check(p, testFlags()); err != nil {
		t.Errorf("Check with every flag grouped: %v", err)
	}
}

// TestVersion: the module version, the revision and its time, a modified
// tree, and the Go version, from the build info.
func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-29T08:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "smcdump (smcscope) v1.2.3\nrevision: abc123 (modified)\ncommit time: 2026-11-29T08:00:00Z\ngo: go1.26.8 linux/amd64\n"
	if got := versionOf("smcdump", bi, "linux/amd64"); got != want {
		t.Errorf("version:\n%s\nwant\n%s", got, want)
	}
	bi = &debug.BuildInfo{GoVersion: "go1.26.8"}
	if got := versionOf("smctop", bi, "linux/amd64"); !strings.Contains(got, "smctop (smcscope) (devel)\nrevision: unknown (no VCS stamp") {
		t.Errorf("no VCS information: %s", got)
	}
}

// TestSynopsisWords: a usage line breaks between its parts, never inside
// an optional one.
func TestSynopsisWords(t *testing.T) {
	got := strings.Join(synopsisWords("-r FILE [-T text|json [-e FIELD]...] [-z VIEW]...  -q"), "|")
	if want := "-r|FILE|[-T text|json [-e FIELD]...]|[-z VIEW]...|-q"; got != want {
		t.Errorf("synopsisWords = %s, want %s", got, want)
	}
}
