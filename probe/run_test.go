//go:build linux

package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// loopbackOptions is a client run against a server started by startServer.
func loopbackOptions(t *testing.T, cfg ServerConfig) Options {
	t.Helper()
	s, _ := startServer(t, cfg)
	addrs := s.Addrs()
	o := Options{
		Host: "127.0.0.1", Port: addrs[0].Port(), Proto: ProtoTCP, Count: 50, Sizes: []int{64, 1024},
		Parallel: 1, Warmup: 3, Round: 10, Output: "json", Timeout: 5 * time.Second, MaxSamples: 1000,
	}
	if len(addrs) > 1 {
		o.TCPPort = addrs[1].Port()
	}
	return o
}

func runJSON(t *testing.T, o Options) Report {
	t.Helper()
	var out bytes.Buffer
	if err := runClient(context.Background(), o, &out, fakeInspector{}); err != nil {
		t.Fatalf("runClient: %v", err)
	}
	var r Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	return r
}

func TestLoopbackPingPong(t *testing.T) {
	o := loopbackOptions(t, ServerConfig{TCPOnly: true, TCPPort: 0})
	o.Parallel = 3
	o.LogFile = filepath.Join(t.TempDir(), "samples.csv")
	r := runJSON(t, o)
	if len(r.Conns) != 3 || r.Conns[0].Mode != "TCP" {
		t.Fatalf("connections: %+v", r.Conns)
	}
	if len(r.Results) != 2 {
		t.Fatalf("results: %+v", r.Results)
	}
	for i, res := range r.Results {
		if res.Size != o.Sizes[i] || res.RTT.N != 150 || res.Proto != "tcp" || res.Mode != "TCP" {
			t.Errorf("result %d: %+v", i, res)
		}
		if res.RTT.Min <= 0 || res.RTT.Min > res.RTT.P50 || res.RTT.P50 > res.RTT.Max || res.HalfRTT.P50 != res.RTT.P50/2 {
			t.Errorf("result %d: inconsistent statistics %+v", i, res)
		}
	}
	f, err := os.Open(o.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	lastSent := map[string]int64{}
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		if lines == 0 {
			if sc.Text() != "proto,mode,size,conn,seq,sent_ns,rtt_ns" {
				t.Fatalf("log header %q", sc.Text())
			}
			continue
		}
		f := strings.Split(sc.Text(), ",")
		if len(f) != 7 || f[0] != "tcp" || f[1] != "tcp" {
			t.Fatalf("log line %d: %q", lines, sc.Text())
		}
		sent, _ := strconv.ParseInt(f[5], 10, 64)
		rtt, _ := strconv.ParseInt(f[6], 10, 64)
		key := f[2] + "/" + f[3]
		if sent <= lastSent[key] || rtt <= 0 {
			t.Fatalf("log line %d: %q: sent_ns not increasing per connection (last %d) or rtt_ns <= 0", lines, sc.Text(), lastSent[key])
		}
		lastSent[key] = sent + rtt // the next ping leaves after this echo
	}
	if want := 1 + 2*3*50; lines != want {
		t.Errorf("log has %d lines, want %d", lines, want)
	}
}

// TestLoopbackInterleaved runs the --compare path with TCP on both sides
// (the only kind this machine has): rounds alternate, both get all samples
// and the ratio is computed.
func TestLoopbackInterleaved(t *testing.T) {
	o := loopbackOptions(t, ServerConfig{TCPOnly: true, TCPPort: 0})
	s2, _ := startServer(t, ServerConfig{TCPOnly: true})
	o.TCPPort = s2.Addrs()[0].Port()
	o.Compare = []Proto{ProtoTCP}
	o.Sizes = []int{64}
	o.Count = 35 // not a multiple of the round: the last round is short
	r := runJSON(t, o)
	if len(r.Results) != 2 || r.Results[0].RTT.N != 35 || r.Results[1].RTT.N != 35 {
		t.Fatalf("results: %+v", r.Results)
	}
	if len(r.Ratios) != 1 || r.Ratios[0].P50 <= 0 {
		t.Errorf("ratios: %+v", r.Ratios)
	}
	if len(r.Conns) != 2 || !strings.HasSuffix(r.Conns[1].Remote, ":"+strconv.Itoa(int(o.TCPPort))) {
		t.Errorf("baseline connection: %+v", r.Conns)
	}
}

