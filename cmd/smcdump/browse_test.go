package main

import (
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestBrowseNoTerminal runs -I the way a service or `setsid smcdump -I </dev/null`
// does, with no controlling terminal: one line saying what to use instead, exit 2,
// not tcell's "open /dev/tty" error.
func TestBrowseNoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testutil.GoBuild(t, ".", "smcdump")
	stdout, stderr, code := testutil.RunNoTTY(t, bin, "-I", "-r", "../../samples/pingpong.pcap")
	want := "smcdump: -I: no terminal: the browser needs one; without -I, -r FILE prints the frames (-V the fields, -z smc,expert the findings)\n"
	if code != 2 || stderr != want || stdout != "" {
		t.Errorf("exit %d, stderr %q, stdout %q; want 2, %q, nothing", code, stderr, stdout, want)
	}
}
