package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestBinary builds smcdump and runs it as a user would.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "smcdump")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ref := "../../testdata/reference/"
	pp, err := os.ReadFile(ref + "pingpong.pcap")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(cut, pp[:2000], 0o644); err != nil {
		t.Fatal(err)
	}
	// Twelve short connections, one after the other: the frames of three
	// one-connection captures four times over, each an hour after the
	// last (the same frames at the same times are the capture's copies).
	var short []testutil.Packet
	for i := 0; i < 4; i++ {
		for j, name := range []string{"decline-nordma.pcap", "fallback-nosmc.pcap", "no-ueid.pcap"} {
			fs, _ := testutil.ReadFrames(t, ref+name)
			for _, f := range fs {
				f.CI.Timestamp = f.CI.Timestamp.Add(time.Duration(3*i+j) * time.Hour)
				short = append(short, f)
			}
		}
	}
	many := testutil.WriteFrames(t, "many.pcap", layers.LinkTypeEthernet, short)
	// The first 13 frames of pingpong.pcap, four of whose records (frames
	// 3, 5, 8, 10) say an original length 10 below the captured one.
	origLT := filepath.Join(dir, "origlt.pcap")
	{
		b := bytes.Clone(pp[:24])
		for off, n := 24, 1; n <= 13; n++ {
			caplen := int(binary.LittleEndian.Uint32(pp[off+8:]))
			rec := bytes.Clone(pp[off : off+16+caplen])
			if n == 3 || n == 5 || n == 8 || n == 10 {
				binary.LittleEndian.PutUint32(rec[12:], uint32(caplen-10))
			}
			b, off = append(b, rec...), off+16+caplen
		}
		if err := os.WriteFile(origLT, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		args   []string
		stdin  []byte
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"decline", []string{"-r", ref + "decline-nordma.pcap"}, nil, 0, "CLC Decline SMC-Rv2 0x03030002 NOSMCRDEV", ""},
		{"stdin", []string{"-r", "-", "-T", "fields", "-e", "smc.clc.type", "-Y", "smc.clc"}, pp, 0, "1\n2\n3\n", ""},
		{"truncated", []string{"-r", cut}, nil, 2, "", "smcdump: " + cut + ": frame 17 (file offset 0x79c): truncated record"},
		{"closed stdin", []string{"-r", "-"}, []byte{}, 1, "", "smcdump: stdin: no data: closed before a capture header"},
		{"bad -e", []string{"-r", ref + "pingpong.pcap", "-T", "fields", "-e", "nope"}, nil, 2, "", `smcdump: -e "nope": unknown field`},
		{"not capture", []string{"-r", ref + "README.md"}, nil, 1, "", "not a capture file"},
		{"bad flag", []string{"-Q"}, nil, 2, "", "smcdump: unknown flag -Q; try 'smcdump --help'\n"},
		{"bad letter in group", []string{"-nQr", ref + "pingpong.pcap"}, nil, 2, "", "smcdump: unknown flag -Q (in -nQr); try 'smcdump --help'\n"},
		{"bad value", []string{"-r", ref + "pingpong.pcap", "-c", "x"}, nil, 2, "", "smcdump: -c \"x\": not a whole number; try 'smcdump --help'\n"},
		{"bad -E", []string{"-r", ref + "pingpong.pcap", "-E", "foo"}, nil, 2, "", "smcdump: -E \"foo\": want name=value; try 'smcdump --help'\n"},
		{"no value", []string{"-r"}, nil, 2, "", "smcdump: flag -r needs a value; try 'smcdump --help'\n"},
		{"help", []string{"-h"}, nil, 0, "Usage: smcdump -r FILE", ""},
		{"help long", []string{"-r", ref + "pingpong.pcap", "--help"}, nil, 0, "\nInput:\n  -r FILE ", ""},
		{"version", []string{"--version"}, nil, 0, "smcdump (smcscope) ", ""},
		// tshark's habits: grouped letters, a value attached or next.
		{"grouped -nr", []string{"-nr", ref + "decline-nordma.pcap"}, nil, 0, "CLC Decline SMC-Rv2 0x03030002 NOSMCRDEV", ""},
		{"attached -c2", []string{"-r", ref + "pingpong.pcap", "-c2", "-T", "fields", "-e", "frame.number"}, nil, 0, "", ""},
		{"grouped -qz", []string{"-nqr", ref + "pingpong.pcap", "-qz", "smc,conns"}, nil, 0, "SMC connections: 1", ""},
		{"bad filter", []string{"-r", ref + "pingpong.pcap", "-Y", "smc.clc.type =="}, nil, 2, "", "-Y"},
		{"views", []string{"-r", ref + "pingpong.pcap", "-z", "smc,conns", "-c", "3"}, nil, 0, "SMC connections: 1", ""},
		{"quiet views", []string{"-q", "-r", ref + "decline-nordma.pcap", "-z", "smc,decline"}, nil, 0, "NOSMCRDEV", ""},
		{"bad view", []string{"-r", ref + "pingpong.pcap", "-z", "smc,nope"}, nil, 2, "", "-z: unknown view"},
		{"all listed", []string{"-q", "-r", many, "-z", "smc,conns"}, nil, 0, "SMC connections: 12\n", ""},
		{"keep 2", []string{"-q", "-K", "2", "-r", many, "-z", "smc,conns"}, nil, 0, "listed 3 of 12 connections; folded into the totals below: the 9 oldest\nkept whole: the newest 2 connections that ended", ""},
		{"keep 0", []string{"-q", "-K", "0", "-r", many}, nil, 2, "", "smcdump: -K 0: need at least 1 connection"},
		// 0 is no limit by default; given, it is refused, as tcpdump and tshark refuse it.
		{"count 0", []string{"-r", ref + "pingpong.pcap", "-c0"}, nil, 2, "", "smcdump: -c 0: want a positive count"},
		{"tracker field", []string{"-r", ref + "pingpong.pcap", "-T", "fields", "-e", "smc.conn.dir", "-Y", "smc.clc"}, nil, 0, "C->S\nS->C\nC->S\n", ""},
		{"glossary", []string{"-G", "fields"}, nil, 0, "smc.cdc.seq\tuint\t", ""},
		// Damage confined to a record is a frame.error, as a malformed
		// message is: every frame is read and the run succeeds.
		{"orig below cap", []string{"-r", origLT, "-a", "-T", "fields", "-e", "frame.number", "-e", "frame.error"}, nil, 0,
			"3\tframe 3 (file offset 0x8c): record: original length 88 is below the captured length 98 (decoded as captured)\n4\t\n", ""},
		{"orig below cap, all frames", []string{"-r", origLT, "-a", "-T", "fields", "-e", "frame.number", "-Y", "frame.number == 13"}, nil, 0, "13\n", ""},
		{"extra arg", []string{"-r", ref + "pingpong.pcap", "extra"}, nil, 2, "", `unexpected argument "extra"`},
		{"browse -V", []string{"-I", "-r", ref + "pingpong.pcap", "-V"}, nil, 2, "", "-I: -T, -e, -G, -V, -x, -q and -z shape printed output"},
		{"browse bad -Y", []string{"-I", "-r", ref + "pingpong.pcap", "-Y", "smc.clc.type =="}, nil, 2, "", "smcdump: -Y: "},
		// -o column.format: the text lines' columns (any field); -I
		// shows the tracker fields its index holds only.
		{"text columns", []string{"-r", ref + "pingpong.pcap", "-o", "column.format:No.,Seq=smc.cdc.seq:4,smc.conn.outcome,Protocol", "-Y", "smc.cdc", "-c", "2"}, nil, 0,
			"23  1     1 (SMC-R)  CDC\n27  2     1 (SMC-R)  CDC\n", ""},
		{"bad column", []string{"-r", ref + "pingpong.pcap", "-o", "column.format:No.,nope"}, nil, 2, "", `smcdump: -o column.format: column "nope": no such column or field`},
		{"columns with json", []string{"-r", ref + "pingpong.pcap", "-T", "json", "-o", "column.format:No."}, nil, 2, "", "smcdump: -o column.format: the text lines' columns; -T json takes none"},
		{"browse tracker column", []string{"-I", "-r", ref + "pingpong.pcap", "-o", "column.format:No.,smc.conn.outcome"}, nil, 2, "", "smcdump: -o column.format: column \"smc.conn.outcome\": the tracker fills it"},
		{"tail without -I", []string{"-r", ref + "pingpong.pcap", "--tail"}, nil, 2, "", "smcdump: --tail and --no-config are for the browser (-I)"},
	}
	// A capture whose name starts with '-' is still -r's value, alone or
	// after grouped letters.
	decl, err := os.ReadFile(ref + "decline-nordma.pcap")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "-odd.pcap"), decl, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-r", "-odd.pcap"}, {"-nr", "-odd.pcap"}, {"-nr-odd.pcap"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "NOSMCRDEV") {
			t.Errorf("smcdump %q: %v\n%s", args, err, out)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if tt.stdin != nil {
				cmd.Stdin = bytes.NewReader(tt.stdin)
			}
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errb.String())
			}
			if !strings.Contains(out.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, out.String())
			}
			if !strings.Contains(errb.String(), tt.stderr) {
				t.Errorf("stderr %q lacks %q", errb.String(), tt.stderr)
			}
			if tt.code != 0 && strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
				t.Errorf("error is not one line: %q", errb.String())
			}
			if tt.code == 0 && (strings.HasPrefix(tt.name, "help") || tt.name == "version") && errb.Len() != 0 {
				t.Errorf("help or version wrote to stderr: %q", errb.String())
			}
			if tt.name == "attached -c2" && strings.Count(out.String(), "\n") != 2 {
				t.Errorf("-c2 printed %q, want 2 frames", out.String())
			}
			if tt.code != 0 && !strings.HasPrefix(errb.String(), "smcdump: ") {
				t.Errorf("error does not start with the program name: %q", errb.String())
			}
			if strings.Count(errb.String(), "smcdump:") > 1 {
				t.Errorf("program name said twice: %q", errb.String())
			}
		})
	}
}

