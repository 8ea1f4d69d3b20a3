package main

import (
	"encoding/json"
	"os/exec"
	"strings"
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
