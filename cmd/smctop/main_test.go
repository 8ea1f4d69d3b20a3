package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/monitor"
)

func build(t *testing.T) string { return testutil.GoBuild(t, ".", "smctop") }

func TestOnceReplay(t *testing.T) {
	bin := build(t)
	out, err := exec.Command(bin, "-r", "../../samples/multilink.pcap", "--once", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var s monitor.Snapshot
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	if s.Overview.Ended != 3 || s.Overview.SuccessTotal != 3 || len(s.LinkGroups) != 1 || len(s.LinkGroups[0].Links) < 2 {
		t.Errorf("multilink replay: %+v", s.Overview)
	}
	var failover bool
	for _, e := range s.Events {
		failover = failover || e.Kind == monitor.EventFailover
	}
	if !failover {
		t.Error("no failover event in the multilink replay")
	}
	text, err := exec.Command(bin, "--netlink-replay", "../../smcnl/testdata/multilink-client-before", "--path.sysfs", "../../rdmastats/testdata/sys", "--once", "--interval", "1ms").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The time line and the per-run interval differ; the rest is locked.
	lines := strings.SplitN(string(text), "\n", 2)
	testutil.Golden(t, "multilink-client-before", []byte(lines[1]))
	// SMC-D over the 7.3 lab's DIBS loopback, with the guest's /sys/class/dibs: both
	// sockets in group 0x100 on lo, the groups without link limits or redundancy
	// (they have no links). The host's /proc is not the guest's.
	const smcd = "../../smcnl/testdata/smcd-client-active"
	text, err = exec.Command(bin, "--netlink-replay", smcd, "--path.sysfs", smcd+"/sys", "--path.procfs", t.TempDir(),
		"--path.tracefs", "", "--once", "--interval", "1ms").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines = strings.SplitN(string(text), "\n", 2)
	testutil.Golden(t, "smcd-client-active", []byte(lines[1]))
}

// TestTmux drives the real binary in a terminal: tab to the link groups,
// drill down, help.
func TestTmux(t *testing.T) {
	x := testutil.NewTmux(t, 120, 40, build(t), "--netlink-replay", "../../smcnl/testdata/multilink-client-before",
		"--path.sysfs", "../../rdmastats/testdata/sys", "--interval", "200ms")
	x.WaitFor("without redundancy")
	x.Keys("2")
	x.WaitFor("inode:455")
	x.Keys("Enter")
	x.WaitFor("rxe1/1")
	x.Keys("?")
	x.WaitFor("drill down")
	// ? closes the help (an Esc right before the next key would make it
	// alt+key, as a terminal's escape sequences do).
	x.Keys("?")
	x.Keys("1")
	x.WaitFor("WHAT")
	// Esc and ] in one read (tcell would start an OSC string there and
	// swallow every key after it): the keys after them still work.
	x.Keys("Escape", "]")
	x.Keys("?")
	x.WaitFor("drill down")
	x.Keys("?")
	x.Keys("q")
}

// TestBrokenCounterOnce runs --once over a sysfs tree with one counter the
// driver printed as "N/A": both RNICs are still listed, and stderr names
// the counter left out.
func TestBrokenCounterOnce(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("../../rdmastats/testdata/sys")); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "class/infiniband/mlx5_0/ports/1/counters/symbol_error")
	if err := os.WriteFile(bad, []byte("N/A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(build(t), "--netlink-replay", "../../smcnl/testdata/multilink-client-before", "--path.sysfs", root, "--once", "-o", "json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, &stderr)
	}
	var s monitor.Snapshot
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range s.Devices {
		names = append(names, d.Name)
	}
	if strings.Join(names, " ") != "mlx5_0 rxe0" {
		t.Errorf("devices = %q, want mlx5_0 and rxe0 (sources %+v)", names, s.Sources)
	}
	if want := `mlx5_0/1 counters/symbol_error: unparsable "N/A"`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not name the broken counter (%s)", &stderr, want)
	}
}

