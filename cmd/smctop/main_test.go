package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/monitor"
)

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "smctop")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

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
	tmux := testutil.NeedTool(t, "tmux")
	bin := build(t)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("new-session", "-d", "-x", "120", "-y", "40", bin, "--netlink-replay", "../../smcnl/testdata/multilink-client-before",
		"--path.sysfs", "../../rdmastats/testdata/sys", "--interval", "200ms")
	defer exec.Command(tmux, "-S", sock, "kill-server").Run()
	waitFor := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			scr := run("capture-pane", "-p")
			if strings.Contains(scr, want) {
				return scr
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q:\n%s", want, scr)
			}
			time.Sleep(100 * time.Millisecond) // polling the pane
		}
	}
	waitFor("without redundancy")
	run("send-keys", "2")
	waitFor("inode:455")
	run("send-keys", "Enter")
	scr := waitFor("rxe1/1")
	if os.Getenv("SMCTOP_SCREENS") != "" {
		os.WriteFile(os.Getenv("SMCTOP_SCREENS"), []byte(scr), 0o644)
	}
	run("send-keys", "?")
	waitFor("drill down")
	run("send-keys", "Escape")
	run("send-keys", "q")
}