// TestInterruptClosesJSON: Ctrl-C during a live capture ends the run
// cleanly with a complete JSON array.
func TestInterruptClosesJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs CAP_NET_RAW for a live capture on lo")
	}
	bin := filepath.Join(t.TempDir(), "smcdump")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-i", "lo", "-T", "json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitPacketSocket(t, cmd.Process.Pid)
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v (stderr %q)", err, errb.String())
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("smcdump still running 5 s after SIGINT")
	}
	var v []any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("output after SIGINT is not a JSON array: %v: %q", err, out.String())
	}
}

// TestBrowseHangup: SIGHUP (the terminal went away) ends the browser the way
// q does, leaving the alternate screen and mouse reporting, not by the
// default action, which left the screen as it was.
func TestBrowseHangup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testutil.GoBuild(t, ".", "smcdump")
	x := testutil.NewTmux(t, 100, 30, bin, "-I", "-r", "../../samples/pingpong.pcap")
	x.Run("set-option", "-w", "remain-on-exit", "on")
	x.WaitFor("pingpong.pcap")
	pid, err := strconv.Atoi(x.Display("#{pane_pid}"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	x.WaitDisplay("#{pane_dead}", "1")
	if got := x.Display("#{alternate_on} #{mouse_any_flag}"); got != "0 0" {
		t.Errorf("after SIGHUP: alternate screen, mouse = %s, want 0 0", got)
	}
	// As a shell reports a command SIGHUP killed: the browser was ended,
	// not quit.
	if got := x.ExitStatus(); got != "129" {
		t.Errorf("after SIGHUP: exit status %s, want 129", got)
	}
}

// TestBrowseFlags runs smcdump -I in tmux with -Y, -a and -c, which it
// applies (the first filter, every frame, the first N frames), and ends it
// with SIGTERM, which restores the terminal as q does.
func TestBrowseFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testutil.GoBuild(t, ".", "smcdump")
	x := testutil.NewTmux(t, 100, 30, bin, "-I", "-r", "../../samples/multilink.pcap", "-a", "-c", "3000", "-Y", "smc.llc.type == 0x22")
	x.Run("set-option", "-w", "remain-on-exit", "on")
	// The filter runs beside the indexing: on a busy machine the index
	// may reach the count -c gives before the filter's first run ends
	// (the list shows every frame until then), or the filter's line
	// may show while the file is still being indexed ("768 frames
	// (indexing…)"). Both come.
	x.WaitFor("filter smc.llc.type == 0x22, ")
	scr := x.WaitFor("3000 frames (-c 3000)")
	if !strings.Contains(scr, "filter smc.llc.type == 0x22, ") || !strings.Contains(scr, "ADD_LINK_V2") {
		t.Errorf("-Y and -c:\n%s", scr)
	}
	x.Keys("Escape")
	if scr := x.WaitFor("all, 3000 rows"); !strings.Contains(scr, "ARP") && !strings.Contains(scr, "ETH") && !strings.Contains(scr, "ADD_LINK_V2") {
		t.Errorf("-a: esc does not list every frame:\n%s", scr)
	}
	if got := x.Display("#{alternate_on}"); got != "1" {
		t.Fatalf("the browser runs without the alternate screen (%s): nothing to restore", got)
	}
	pid, err := strconv.Atoi(x.Display("#{pane_pid}"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	x.WaitDisplay("#{pane_dead}", "1")
	if got := x.Display("#{alternate_on} #{mouse_any_flag}"); got != "0 0" {
		t.Errorf("after SIGTERM: alternate screen, mouse = %s, want 0 0", got)
	}
	if got := x.ExitStatus(); got != "143" {
		t.Errorf("after SIGTERM: exit status %s, want 143", got)
	}
}

// waitPacketSocket waits until process pid has a packet socket open (its
// descriptor's inode in /proc/net/packet): smcdump opens its live capture
// after it installed its SIGINT handler, so a signal sent then is its to
// handle (the Go runtime catches SIGINT from the start, with the default
// action until the program asks for it, so SigCgt does not tell).
func waitPacketSocket(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		packet, _ := os.ReadFile("/proc/net/packet")
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if ino, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
				ino = strings.TrimSuffix(ino, "]")
				for _, line := range strings.Split(string(packet), "\n")[1:] {
					if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == ino {
						return
					}
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d has no packet socket after 20 s", pid)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc for the capture
	}
}

// TestREADMEANCK: each command of docs/anck.md (the README's ANCK page)
// prints what the page shows (a "| sed -n A,Bp" after it keeps those lines).
func TestREADMEANCK(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "smcdump")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	readme, err := os.ReadFile("../../docs/anck.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "# Alibaba Cloud (ANCK) and eRDMA")
	if start < 0 {
		t.Fatal("docs/anck.md has no ANCK heading")
	}
	s = s[start:]
	s = s[strings.Index(s, "```\n")+4:]
	s = s[:strings.Index(s, "```")]
	type cmd struct {
		line string
		want []string
	}
	var cmds []cmd
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(l, "$ smcdump "); ok {
			cmds = append(cmds, cmd{line: rest})
			continue
		}
		if len(cmds) == 0 {
			t.Fatalf("README output before a command: %q", l)
		}
		cmds[len(cmds)-1].want = append(cmds[len(cmds)-1].want, l)
	}
	if len(cmds) < 3 {
		t.Fatalf("%d commands in the ANCK section", len(cmds))
	}
	for _, c := range cmds {
		line, from, to := c.line, 0, 0
		if i := strings.Index(line, " | sed -n "); i >= 0 {
			if _, err := fmt.Sscanf(line[i+len(" | sed -n "):], "%d,%dp", &from, &to); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			line = line[:i]
		}
		args, err := splitQuoted(line)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = "../.."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("smcdump %s: %v", line, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if from > 0 {
			got = got[from-1 : min(to, len(got))]
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("smcdump %s:\n%s\ndocs/anck.md shows:\n%s", c.line, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

// splitQuoted splits a shell line of words and single-quoted words.
func splitQuoted(s string) ([]string, error) {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '\'' {
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unclosed quote in %q", s)
			}
			out, s = append(out, s[1:1+end]), s[2+end:]
			continue
		}
		end := strings.IndexByte(s, ' ')
		if end < 0 {
			end = len(s)
		}
		out, s = append(out, s[:end]), s[end:]
	}
	return out, nil
}

// TestReadStopped: a capture a signal stops before its end prints what
// was read, says so on one line and exits 128 + the signal, so that a
// script (timeout(1), a supervisor) tells a part from the whole. The test
// reads a little of the output and then none until it has sent SIGTERM:
// smcdump waits on the full pipe, mid-capture, when the signal comes.
func TestReadStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testutil.GoBuild(t, ".", "smcdump")
	cmd := exec.Command(bin, "-r", "../../testdata/reference/pingpong.pcap", "-T", "jsonl")
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The event: the first bytes came out. The JSON of the capture is
	// megabytes, far more than a pipe holds.
	first := make([]byte, 1)
	if _, err := io.ReadFull(outPipe, first); err != nil {
		cmd.Process.Kill()
		t.Fatalf("no output: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(outPipe)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("exit %v, want status 143 (output %d bytes)", err, len(rest)+1)
	}
	if got := strings.TrimSpace(errb.String()); !strings.Contains(got, "stopped by SIGTERM before the capture's end") || strings.Contains(got, "\n") {
		t.Errorf("stderr %q, want one line saying it stopped", got)
	}
	if len(rest) == 0 {
		t.Error("nothing printed of what was read")
	}
}

// TestREADMEDamaged holds README's claim on damaged files to the tools it
// names: on testdata/expert/capture-damaged.pcap (frame 24's record
// header says a captured length of 2 GiB) tcpdump and tshark stop after
// frame 23 with an error, and smcdump reads every other frame of the file
// (4139: the damaged record's frame is missing), says where the damage is
// and exits 2.
func TestREADMEDamaged(t *testing.T) {
	const path = "../../testdata/expert/capture-damaged.pcap"
	bin := testutil.GoBuild(t, ".", "smcdump")
	lines := func(out []byte) int { return bytes.Count(out, []byte("\n")) }
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "-r", path, "-a")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || lines(out) != 4139 ||
		!strings.Contains(stderr.String(), "frame 24 (file offset 0xa86): corrupt record: capture length exceeds snap length") {
		t.Errorf("smcdump: %v, %d frames, %q; want exit 2, 4139 frames and the damage", err, lines(out), stderr.String())
	}
	for _, tool := range [][]string{{"tcpdump", "-nn", "-r", path}, {"tshark", "-n", "-r", path}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("%s not installed (make test-deps): its half of the claim not checked", tool[0])
			continue
		}
		cmd := exec.Command(tool[0], tool[1:]...)
		cmd.Env = append(os.Environ(), "TZ=UTC")
		out, err := cmd.Output()
		if err == nil || lines(out) != 23 {
			t.Errorf("%s: %v, %d frames; README says it stops at the damage, after 23", tool[0], err, lines(out))
		}
	}
}

// TestDocsFlips holds docs/smcdump.md's "40 bit flips" claim: pingpong.pcap
// with 40 bits flipped anywhere but its file header (a seeded generator)
// stops tcpdump early, where smcdump reads on past every damaged record
// header, and the copy smcdump writes with -a -w is read to its end by
// tcpdump (a record whose original length the flips made shorter than
// its captured one is written with the captured length).
func TestDocsFlips(t *testing.T) {
	tcpdump, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Skip("tcpdump not installed (make test-deps): the claim is about it")
	}
	data, err := os.ReadFile("../../samples/pingpong.pcap")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(40, 1))
	for range 40 {
		i := 24 + rng.IntN(len(data)-24)
		data[i] ^= 1 << rng.IntN(8)
	}
	dir := t.TempDir()
	damaged, repaired := filepath.Join(dir, "damaged.pcap"), filepath.Join(dir, "repaired.pcapng")
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// tcpdump --count says "N packets".
	packets := func(path string) (int, error) {
		out, err := exec.Command(tcpdump, "--count", "-r", path).CombinedOutput()
		n := -1
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[1] == "packets" {
				n, _ = strconv.Atoi(f[0])
			}
		}
		return n, err
	}
	bin := testutil.GoBuild(t, ".", "smcdump")
	out, ourErr := exec.Command(bin, "-r", damaged, "-a").Output()
	ours := bytes.Count(out, []byte("\n"))
	_, wErr := exec.Command(bin, "-r", damaged, "-a", "-w", repaired).Output()
	tcpDamaged, tcpErr := packets(damaged)
	tcpRepaired, err := packets(repaired)
	t.Logf("tcpdump %d packets (%v), smcdump %d frames (%v; -w: %v), tcpdump on the repaired copy %d (%v)", tcpDamaged, tcpErr, ours, ourErr, wErr, tcpRepaired, err)
	var ee *exec.ExitError
	if tcpErr == nil || tcpDamaged != 2677 || !errors.As(ourErr, &ee) || ee.ExitCode() != 2 || ours != 4037 ||
		!errors.As(wErr, &ee) || ee.ExitCode() != 2 || err != nil || tcpRepaired != 4037 {
		t.Errorf("docs/smcdump.md says: tcpdump stops after 2677 of the 4039 frames with an error; smcdump reads 4037 (exit 2) and writes them all, and tcpdump reads the copy to its end")
	}
}

