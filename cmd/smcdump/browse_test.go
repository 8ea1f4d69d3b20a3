package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestBrowseNoTerminal runs -I the way a service or `setsid smcdump -I </dev/null`
// does, with no controlling terminal: one line saying what to use instead, exit 2,
// not tcell's "open /dev/tty" error.
func TestBrowseNoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "smcdump")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-I", "-r", "../../samples/pingpong.pcap")
	var o, e bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, &o, &e // nil stdin is /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	want := "smcdump: -I: no terminal: the browser needs one; without -I, -r FILE prints the frames (-V the fields, -z smc,expert the findings)\n"
	if code := cmd.ProcessState.ExitCode(); code != 2 || e.String() != want || o.Len() != 0 {
		t.Errorf("exit %d, stderr %q, stdout %q; want 2, %q, nothing", code, &e, &o, want)
	}
}
