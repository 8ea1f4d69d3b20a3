package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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
	if s.Overview.SMCR != 3 || len(s.LinkGroups) != 1 || len(s.LinkGroups[0].Links) < 2 {
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
	x.Keys("Escape")
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

// noTTY runs the binary the way a service or `setsid smctop </dev/null`
// does: in a new session, so there is no controlling terminal, with stdin
// from /dev/null.
func noTTY(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, &o, &e // nil stdin is /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
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
		_, stderr, code := noTTY(t, bin, args...)
		want := "smctop: no terminal: the dashboard needs one; use --once, --count N or --listen ADDR --no-tui\n"
		if code != 2 || stderr != want {
			t.Errorf("smctop %q without a terminal: exit %d, stderr %q; want 2, %q", args, code, stderr, want)
		}
	}
	// The modes that need no terminal still run.
	out, stderr, code := noTTY(t, bin, "-r", "../../samples/multilink.pcap", "--once")
	if code != 0 || !strings.Contains(out, "0x1") {
		t.Errorf("--once without a terminal: exit %d, stderr %q, stdout %.200q", code, stderr, out)
	}
}