// TestNoTerminal checks that the dashboard without a terminal says which
// flags work without one, instead of panicking in tview.
func TestNoTerminal(t *testing.T) {
	bin := build(t)
	for _, args := range [][]string{
		{"--netlink-replay", "../../smcnl/testdata/multilink-client-before"},
		{"-r", "../../samples/multilink.pcap"},
		{"--listen", "127.0.0.1:0"},
		{},
	} {
		_, stderr, code := testutil.RunNoTTY(t, bin, args...)
		want := "smctop: no terminal: the dashboard needs one; use --once, --count N or --listen ADDR --no-tui\n"
		if code != 2 || stderr != want {
			t.Errorf("smctop %q without a terminal: exit %d, stderr %q; want 2, %q", args, code, stderr, want)
		}
	}
	// The fleet view has no exporter to offer instead.
	_, stderr, code := testutil.RunNoTTY(t, bin, "--prometheus", "http://127.0.0.1:9")
	if want := "smctop: no terminal: the dashboard needs one; use --once or --count N\n"; code != 2 || stderr != want {
		t.Errorf("smctop --prometheus without a terminal: exit %d, stderr %q; want 2, %q", code, stderr, want)
	}
	// A file that cannot be read is said first: a terminal would not
	// mend it.
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-r", dir + "/missing.pcap"}, dir + "/missing.pcap: no such file or directory"},
		{[]string{"-r", dir}, dir + ": is a directory"},
		{[]string{"--netlink-replay", dir + "/missing"}, "--netlink-replay " + dir + "/missing: no such file or directory"},
	} {
		_, stderr, code := testutil.RunNoTTY(t, bin, tt.args...)
		if want := "smctop: " + tt.want + "\n"; code != 1 || stderr != want {
			t.Errorf("smctop %q without a terminal: exit %d, stderr %q; want 1, %q", tt.args, code, stderr, want)
		}
	}
	// The modes that need no terminal still run.
	out, stderr, code := testutil.RunNoTTY(t, bin, "-r", "../../samples/multilink.pcap", "--once")
	if code != 0 || !strings.Contains(out, "0x1") {
		t.Errorf("--once without a terminal: exit %d, stderr %q, stdout %.200q", code, stderr, out)
	}
}

// TestBadFlags checks that each bad command line gets one line naming the
// flag and exit status 2, without the usage and without starting the
// dashboard (they run without a terminal, where it would fail).
func TestBadFlags(t *testing.T) {
	bin := build(t)
	const pcap = "../../samples/multilink.pcap"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--count", "0"}, "--count: must be 1 or more, got 0"},
		{[]string{"--count", "-1"}, "--count: must be 1 or more, got -1"},
		{[]string{"-r", pcap, "--speed", "-1"}, "--speed: must be a finite number ≥ 0, got -1"},
		{[]string{"-r", pcap, "--speed", "NaN"}, "--speed: must be a finite number ≥ 0, got NaN"},
		{[]string{"-r", pcap, "--speed", "Inf"}, "--speed: must be a finite number ≥ 0, got +Inf"},
		{[]string{"--speed", "2"}, "--speed: only with -r FILE"},
		{[]string{"--interval", "0", "--once"}, "--interval: must be positive, got 0s"},
		{[]string{"--interval", "-1s", "--once"}, "--interval: must be positive, got -1s"},
		{[]string{"--interval", "soon"}, `--interval "soon": not a duration (e.g. 2s, 500ms); try 'smctop --help'`},
		{[]string{"--count"}, "flag --count needs a value; try 'smctop --help'"},
		{[]string{"-r"}, "flag -r needs a value; try 'smctop --help'"},
		{[]string{"-o", "yaml", "--once"}, `-o: unknown format "yaml" (text, json, jsonl)`},
		{[]string{"-o", "json"}, "-o: only with --once or --count N"},
		{[]string{"--once", "--count", "2"}, "--once and --count: use one"},
		{[]string{"--no-tui"}, "--no-tui: only with --listen ADDR"},
		{[]string{"--once", "--listen", "127.0.0.1:0"}, "--listen: not with --once or --count"},
		{[]string{"-r", pcap, "-i", "lo"}, "-r and -i: use one"},
		{[]string{"--frobnicate"}, "smctop: unknown flag --frobnicate; try 'smctop --help'\n"},
		{[]string{"-frobnicate"}, "smctop: unknown flag -frobnicate; try 'smctop --help'\n"},
		{[]string{"--once", "extra"}, `unexpected argument "extra"`},
	} {
		_, stderr, code := testutil.RunNoTTY(t, bin, tt.args...)
		if code != 2 || !strings.HasPrefix(stderr, "smctop: ") || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("smctop %q: exit %d, stderr %q; want 2 and one line with %q", tt.args, code, stderr, tt.want)
		}
	}
	for _, h := range []string{"-h", "--help", "-help"} {
		out, stderr, code := testutil.RunNoTTY(t, bin, h)
		if code != 0 || !strings.HasPrefix(out, "Usage: smctop ") || !strings.Contains(out, "\n  --count N ") || stderr != "" {
			t.Errorf("smctop %s: exit %d, stderr %q, stdout %q; want the flags on stdout", h, code, stderr, out)
		}
	}
	out, stderr, code := testutil.RunNoTTY(t, bin, "--version")
	if code != 0 || !strings.HasPrefix(out, "smctop (smcscope) ") || !strings.Contains(out, "\ngo: go1.") || stderr != "" {
		t.Errorf("smctop --version: exit %d, stderr %q, stdout %q; want the build information on stdout", code, stderr, out)
	}
	_, stderr, code = testutil.RunNoTTY(t, bin, "--netlink-replay", "/nonexistent", "--once")
	if code != 1 || stderr != "smctop: --netlink-replay /nonexistent: no such file or directory\n" {
		t.Errorf("--netlink-replay /nonexistent: exit %d, stderr %q; want 1 and the path", code, stderr)
	}
	// A capture cut inside its file header is damaged, as smcdump exits
	// for it (2); one that is not there is a plain failure (1).
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(cut, []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, want string
		code       int
	}{{cut, "truncated file header", 2}, {cut + ".missing", "no such file", 1}} {
		_, stderr, code = testutil.RunNoTTY(t, bin, "-r", tt.path, "--once")
		if code != tt.code || !strings.HasPrefix(stderr, "smctop: ") || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("smctop -r %s --once: exit %d, stderr %q; want %d and one line with %q", tt.path, code, stderr, tt.code, tt.want)
		}
	}
}

