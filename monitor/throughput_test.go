package monitor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestParseMsgLine(t *testing.T) {
	for _, c := range []struct {
		line string
		key  MsgKey
		tx   bool
		n    uint64
	}{
		// Without record-tgid: the thread.
		{`         smcping-312     [000] ..... 101.500100: smc_tx_sendmsg: smc=000000003a1b6c2d net=1 len=64 dev=rxe0`, MsgKey{312, true, "smcping", "000000003a1b6c2d", "rxe0"}, true, 64},
		{`  my-app-v2-4711 [001] d.... 7.1: smc_rx_recvmsg: smc=00000000deadbeef net=4026531840 len=65536 dev=lo`, MsgKey{4711, true, "my-app-v2", "00000000deadbeef", "lo"}, false, 65536},
		// With record-tgid (trace_print_context: "(%7d) "): the process.
		{`         smcping-314     (    310) [001] ..... 101.500200: smc_tx_sendmsg: smc=000000003a1b6c2d net=1 len=64 dev=lo`, MsgKey{310, false, "smcping", "000000003a1b6c2d", "lo"}, true, 64},
		// Its process not recorded yet: the thread, for procfs to resolve.
		{`         smcping-314     (-------) [001] ..... 101.500300: smc_rx_recvmsg: smc=000000003a1b6c2d net=1 len=64 dev=lo`, MsgKey{314, true, "smcping", "000000003a1b6c2d", "lo"}, false, 64},
	} {
		k, tx, n, ok := ParseMsgLine(c.line)
		if !ok || k != c.key || tx != c.tx || n != c.n {
			t.Errorf("%q: %+v tx %v n %d ok %v", c.line, k, tx, n, ok)
		}
	}
	for _, l := range []string{"x-1 [000] .... 1.0: smc_switch_to_fallback: sk=0 clcsk=0 net=1 fallback_rsn=50528256", "garbage"} {
		if _, _, _, ok := ParseMsgLine(l); ok {
			t.Errorf("%q read as a message", l)
		}
	}
}

