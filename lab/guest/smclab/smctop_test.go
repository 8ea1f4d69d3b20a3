package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/monitor"
)

// failoverStream is smctop -o jsonl across a failover: both links, then one
// with the tracepoint's link-down, then also the failover, and a last line
// still being written.
func failoverStream(t *testing.T) []byte {
	t.Helper()
	link := func(id uint8, active bool) monitor.LinkRow { return monitor.LinkRow{ID: id, Active: active} }
	down := monitor.Event{Kind: monitor.EventLinkDown, Source: "tracepoint"}
	fail := monitor.Event{Kind: monitor.EventFailover, Source: "diff"}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, s := range []monitor.Snapshot{
		{LinkGroups: []monitor.LinkGroupRow{{Links: []monitor.LinkRow{link(1, true), link(2, true)}}}},
		{LinkGroups: []monitor.LinkGroupRow{{Links: []monitor.LinkRow{link(1, true), link(2, false)}}}, Events: []monitor.Event{down}},
		{LinkGroups: []monitor.LinkGroupRow{{Links: []monitor.LinkRow{link(1, true)}}}, Events: []monitor.Event{down, fail}},
	} {
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteString(`{"link_groups":[`)
	return b.Bytes()
}

func TestFindSnapshot(t *testing.T) {
	data := failoverStream(t)
	for _, tt := range []struct {
		name  string
		want  smctopWant
		match int
	}{
		{"both links", smctopWant{links: 2}, 1},
		{"one link", smctopWant{links: 1}, 2},
		{"failover", smctopWant{links: 1, events: []string{"link-down/tracepoint", "failover"}}, 3},
		{"any source", smctopWant{links: -1, events: []string{"link-down"}}, 2},
		{"other source", smctopWant{links: -1, events: []string{"link-down/diff"}}, 0},
		{"three links", smctopWant{links: 3}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			match, lines, err := findSnapshot(data, tt.want)
			if err != nil || match != tt.match || lines != 3 {
				t.Errorf("findSnapshot(%v) = %d, %d lines, %v; want %d, 3 lines (the unfinished one left)", tt.want, match, lines, err, tt.match)
			}
		})
	}
	if _, _, err := findSnapshot([]byte("{}\nnot json\n"), smctopWant{links: -1}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a broken complete line: error %v, want one naming line 2", err)
	}
}

func TestWaitSmctop(t *testing.T) {
	file := filepath.Join(t.TempDir(), "stream.jsonl")
	if err := os.WriteFile(file, failoverStream(t), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"wait-smctop", file, "0", "-links", "1", "-event", "failover"}, &out); err != nil || !strings.HasPrefix(out.String(), "smctop_snapshot=3 of=3 ") {
		t.Errorf("wait-smctop for the failover: %v, output %q", err, out.String())
	}
	if err := run([]string{"wait-smctop", file, "0", "-links", "3"}, &out); err == nil || !strings.Contains(err.Error(), "none of 3 snapshots") {
		t.Errorf("wait-smctop for what no snapshot shows: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := run([]string{"wait-smctop", file, "60", "-pid", strconv.Itoa(pid), "-links", "3"}, &out); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("wait-smctop on an exited smctop: %v, want it to stop waiting", err)
	}
}

// TestFindSettled: -traced waits for the tracepoints read, -settled for the
// first snapshot after -after whose process totals did not move since the
// snapshot before it (every call counted), never one before -after.
func TestFindSettled(t *testing.T) {
	traced := []monitor.Source{{Name: "throughput", Available: true}}
	proc := func(tx uint64) []monitor.ProcessRow {
		return []monitor.ProcessRow{{PID: 7, TxBytes: tx, RxBytes: tx, TxCalls: tx / 64, RxCalls: tx / 64}}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, s := range []monitor.Snapshot{
		{Sources: []monitor.Source{{Name: "throughput", Detail: "cursor differences only"}}},
		{Sources: traced},                        // 2: traced, the process stopped
		{Sources: traced, Processes: proc(640)},  // 3: running
		{Sources: traced, Processes: proc(640)},  // 4: a pause that looks settled
		{Sources: traced, Processes: proc(1280)}, // 5: stopped while this was made
		{Sources: traced, Processes: proc(1344)}, // 6: the last calls read late
		{Sources: traced, Processes: proc(1344)}, // 7: settled
	} {
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		want  smctopWant
		match int
	}{
		{smctopWant{links: -1, traced: true}, 2},
		{smctopWant{links: -1, settled: 7}, 4},
		{smctopWant{links: -1, settled: 7, after: 4}, 7},
		{smctopWant{links: -1, settled: 8}, 0},
		{smctopWant{links: -1, callsPID: 7, calls: 40}, 5},
	} {
		if match, _, err := findSnapshot(b.Bytes(), tt.want); err != nil || match != tt.match {
			t.Errorf("findSnapshot(%v) = %d, %v; want %d", tt.want, match, err, tt.match)
		}
	}
	if _, _, _, w, err := parseWaitSmctop([]string{"f", "10", "-traced", "-settled", "7", "-after", "4", "-calls", "7:20"}); err != nil || !w.traced || w.settled != 7 || w.after != 4 || w.callsPID != 7 || w.calls != 20 {
		t.Errorf("parse: %+v, %v", w, err)
	}
}
