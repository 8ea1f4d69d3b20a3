package main

import (
	"testing"

	"github.com/smcscope/smcscope/internal/cli"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/output"
)

// TestDocs holds the man page and completions in deploy/ to what smcdump's
// flags say (go test -run TestDocs -update rewrites them).
func TestDocs(t *testing.T) {
	var (
		o      output.Options
		format string
		i      bool
		k      int
	)
	fs := newFlags(&o, &format, &i, &k)
	testutil.GoldenFile(t, "../../deploy/man/smcdump.1", []byte(cli.Man(page, fs, cli.Date)))
	testutil.GoldenFile(t, "../../deploy/completions/smcdump.bash", []byte(cli.Bash(page, fs)))
	testutil.GoldenFile(t, "../../deploy/completions/_smcdump", []byte(cli.Zsh(page, fs)))
	testutil.GoldenFile(t, "../../deploy/completions/smcdump.fish", []byte(cli.Fish(page, fs)))
}
