package main

import (
	"testing"

	"github.com/smcscope/smcscope/internal/cli"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestDocs holds the man page and completions in deploy/ to what smctop's
// flags say (go test -run TestDocs -update rewrites them).
func TestDocs(t *testing.T) {
	var c config
	testutil.GoldenFile(t, "../../deploy/man/smctop.1", []byte(cli.Man(page, newFlags(&c), cli.Date)))
	testutil.GoldenFile(t, "../../deploy/completions/smctop.bash", []byte(cli.Bash(page, newFlags(&c))))
	testutil.GoldenFile(t, "../../deploy/completions/_smctop", []byte(cli.Zsh(page, newFlags(&c))))
	testutil.GoldenFile(t, "../../deploy/completions/smctop.fish", []byte(cli.Fish(page, newFlags(&c))))
	for _, err := range cli.CheckDeployed("../../deploy/completions", page, newFlags(&c)) {
		if err != nil {
			t.Error(err)
		}
	}
}