func TestLoopbackDurationAndText(t *testing.T) {
	o := loopbackOptions(t, ServerConfig{TCPOnly: true})
	o.Count, o.Duration, o.Output, o.Hist = 1, 100*time.Millisecond, "text", true
	o.Sizes = []int{64}
	var out bytes.Buffer
	if err := runClient(context.Background(), o, &out, fakeInspector{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RTT (round trip), usec", "RTT/2 (one-way estimate", "p99.99", "histogram RTT usec, tcp size 64", "100ms per size"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestLoopbackBandwidth(t *testing.T) {
	o := loopbackOptions(t, ServerConfig{TCPOnly: true})
	o.Bandwidth, o.Count, o.Sizes, o.Parallel = true, 2000, []int{16384}, 2
	r := runJSON(t, o)
	if len(r.BW) != 1 {
		t.Fatalf("bandwidth: %+v", r.BW)
	}
	b := r.BW[0]
	if b.Messages != 4000 || b.Bytes != 4000*16384 || b.MBPerSec <= 0 || b.Conns != 2 {
		t.Errorf("bandwidth: %+v", b)
	}
}

func TestLoopbackCheck(t *testing.T) {
	o := loopbackOptions(t, ServerConfig{TCPOnly: true})
	o.Check, o.Output = true, "text"
	var out bytes.Buffer
	if err := runClient(context.Background(), o, &out, fakeInspector{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "OK TCP (tcp 127.0.0.1:") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("check line %q", out.String())
	}
	// -o json: one CheckReport (it printed the text line).
	o.Output = "json"
	out.Reset()
	if err := runClient(context.Background(), o, &out, fakeInspector{}); err != nil {
		t.Fatal(err)
	}
	var r CheckReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Verdict != "OK" || r.Conn == nil || r.Conn.Mode != "TCP" ||
		r.Pings != 10 || r.RTT == nil || r.RTT.N != 10 || r.Size != 64 {
		t.Errorf("--check -o json: %v\n%s", err, out.String())
	}
	// A refused connection is a FAIL report with its stage.
	o.Port = 1
	out.Reset()
	err := runClient(context.Background(), o, &out, fakeInspector{})
	r = CheckReport{}
	if err == nil || json.Unmarshal(out.Bytes(), &r) != nil || r.Verdict != "FAIL" || r.Stage != "connect" || r.Error == "" {
		t.Errorf("--check -o json, port 1: %v\n%s", err, out.String())
	}
}

// smcAvailable reports whether this kernel opens AF_SMC sockets.
func smcAvailable() bool {
	fd, err := unix.Socket(unix.AF_SMC, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err == nil
}

func TestCompareWithoutSMC(t *testing.T) {
	if smcAvailable() {
		t.Skip("this kernel has AF_SMC; the missing-module path cannot be tested here")
	}
	o := loopbackOptions(t, ServerConfig{TCPOnly: true})
	o.Proto, o.Compare = ProtoSMC, []Proto{ProtoTCP}
	err := runClient(context.Background(), o, io.Discard, KernelInspector{})
	if !errors.Is(err, ErrNotSupported) || !errors.Is(err, syscall.EAFNOSUPPORT) {
		t.Fatalf("err = %v, want ErrNotSupported wrapping EAFNOSUPPORT", err)
	}
	for _, want := range []string{"AF_SMC", "smc kernel module", "CONFIG_SMC"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	o.Proto = ProtoIPPROTO
	err = runClient(context.Background(), o, io.Discard, KernelInspector{})
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "6.11") {
		t.Errorf("IPPROTO_SMC: err = %v, want ErrNotSupported naming Linux 6.11", err)
	}
	s := NewServer(ServerConfig{Addr: netip.MustParseAddr("127.0.0.1")})
	if err := s.Listen(); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "smc kernel module") {
		t.Errorf("SMC server Listen: %v", err)
	}
}

func TestSocketErrorNamesModule(t *testing.T) {
	tests := []struct {
		p     Proto
		errno syscall.Errno
		want  string
	}{
		{ProtoSMC, unix.EAFNOSUPPORT, "smc kernel module (modprobe smc; CONFIG_SMC)"},
		{ProtoIPPROTO, unix.EPROTONOSUPPORT, "Linux >= 6.11"},
		{ProtoTCP, unix.EMFILE, "socket: too many open files"},
	}
	for _, tt := range tests {
		err := socketError(tt.p, tt.errno)
		if !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.errno) {
			t.Errorf("socketError(%v, %v) = %v, want %q", tt.p, tt.errno, err, tt.want)
		}
		if got := errors.Is(err, ErrNotSupported); got != tt.p.IsSMC() {
			t.Errorf("socketError(%v, %v): ErrNotSupported = %v", tt.p, tt.errno, got)
		}
	}
}

func TestDialErrors(t *testing.T) {
	// A port nobody listens on: bind one, close it, dial it.
	s, ap := startServer(t, ServerConfig{TCPOnly: true})
	s.Close()
	_, err := Dial(context.Background(), ProtoTCP, ap, time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), ap.String()) {
		t.Errorf("closed port: %v, want ECONNREFUSED naming %v", err, ap)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// 192.0.2.1 (TEST-NET-1) never answers; the cancelled context must end
	// the wait at once instead of the 1 h timeout.
	start := time.Now()
	_, err = Dial(ctx, ProtoTCP, netip.MustParseAddrPort("192.0.2.1:9"), time.Hour)
	if err == nil || time.Since(start) > 30*time.Second {
		t.Errorf("cancelled dial: %v after %v", err, time.Since(start))
	}
}

// TestAcceptedAddrs checks that accepted connections always have both
// addresses (the server logs and proves by them).
func TestAcceptedAddrs(t *testing.T) {
	ln, err := Listen(ProtoTCP, netip.MustParseAddrPort("127.0.0.1:0"), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := dialTCP(t, netip.MustParseAddrPort(ln.Addr().String()))
	a, err := accept(ln, ProtoTCP)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.RemoteAddr().String() != c.LocalAddr().String() || a.LocalAddr().String() != c.RemoteAddr().String() {
		t.Errorf("accepted %v <- %v, dialled %v -> %v", a.LocalAddr(), a.RemoteAddr(), c.LocalAddr(), c.RemoteAddr())
	}
	// Both keys of sock_diag, distinct per socket (the kernel's SO_COOKIE
	// works on TCP sockets just as on SMC ones).
	if id := socketID(a); id.Inode == 0 || id.Inode == c.Inode || id.Cookie == 0 || id.Cookie == c.Cookie || c.Cookie == 0 {
		t.Errorf("accepted %v, dialled %v", id, c.ID())
	}
}

// TestClientInterrupted checks that cancelling the context ends a run
// whose goroutines are blocked in read(2) on a server that never answers.
func TestClientInterrupted(t *testing.T) {
	ln, err := Listen(ProtoTCP, netip.MustParseAddrPort("127.0.0.1:0"), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // accepted by the kernel, never served
	ap := netip.MustParseAddrPort(ln.Addr().String())
	o := Options{Host: "127.0.0.1", Port: ap.Port(), Proto: ProtoTCP, Count: 10, Sizes: []int{64}, Parallel: 2,
		Round: 10, Output: "text", Timeout: 5 * time.Second, MaxSamples: 10}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- runClient(ctx, o, &out, fakeInspector{}) }()
	time.Sleep(50 * time.Millisecond) // let it block; the check below does not depend on it
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if strings.Contains(out.String(), "RTT (round trip)") {
			t.Errorf("statistics printed without a single sample:\n%s", out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("client did not stop after cancel")
	}
}

// TestClientInterruptedReports checks that Ctrl-C in the middle of a
// paced run still prints the statistics of the samples taken so far.
func TestClientInterruptedReports(t *testing.T) {
	o := loopbackOptions(t, ServerConfig{TCPOnly: true})
	o.Count, o.Sizes, o.Warmup, o.Interval, o.Output = 100000, []int{64}, 0, 5*time.Millisecond, "text"
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	var out bytes.Buffer
	err := runClient(ctx, o, &out, fakeInspector{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !strings.Contains(out.String(), "RTT (round trip)") || !strings.Contains(out.String(), "one every 5ms") {
		t.Errorf("no partial statistics:\n%s", out.String())
	}
}

// syncBuffer is a log sink two goroutines may use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCompareWarmsUpEachRound: with --compare the first ping of each
// round follows the other protocol's and is not a sample: each server
// answers the warm-up, one unrecorded ping per round and the samples
// (35 in rounds of 10: 4 rounds).
func TestCompareWarmsUpEachRound(t *testing.T) {
	var logs [2]syncBuffer
	o := loopbackOptions(t, ServerConfig{TCPOnly: true, Log: slog.New(slog.NewTextHandler(&logs[0], nil))})
	s2, _ := startServer(t, ServerConfig{TCPOnly: true, Log: slog.New(slog.NewTextHandler(&logs[1], nil))})
	o.TCPPort = s2.Addrs()[0].Port()
	o.Compare = []Proto{ProtoTCP}
	o.Sizes, o.Count, o.Warmup, o.Round = []int{64}, 35, 3, 10
	r := runJSON(t, o)
	if r.Results[0].RTT.N != 35 || r.Results[1].RTT.N != 35 {
		t.Fatalf("samples %d and %d, want 35 each", r.Results[0].RTT.N, r.Results[1].RTT.N)
	}
	want := fmt.Sprintf("messages=%d", 3+4+35)
	for i := range logs {
		// The server logs the connection's end once it has read the
		// client's close: waited for, with a deadline.
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(logs[i].String(), "connection closed") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // polling the log for an event
		}
		if got := logs[i].String(); !strings.Contains(got, want) {
			t.Errorf("server %d: want %s in its log:\n%s", i+1, want, got)
		}
	}
}

// TestCompareDurationPerProtocol: -t, as -n, is per protocol: with
// --compare each protocol is measured for the whole duration, so the run
// takes at least twice it, and both have samples.
func TestCompareDurationPerProtocol(t *testing.T) {
	o := loopbackOptions(t, ServerConfig{TCPOnly: true})
	s2, _ := startServer(t, ServerConfig{TCPOnly: true})
	o.TCPPort = s2.Addrs()[0].Port()
	o.Compare = []Proto{ProtoTCP}
	o.Sizes, o.Count, o.Duration, o.MaxSamples = []int{64}, 1, 150*time.Millisecond, 1<<16
	start := time.Now()
	r := runJSON(t, o)
	if took := time.Since(start); took < 2*o.Duration {
		t.Errorf("the run took %v, want at least %v (each protocol %v)", took, 2*o.Duration, o.Duration)
	}
	if r.Results[0].RTT.N == 0 || r.Results[1].RTT.N == 0 {
		t.Errorf("samples %d and %d", r.Results[0].RTT.N, r.Results[1].RTT.N)
	}
}
