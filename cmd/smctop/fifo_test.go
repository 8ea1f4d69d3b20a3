package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestOnceFIFOStopped: smctop -r FIFO --once whose writer wrote part of a
// capture and went quiet. The wait for more is in read(2), which the Go
// runtime's signal handler does not end: SIGTERM must still end the
// replay, the snapshot show what was read, and the exit status say the
// capture was not read to its end; so too when the writer went quiet
// inside the file header (nothing was read: the snapshot of no frames).
func TestOnceFIFOStopped(t *testing.T) {
	bin := build(t)
	data, err := os.ReadFile("../../testdata/reference/pingpong.pcap")
	if err != nil {
		t.Fatal(err)
	}
	end := 24 // the file header, then whole records past the handshake
	for range 200 {
		end += 16 + int(binary.LittleEndian.Uint32(data[end+8:]))
	}
	for _, c := range []struct {
		name  string
		wrote []byte
	}{{"past the handshake", data[:end]}, {"inside the file header", data[:6]}} {
		t.Run(c.name, func(t *testing.T) {
			path := testutil.FIFO(t)
			cmd := exec.Command(bin, "-r", path, "--once")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			w := testutil.FIFOWriter(t, path, "smctop")
			if _, err := w.Write(c.wrote); err != nil {
				t.Fatal(err)
			}
			testutil.Drained(t, w, "smctop")
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			testutil.StoppedBySIGTERM(t, done, "smctop", &errb)
			// What was read is in it, but nothing says when smctop had
			// fed it all: the snapshot is asked for, not its counts.
			if !strings.Contains(out.String(), "== overview") {
				t.Errorf("no snapshot printed:\n%s", out.String())
			}
		})
	}
}