// start runs the binary with its stdout and stderr on pipes; the test's
// end kills it if it is still running.
func start(t *testing.T, bin string, args ...string) (cmd *exec.Cmd, stdout, stderr *bufio.Reader) {
	t.Helper()
	cmd = exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	o, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	e, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, bufio.NewReader(o), bufio.NewReader(e)
}

// within runs f, failing the test if it takes longer than 20 s (a read
// from a process that never writes).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: nothing within 20 s", what)
	}
}

// TestListenPort checks that --listen with port 0 prints the bound address
// and serves /metrics there.
func TestListenPort(t *testing.T) {
	cmd, _, stderr := start(t, build(t), "--listen", "127.0.0.1:0", "--no-tui", "-r", "../../samples/multilink.pcap")
	var line string
	within(t, "the serving line", func() { line, _ = stderr.ReadString('\n') })
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "smctop: serving /metrics on ")
	if !ok || strings.HasSuffix(addr, ":0") {
		t.Fatalf("stderr %q, want the bound address", line)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "smc_") {
		t.Errorf("/metrics on %s: %.300s", addr, body)
	}
	// systemd stops the exporter with SIGTERM and would count any exit
	// status but 0 (or death by the signal) as a failed stop.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	within(t, "exit after SIGTERM", func() { err = cmd.Wait() })
	if err != nil {
		t.Errorf("the exporter alone, after SIGTERM: %v, want exit status 0", err)
	}
}