// TestExportDamaged: --export-tcp of a file damaged in a record header
// writes the export, says what it holds, and then fails with the file's
// error (exit 2), as smcdump's other outputs do; a file cut short alike.
func TestExportDamaged(t *testing.T) {
	bin := testutil.GoBuild(t, ".", "smcdump")
	clean, err := os.ReadFile("../../samples/pingpong.pcap")
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(clean)
	binary.LittleEndian.PutUint32(damaged[testutil.RecordOffsets(damaged)[2000]+8:], 0x7fffff00)
	for _, tc := range []struct {
		name string
		data []byte
		err  string
	}{
		{"damaged", damaged, "corrupt record: capture length exceeds snap length"},
		{"cut", clean[:300000], "truncated record"},
	} {
		in, out := filepath.Join(t.TempDir(), tc.name+".pcap"), filepath.Join(t.TempDir(), "tcp.pcapng")
		if err := os.WriteFile(in, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-r", in, "--export-tcp", out)
		msg, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		lines := strings.Split(strings.TrimSpace(string(msg)), "\n")
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || len(lines) != 2 ||
			!strings.Contains(lines[0], "1 SMC-R connection as TCP") || !strings.Contains(lines[1], tc.err) {
			t.Errorf("%s: %v, %q; want the export's line, then the file's error, exit 2", tc.name, err, msg)
		}
		if st, err := os.Stat(out); err != nil || st.Size() == 0 {
			t.Errorf("%s: no export written: %v", tc.name, err)
		}
	}
}

// TestDocsExpertTables: every "`smcdump -r samples/X -q -z smc,expert`:"
// of docs/smcdump.md is followed by what the binary prints for it, so
// that a change of the findings changes the manual with it.
func TestDocsExpertTables(t *testing.T) {
	bin := testutil.GoBuild(t, ".", "smcdump")
	doc, err := os.ReadFile("../../docs/smcdump.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	n := 0
	for i, l := range lines {
		args, ok := strings.CutPrefix(l, "`smcdump -r samples/")
		if !ok || !strings.HasSuffix(args, " -q -z smc,expert`:") || i+2 >= len(lines) || lines[i+2] != "```" {
			continue
		}
		end := i + 3
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		capture := "../../samples/" + strings.Fields(args)[0]
		out, err := exec.Command(bin, "-r", capture, "-q", "-z", "smc,expert").Output()
		if err != nil {
			t.Errorf("%s: %v", capture, err)
			continue
		}
		if want := strings.Join(lines[i+3:end], "\n") + "\n"; string(out) != want {
			t.Errorf("docs/smcdump.md line %d: %s prints otherwise:\n%s", i+1, capture, testutil.Diff([]byte(want), out))
		}
		n++
	}
	if n < 4 {
		t.Errorf("%d expert tables found in docs/smcdump.md, want the 4 of slow-reader, lossy, multilink and silent-link", n)
	}
}