// TestTracerMsgs: the tracer sums sends and receives per process and
// socket from its instance's trace_pipe (a FIFO standing in for tracefs).
func TestTracerMsgs(t *testing.T) {
	root := t.TempDir()
	inst := filepath.Join(root, "instances", "test")
	for _, ev := range append(traceEvents, traceMsgs...) {
		if err := os.MkdirAll(filepath.Join(inst, "events", ev), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(inst, "events", ev, "enable"), []byte("0"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pipe := filepath.Join(inst, "trace_pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	w := make(chan *os.File, 1)
	go func() {
		f, _ := os.OpenFile(pipe, os.O_WRONLY, 0)
		w <- f
	}()
	tr, err := StartTracer(root, "test")
	if err != nil {
		t.Fatal(err)
	}
	f := <-w
	if !tr.Msgs {
		t.Fatalf("message tracepoints not enabled: %v", tr.MsgsErr)
	}
	for _, l := range []string{
		"smcping-7 [000] ..... 1.0: smc_tx_sendmsg: smc=00000000aaaa net=1 len=100 dev=rxe0",
		"smcping-7 [000] ..... 1.1: smc_tx_sendmsg: smc=00000000aaaa net=1 len=28 dev=rxe0",
		"smcping-7 [000] ..... 1.2: smc_rx_recvmsg: smc=00000000aaaa net=1 len=128 dev=rxe0",
	} {
		f.WriteString(l + "\n")
	}
	f.Close()
	<-tr.done // the reader ends at the writer's close: every line is in
	got := tr.DrainMsgs()
	want := MsgCount{TxBytes: 128, RxBytes: 128, TxCalls: 2, RxCalls: 1}
	if c := got[MsgKey{7, true, "smcping", "00000000aaaa", "rxe0"}]; c != want || len(got) != 1 {
		t.Errorf("sums %+v, want %+v", got, want)
	}
	for _, ev := range append(traceEvents, traceMsgs...) {
		if b, _ := os.ReadFile(filepath.Join(inst, "events", ev, "enable")); string(b) != "1" {
			t.Errorf("%s not enabled: %q", ev, b)
		}
	}
}

// TestThroughputThreads: calls the tracepoints name by thread (a kernel
// without record-tgid, or a process it has not recorded) count for the
// thread's process, as procfs's /proc/TID/status says: a Go program sends
// and receives from several threads, none of them its first.
func TestThroughputThreads(t *testing.T) {
	proc := t.TempDir()
	for tid, tgid := range map[int]int{41: 40, 42: 40} {
		d := filepath.Join(proc, strconv.Itoa(tid))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		st := fmt.Sprintf("Name:\tsmcping\nTgid:\t%d\nPid:\t%d\n", tgid, tid)
		if err := os.WriteFile(filepath.Join(d, "status"), []byte(st), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := New(Options{ProcRoot: proc})
	s := &Snapshot{Interval: time.Second, Conns: []ConnRow{{Key: "inode:1", Source: SourceKernel, Mode: ModeSMCD, PID: 40}}}
	m.throughput(s, map[MsgKey]MsgCount{
		{PID: 41, Thread: true, Comm: "smcping", Sock: "s1", Dev: "lo"}: {TxBytes: 640, TxCalls: 10},
		{PID: 42, Thread: true, Comm: "smcping", Sock: "s1", Dev: "lo"}: {RxBytes: 640, RxCalls: 10},
		{PID: 40, Comm: "smcping", Sock: "s1", Dev: "lo"}:               {TxBytes: 64, TxCalls: 1},
		{PID: 99, Thread: true, Comm: "gone", Sock: "s9", Dev: "lo"}:    {TxBytes: 1, TxCalls: 1},
	})
	if len(s.Processes) != 2 || s.Processes[0].PID != 40 || s.Processes[0].TxBytes != 704 || s.Processes[0].RxBytes != 640 || s.Processes[1].PID != 99 {
		t.Errorf("processes %+v, want 40 with its threads' calls and 99 (no status) as itself", s.Processes)
	}
	if tr := s.Conns[0].Traced; tr == nil || tr.TxCalls != 11 || tr.RxCalls != 10 {
		t.Errorf("the connection's traced calls %+v", tr)
	}
}

// TestThroughput: per process, the traced calls become rates and totals;
// a process with one SMC socket has them on its connection too; one with
// two keeps them on the process only.
func TestThroughput(t *testing.T) {
	m := New(Options{})
	s := &Snapshot{Interval: 2 * time.Second, Conns: []ConnRow{
		{Key: "inode:1", Source: SourceKernel, Mode: ModeSMCR, PID: 10},
		{Key: "inode:2", Source: SourceKernel, Mode: ModeSMCR, PID: 20},
		{Key: "inode:3", Source: SourceKernel, Mode: ModeSMCD, PID: 20},
	}}
	msgs := map[MsgKey]MsgCount{
		{PID: 10, Comm: "a", Sock: "s1", Dev: "rxe0"}: {TxBytes: 2000, TxCalls: 10, RxBytes: 1000, RxCalls: 5},
		{PID: 20, Comm: "b", Sock: "s2", Dev: "rxe0"}: {TxBytes: 400, TxCalls: 4},
		{PID: 20, Comm: "b", Sock: "s3", Dev: "lo"}:   {TxBytes: 600, TxCalls: 6},
	}
	m.throughput(s, msgs)
	if tr := s.Conns[0].Traced; tr == nil || tr.TxRate != 1000 || tr.RxRate != 500 || tr.TxCalls != 10 {
		t.Errorf("inode:1 traced %+v", tr)
	}
	if s.Conns[1].Traced != nil || s.Conns[2].Traced != nil {
		t.Error("a process with two sockets had its calls put on one")
	}
	if len(s.Processes) != 2 || s.Processes[1].TxRate != 500 || s.Processes[1].Sockets != 2 || s.Processes[1].Conns != 2 {
		t.Errorf("processes %+v", s.Processes)
	}
	s2 := &Snapshot{Interval: time.Second, Conns: s.Conns[:1]}
	m.throughput(s2, map[MsgKey]MsgCount{{PID: 10, Comm: "a", Sock: "s1"}: {TxBytes: 1, TxCalls: 1}})
	if p := s2.Processes[0]; p.TxBytes != 2001 || p.TxCalls != 11 {
		t.Errorf("totals since the start %+v", p)
	}
}