// TestCountJSONArray checks that -o json with --count writes one JSON
// array, also when SIGINT ends it early.
func TestCountJSONArray(t *testing.T) {
	bin := build(t)
	out, err := exec.Command(bin, "-r", "../../samples/multilink.pcap", "--count", "2", "--interval", "1ms", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var ss []monitor.Snapshot
	if err := json.Unmarshal(out, &ss); err != nil || len(ss) != 2 {
		t.Fatalf("--count 2 -o json: %d snapshots, %v:\n%.300s", len(ss), err, out)
	}

	// At a hundredth of the capture's pace the replay's first snapshot
	// comes at once, the next one an hour of capture time later or at its
	// end (14 s of capture, 23 min here): interrupt in between. At the
	// capture's own pace a loaded machine could reach the end first.
	cmd, stdout, _ := start(t, bin, "-r", "../../samples/multilink.pcap", "--count", "5", "--interval", "1h", "--speed", "0.01", "-o", "json")
	var buf bytes.Buffer
	within(t, "the first snapshot", func() {
		for !strings.Contains(buf.String(), "\n  }") {
			b, err := stdout.ReadByte()
			if err != nil {
				return
			}
			buf.WriteByte(b)
		}
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	within(t, "the rest after SIGINT", func() {
		rest, _ := io.ReadAll(stdout)
		buf.Write(rest)
		err = cmd.Wait()
	})
	if err != nil {
		t.Errorf("exit after SIGINT: %v", err)
	}
	ss = nil
	if err := json.Unmarshal(buf.Bytes(), &ss); err != nil || len(ss) != 1 {
		t.Errorf("interrupted --count 5 -o json: %d snapshots, %v:\n%s", len(ss), err, buf.Bytes())
	}
}

// TestSignalRestoresTerminal sends each ending signal to the dashboard in
// tmux: it must leave the alternate screen and turn mouse reporting off,
// as q does, and exit as a shell reports a command that signal killed
// (128+N) for SIGHUP and SIGTERM, so that a supervisor or script sees it
// was stopped; SIGINT is a quit, as ^C is in the dashboard.
func TestSignalRestoresTerminal(t *testing.T) {
	bin := build(t)
	for _, tt := range []struct {
		sig    syscall.Signal
		status string
	}{{syscall.SIGHUP, "129"}, {syscall.SIGTERM, "143"}, {syscall.SIGINT, "0"}} {
		sig := tt.sig
		t.Run(sig.String(), func(t *testing.T) {
			x := testutil.NewTmux(t, 100, 30, bin, "--netlink-replay", "../../smcnl/testdata/multilink-client-before",
				"--path.sysfs", "../../rdmastats/testdata/sys")
			// Keep the pane after smctop exits, to read its modes.
			x.Run("set-option", "-w", "remain-on-exit", "on")
			x.WaitFor("without redundancy")
			const modes = "#{alternate_on} #{mouse_any_flag} #{mouse_button_flag} #{mouse_standard_flag}"
			if got := x.Display(modes); got == "0 0 0 0" {
				t.Fatalf("the dashboard runs without alternate screen or mouse (%s): nothing to restore", got)
			}
			pid, err := strconv.Atoi(x.Display("#{pane_pid}"))
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatal(err)
			}
			x.WaitDisplay("#{pane_dead}", "1")
			if got := x.Display(modes); got != "0 0 0 0" {
				t.Errorf("after %v: alternate screen, any/button/standard mouse = %s, want 0 0 0 0", sig, got)
			}
			if got := x.ExitStatus(); got != tt.status {
				t.Errorf("after %v: exit status %s, want %s", sig, got, tt.status)
			}
		})
	}
}

// TestStatusLineFileName replays a capture whose name holds a tview colour
// tag, at 80x24: the status line must show the name as written, once.
func TestStatusLineFileName(t *testing.T) {
	dir := t.TempDir()
	pcap, err := os.ReadFile("../../samples/multilink.pcap")
	if err != nil {
		t.Fatal(err)
	}
	const name = "x[red]y.pcap"
	if err := os.WriteFile(filepath.Join(dir, name), pcap, 0o644); err != nil {
		t.Fatal(err)
	}
	x := testutil.NewTmuxIn(t, dir, 80, 24, build(t), "-r", name, "--interval", "100ms")
	scr := x.WaitFor("frames, ended")
	lines := strings.Split(strings.TrimRight(scr, "\n"), "\n")
	status := lines[len(lines)-1]
	if n := strings.Count(status, name); n != 1 || !strings.HasPrefix(status, "capture "+name+"  ") || !strings.Contains(status, " 4572 frames, ended") {
		t.Errorf("status line %q: want the file name %q once, as written, then 4572 frames, ended", status, name)
	}
	x.Keys("q")
}

// cutCapture writes samples/multilink.pcap cut in the middle of record
// frame (1-based) and returns its path.
func cutCapture(t *testing.T, frame int) string {
	t.Helper()
	b, err := os.ReadFile("../../samples/multilink.pcap")
	if err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 {
		t.Fatal("samples/multilink.pcap is not a little-endian microsecond pcap")
	}
	off := 24 // the file header; then 16-byte record headers
	for i := 1; i < frame; i++ {
		off += 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
	}
	incl := int(binary.LittleEndian.Uint32(b[off+8:]))
	p := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(p, b[:off+16+incl/2], 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTruncatedOnce runs --once and --count over a capture cut inside a
// record: the snapshot of what was read comes first, then one line naming
// the file and the frame, and exit status 2, as smcdump has for it.
func TestTruncatedOnce(t *testing.T) {
	bin := build(t)
	pcap := cutCapture(t, 2000)
	wantErr := "smctop: " + pcap + ": frame 2000 (file offset 0x"
	for _, args := range [][]string{{"--once", "-o", "json"}, {"--count", "2", "--interval", "1h", "-o", "jsonl"}, {"--once"}} {
		cmd := exec.Command(bin, append([]string{"-r", pcap}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, _ := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if e := stderr.String(); !strings.HasPrefix(e, wantErr) || !strings.HasSuffix(e, ": truncated record: the file ends inside it\n") || strings.Count(e, "\n") != 1 {
			t.Errorf("%q: stderr %q, want one line naming the file and frame 2000", args, e)
		}
		if args[len(args)-1] == "--once" {
			if !strings.Contains(string(out), "frames") || !strings.Contains(string(out), "0x1") {
				t.Errorf("%q: text output lacks the link group read before the cut:\n%.500s", args, out)
			}
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		n := 0
		for ; dec.More(); n++ {
			var s monitor.Snapshot
			if err := dec.Decode(&s); err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			if len(s.LinkGroups) == 0 || s.Overview.SMCR == 0 {
				t.Errorf("%q: snapshot %d lacks what was read before the cut: %+v", args, n, s.Overview)
			}
		}
		// --count on a replay ends with the snapshot in which the
		// capture ended: the first hour of capture time holds it all.
		if want := 1; n != want {
			t.Errorf("%q: %d snapshots, want %d", args, n, want)
		}
	}
}

// TestCountStepsReplay: --count on a replay steps through the capture,
// one interval of capture time per snapshot, without waiting: the frames
// read grow from one snapshot to the next; the output ends with the
// snapshot in which the capture ended, and stderr says where the count
// stopped when the capture goes on.
func TestCountStepsReplay(t *testing.T) {
	bin := build(t)
	for _, tc := range []struct {
		count, want int
		goesOn      bool
	}{{6, 6, true}, {20, 7, false}} {
		cmd := exec.Command(bin, "-r", "../../samples/multilink.pcap", "--count", strconv.Itoa(tc.count), "--interval", "2s", "-o", "jsonl")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("--count %d: %v %s", tc.count, err, &stderr)
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		var frames []int
		ended := false
		for dec.More() {
			var s monitor.Snapshot
			if err := dec.Decode(&s); err != nil {
				t.Fatal(err)
			}
			for _, src := range s.Sources {
				if src.Name == "wire" {
					frames, ended = append(frames, src.Frames), src.Ended
				}
			}
		}
		if len(frames) != tc.want {
			t.Errorf("--count %d: %d snapshots (frames %v), want %d", tc.count, len(frames), frames, tc.want)
		}
		for i := 1; i < len(frames); i++ {
			if frames[i] <= frames[i-1] {
				t.Errorf("--count %d: frames read %v: snapshot %d did not step", tc.count, frames, i)
			}
		}
		if ended == tc.goesOn || strings.Contains(stderr.String(), "the capture goes on") != tc.goesOn {
			t.Errorf("--count %d: ended %v, stderr %q", tc.count, ended, &stderr)
		}
	}
}

// TestRemoteTLSNoSecrets: an exporter behind --web.config.file (TLS, a
// basic-auth user) is read by smctop --remote with the CA from
// --http.config.file and the user in the URL; the dashboard's snapshot
// comes through, and the password is printed nowhere: not in the text,
// not in the JSON, not in an error.
func TestRemoteTLSNoSecrets(t *testing.T) {
	bin := build(t)
	files := testutil.NewTLSFiles(t)
	web := testutil.WebConfig(t, files, "prom", "s3cret-pw")
	_, _, stderr := start(t, bin, "--listen", "127.0.0.1:0", "--no-tui", "--web.config.file", web, "-r", "../../samples/multilink.pcap")
	var line string
	within(t, "the serving line", func() { line, _ = stderr.ReadString('\n') })
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "smctop: serving /metrics on ")
	if !ok {
		t.Fatalf("stderr %q", line)
	}
	ca := filepath.Join(t.TempDir(), "http.yml")
	if err := os.WriteFile(ca, []byte("tls_config:\n  ca_file: "+files.CA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "https://prom:s3cret-pw@" + addr
	for _, args := range [][]string{
		{"--remote", url, "--http.config.file", ca, "--once"},
		{"--remote", url, "--http.config.file", ca, "--once", "-o", "json"},
		{"--remote", url, "--once"}, // no CA: the TLS error is shown
		{"--prometheus", "https://prom:s3cret-pw@127.0.0.1:1", "--once"},
	} {
		cmd := exec.Command(bin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run()
		all := out.String() + errb.String()
		if strings.Contains(all, "s3cret-pw") {
			t.Errorf("smctop %s prints the password:\n%s", strings.Join(args, " "), all)
		}
		if args[0] == "--remote" && len(args) > 3 && !strings.Contains(all, "10.10.0.") {
			t.Errorf("smctop %s shows no connection of the remote host:\n%.600s", strings.Join(args, " "), all)
		}
	}
}
