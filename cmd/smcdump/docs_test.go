package main

import (
	"os"
	"strings"
	"testing"
	"unicode"

	"github.com/smcscope/smcscope/internal/cli"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/output"
	"github.com/smcscope/smcscope/track"
)

// TestDocs holds the man page and completions in deploy/ to what smcdump's
// flags say (go test -run TestDocs -update rewrites them).
func TestDocs(t *testing.T) {
	var (
		o      output.Options
		format string
		i      bool
		k      int
		x      string
		bo     browseOptions
	)
	fs := newFlags(&o, &format, &i, &k, &x, &bo)
	testutil.GoldenFile(t, "../../deploy/man/smcdump.1", []byte(cli.Man(page, fs, cli.Date)))
	testutil.GoldenFile(t, "../../deploy/completions/smcdump.bash", []byte(cli.Bash(page, fs)))
	testutil.GoldenFile(t, "../../deploy/completions/_smcdump", []byte(cli.Zsh(page, fs)))
	testutil.GoldenFile(t, "../../deploy/completions/smcdump.fish", []byte(cli.Fish(page, fs)))
	for _, err := range cli.CheckDeployed("../../deploy/completions", page, fs) {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestViewCompletions: every view of the tracker is offered by -z's
// completion in each shell (smc,timeline, and smc,expert, as prefixes).
func TestViewCompletions(t *testing.T) {
	for _, file := range []string{"smcdump.bash", "_smcdump", "smcdump.fish"} {
		b, err := os.ReadFile("../../deploy/completions/" + file)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range track.Views() {
			// smc,timeline,CONN completes to smc,timeline,
			word := strings.TrimRightFunc(v[0], unicode.IsUpper)
			if !strings.Contains(string(b), word) {
				t.Errorf("%s: -z %s not offered", file, v[0])
			}
		}
	}
}
