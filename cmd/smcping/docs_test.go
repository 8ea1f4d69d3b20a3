package main

import (
	"testing"

	"github.com/smcscope/smcscope/internal/cli"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/probe"
)

// TestDocs holds the man page and completions in deploy/ to what smcping's
// flags say (go test -run TestDocs -update rewrites them).
func TestDocs(t *testing.T) {
	fs := probe.FlagSet()
	testutil.GoldenFile(t, "../../deploy/man/smcping.1", []byte(cli.Man(page, fs, cli.Date)))
	testutil.GoldenFile(t, "../../deploy/completions/smcping.bash", []byte(cli.Bash(page, fs)))
	testutil.GoldenFile(t, "../../deploy/completions/_smcping", []byte(cli.Zsh(page, fs)))
	testutil.GoldenFile(t, "../../deploy/completions/smcping.fish", []byte(cli.Fish(page, fs)))
	for _, err := range cli.CheckDeployed("../../deploy/completions", page, fs) {
		if err != nil {
			t.Error(err)
		}
	}
}
