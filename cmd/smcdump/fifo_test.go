package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestReadFIFO: smcdump -r FIFO, as fed by tcpdump -w FIFO. The frames
// read are printed while the writer pauses, not when a buffer fills; a
// signal ends the run whether smcdump waits for the writer's first bytes
// or its next ones (the wait is in read(2), which the Go runtime's
// signal handler does not end); and --export-tcp, which reads its input
// twice, refuses a FIFO rather than wait for a second writer.
func TestReadFIFO(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testutil.GoBuild(t, ".", "smcdump")
	data, err := os.ReadFile("../../testdata/reference/pingpong.pcap")
	if err != nil {
		t.Fatal(err)
	}
	const frames = 30
	end := 24 // the file header, then frames whole records
	for range frames {
		end += 16 + int(binary.LittleEndian.Uint32(data[end+8:]))
	}

	fields := []string{"-T", "fields", "-e", "frame.number"}
	for _, c := range []struct {
		name  string
		args  []string
		wrote []byte // what the writer writes before it pauses
		lines int    // what is printed meanwhile
		after string // what is printed once stopped, if said
	}{
		{"fields, paused after some frames", fields, data[:end], frames, ""},
		{"text, paused after some frames", nil, data[:end], frames, ""},
		{"tracker fields, paused after some frames", []string{"-T", "fields", "-e", "smc.conn.id"}, data[:end], frames, ""},
		{"paused before the file header", fields, nil, 0, ""},
		// Nothing read prints as a capture of no frames: a JSON
		// document a reader can parse.
		{"JSON, paused inside the file header", []string{"-T", "json"}, data[:6], 0, "[]"},
		{"JSON and a view, paused inside the file header", []string{"-T", "json", "-z", "smc,conns"}, data[:6], 0, `{"frames":[],"views":{`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := testutil.FIFO(t)
			cmd := exec.Command(bin, append([]string{"-r", path, "-a"}, c.args...)...)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			w := testutil.FIFOWriter(t, path, "smcdump")
			if _, err := w.Write(c.wrote); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string)
			done := make(chan error, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
				done <- cmd.Wait()
			}()
			for n := 1; n <= c.lines; n++ {
				select {
				case _, ok := <-lines:
					if !ok {
						t.Fatalf("smcdump ended after %d lines: %s", n-1, errb.String())
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("%d lines printed while the writer paused, want %d", n-1, c.lines)
				}
			}
			if len(c.wrote) > 0 {
				testutil.Drained(t, w, "smcdump")
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			rest := make(chan string, 1)
			go func() {
				var b strings.Builder
				for l := range lines {
					b.WriteString(l + "\n")
				}
				rest <- b.String()
			}()
			testutil.StoppedBySIGTERM(t, done, "smcdump", &errb)
			if got := <-rest; c.after != "" && !strings.HasPrefix(got, c.after) {
				t.Errorf("printed once stopped %q, want it to begin %q", got, c.after)
			}
		})
	}

	t.Run("export", func(t *testing.T) {
		path := testutil.FIFO(t)
		cmd := exec.Command(bin, "-r", path, "--export-tcp", filepath.Join(t.TempDir(), "out.pcapng"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("--export-tcp still waiting on the FIFO after 20 s")
		}
		got := out.String()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(got, "not a regular file (a FIFO)") {
			t.Errorf("--export-tcp from a FIFO: %v, %q", err, got)
		}
	})
}
