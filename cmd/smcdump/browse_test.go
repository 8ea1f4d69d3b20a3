package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestBrowseLive runs the real smcdump -I on inputs that arrive over
// time: a capture piped into stdin (-r -), gzip-compressed; a FIFO the
// test writes frame by frame, whose writer must never see a broken pipe;
// a file followed as it grows (--tail); and stdin left on the terminal,
// which is refused with one line.
func TestBrowseLive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testutil.GoBuild(t, ".", "smcdump")
	sample, err := filepath.Abs("../../samples/multilink.pcap")
	if err != nil {
		t.Fatal(err)
	}

	x := testutil.NewTmux(t, 80, 24, "sh", "-c", "gzip -c "+sample+" | "+bin+" -I -r -")
	scr := x.WaitFor("writer closed it")
	if !strings.Contains(strings.Join(strings.Fields(scr), " "), "stdin 4572 frames") {
		t.Errorf("stdin:\n%s", scr)
	}
	x.Keys("q")

	b, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	x = testutil.NewTmux(t, 200, 50, bin, "-I", "-a", "-r", fifo)
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	off := 24
	for n := 1; n <= 3; n++ {
		end := off + 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
		if n == 1 {
			off = 0 // the file header with the first record
		}
		if _, err := w.Write(b[off:end]); err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
		if scr := x.WaitFor(fmt.Sprintf("all, %d rows", n)); !strings.Contains(scr, "(live)") {
			t.Errorf("frame %d: not live:\n%s", n, scr)
		}
		off = end
	}
	if _, err := w.Write(b[off:]); err != nil {
		t.Fatalf("the writer: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("the writer: %v", err)
	}
	x.WaitFor("fifo 4572 frames (copied to")
	x.WaitFor("(ended: the writer closed it)")
	x.Keys("q")

	grow := filepath.Join(t.TempDir(), "grow.pcap")
	if err := os.WriteFile(grow, b[:4096], 0o644); err != nil {
		t.Fatal(err)
	}
	x = testutil.NewTmux(t, 200, 50, bin, "-I", "--tail", "-r", grow)
	x.WaitFor("(following the file as it grows")
	f, err := os.OpenFile(grow, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b[4096:]); err != nil {
		t.Fatal(err)
	}
	x.WaitFor("grow.pcap 4572 frames (following the file as it grows")
	x.Keys("q")

	// The shell stays, so the pane keeps what smcdump said.
	x = testutil.NewTmux(t, 200, 50, "sh", "-c", bin+" -I -r -; echo exit $?; sleep 60")
	x.WaitFor("smcdump: -I -r -: stdin is the terminal; pipe a capture in (tcpdump -w - ... | smcdump -I -r -)\nexit 2")
}

// TestBrowseColumns runs the real smcdump -I at 80x24 with -o
// column.format, changes the layout with o, and starts again: the layout
// is kept in the config directory, and --no-config starts with
// Wireshark's columns.
func TestBrowseColumns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testutil.GoBuild(t, ".", "smcdump")
	sample := "../../samples/pingpong.pcap"
	x := testutil.NewTmux(t, 80, 24, bin, "-I", "-r", sample, "-o", "column.format:No.,Seq=smc.cdc.seq:4,smc.conn.id,Info")
	x.WaitFor("No.   Seq  smc.conn.id  Info")
	x.Keys("o")
	x.WaitFor("columns: No.,Seq=smc.cdc.seq:4,smc.conn.id,Info")
	x.Keys("C-u")
	x.Keys("-l", "No.,Protocol,roce.bth.dqpn,Info")
	x.Keys("Enter")
	x.WaitFor("No.  Protocol  roce.bth.dqpn  Info")
	x.Keys("q")

	x = testutil.NewTmuxConfig(t, x.Config, 80, 24, bin, "-I", "-r", sample)
	x.WaitFor("No.  Protocol  roce.bth.dqpn  Info")
	x.Keys("q")
	x = testutil.NewTmuxConfig(t, x.Config, 80, 24, bin, "-I", "--no-config", "-r", sample)
	x.WaitFor("No.      Time  Source")
	// Esc and ] in one read (tcell would start an OSC string there and
	// swallow every key after it): the keys after them still work.
	x.Keys("Escape", "]")
	x.Keys("o")
	x.WaitFor("columns: ")
	x.Keys("Escape")
	x.Keys("q")
}
