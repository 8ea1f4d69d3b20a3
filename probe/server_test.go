//go:build linux

package probe

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// expectClosed reads until the server closes c, failing after 10 s.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("server did not close the connection")
	}
}

func TestServerRejectsOversize(t *testing.T) {
	_, ap := startServer(t, ServerConfig{TCPOnly: true, MaxMessage: 1024})
	c := dialTCP(t, ap)
	p := NewPinger(c, 4096)
	if _, err := p.Ping(1024); err != nil {
		t.Fatalf("ping at the limit: %v", err)
	}
	_, err := p.Ping(1025)
	if err == nil || !strings.Contains(err.Error(), "the server refused a 1025-byte message: its limit is 1024 bytes (--max-msg)") {
		t.Fatalf("ping above the limit: %v", err)
	}
	expectClosed(t, c)
}

func TestServerRejectsShortHeader(t *testing.T) {
	_, ap := startServer(t, ServerConfig{TCPOnly: true})
	c := dialTCP(t, ap)
	if _, err := c.Write([]byte{0, 0, 0, 3}); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, c)
}

func TestServerMaxConns(t *testing.T) {
	_, ap := startServer(t, ServerConfig{TCPOnly: true, MaxConns: 1})
	a := dialTCP(t, ap)
	if _, err := NewPinger(a, 64).Ping(64); err != nil {
		t.Fatal(err)
	}
	b := dialTCP(t, ap)
	// The client says why: refused at the connection limit (it said
	// "server limit below 64 bytes, or server gone").
	_, err := NewPinger(b, 64).Ping(64)
	var n *ServerNotice
	if !errors.As(err, &n) || n.Code != NoticeBusy || !strings.Contains(err.Error(),
		"the server refused the connection: it serves 1 connection at once (--max-conns) and none is idle") {
		t.Fatalf("second connection despite MaxConns 1: %v", err)
	}
	if _, err := NewPinger(a, 64).Ping(64); err != nil {
		t.Fatalf("first connection after the refused one: %v", err)
	}
}

func TestServerIdleTimeout(t *testing.T) {
	_, ap := startServer(t, ServerConfig{TCPOnly: true, IdleTimeout: 20 * time.Millisecond})
	expectClosed(t, dialTCP(t, ap))
}

// TestServerStreamHasNoReply checks that no-reply messages produce no
// bytes: the only reply is the 4-byte echo of the final ping.
func TestServerStreamHasNoReply(t *testing.T) {
	_, ap := startServer(t, ServerConfig{TCPOnly: true})
	c := dialTCP(t, ap)
	p := NewPinger(c, 8192)
	for range 10 {
		if err := p.Send(8192); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Ping(HeaderLen); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("extra reply bytes: n=%d err=%v", n, err)
	}
}

func TestServeWithoutListen(t *testing.T) {
	if err := NewServer(ServerConfig{}).Serve(t.Context()); err == nil {
		t.Error("Serve without Listen returned nil")
	}
}

// TestPingLoopDoesNotAllocate covers the measuring loop and, since
// AllocsPerRun counts every goroutine, the server's echo loop too.
func TestPingLoopDoesNotAllocate(t *testing.T) {
	_, ap := startServer(t, ServerConfig{TCPOnly: true})
	c := dialTCP(t, ap)
	cr := &connRun{conn: c, pinger: NewPinger(c, 1024), samples: make([]time.Duration, 0, 10000), sent: make([]time.Duration, 0, 10000)}
	if err := cr.loop(1024, 10, time.Time{}, 0, false); err != nil { // grow nothing later
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Hour)
	allocs := testing.AllocsPerRun(200, func() {
		if err := cr.loop(1024, 5, deadline, 0, false); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("ping loop: %v allocations per 5 pings, want 0", allocs)
	}
	if len(cr.samples) != 10+5*201 {
		t.Errorf("%d samples, want %d", len(cr.samples), 10+5*201)
	}
}

func BenchmarkPingLoopback(b *testing.B) {
	for _, size := range []int{64, 1024, 16384} {
		b.Run("size="+strconv.Itoa(size), func(b *testing.B) {
			// The client's read and the server's: a P for each and one
			// to spare, as smcping runs them (reserveProcs).
			reserveProcs(2)
			s := NewServer(ServerConfig{TCPOnly: true})
			if err := s.Listen(); err != nil {
				b.Fatal(err)
			}
			go s.Serve(b.Context())
			c, err := Dial(b.Context(), ProtoTCP, s.Addrs()[0], time.Second)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			p := NewPinger(c, size)
			b.ReportAllocs()
			b.SetBytes(int64(2 * size))
			for b.Loop() {
				if _, err := p.Ping(size); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// serveTCP runs a TCP-only Server on 127.0.0.1 until cancel; done
// receives what Serve returns.
func serveTCP(t *testing.T) (ap netip.AddrPort, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	s := NewServer(ServerConfig{Addr: netip.MustParseAddr("127.0.0.1"), TCPOnly: true})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	d := make(chan error, 1)
	go func() { d <- s.Serve(ctx) }()
	return s.Addrs()[0], cancel, d
}

// TestServeStopsWithOpenConnections checks that ending Serve's context
// wakes handlers blocked in read(2) on their blocking sockets.
func TestServeStopsWithOpenConnections(t *testing.T) {
	ap, cancel, done := serveTCP(t)
	c := dialTCP(t, ap)
	if _, err := NewPinger(c, 64).Ping(64); err != nil { // the handler is now blocked in read
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return with a connection open")
	}
	expectClosed(t, c)
}

// TestPingNotSmcpingServer talks to a peer that answers with bytes of the
// right length but the wrong header, as an unrelated echo service might.
func TestPingNotSmcpingServer(t *testing.T) {
	ap := serveOne(t, func(c net.Conn) {
		b := make([]byte, 64)
		if _, err := io.ReadFull(c, b); err == nil {
			b[3] ^= 0xff
			c.Write(b)
		}
	})
	c := dialTCP(t, ap)
	_, err := NewPinger(c, 64).Ping(64)
	if err == nil || !strings.Contains(err.Error(), "not an smcping server") {
		t.Errorf("Ping = %v, want a protocol error", err)
	}
}

// TestServerRequestDeadline: a client that trickles a request one byte at
// a time, each byte well within the idle timeout, is closed once the
// request has taken longer than RequestTimeout: the deadline is for the
// whole request, not for each read (which restarted on every byte, so such
// a client held its connection, and its slot, forever).
func TestServerRequestDeadline(t *testing.T) {
	_, ap := startServer(t, ServerConfig{TCPOnly: true, IdleTimeout: time.Minute, RequestTimeout: 200 * time.Millisecond})
	c := dialTCP(t, ap)
	closed := make(chan struct{})
	var got bytes.Buffer
	go func() {
		io.Copy(&got, c) // until the server closes
		close(closed)
	}()
	msg := make([]byte, 64)
	putHeader(msg, len(msg), false)
	tick := time.NewTicker(20 * time.Millisecond) // paces the client, asserts nothing
	defer tick.Stop()
	giveUp := time.After(10 * time.Second)
	for i := 0; ; {
		select {
		case <-closed:
			// Its notice says why.
			if want := putNotice(nil, NoticeTimeout, 200); !bytes.Equal(got.Bytes(), want) {
				t.Errorf("the server sent %x, want the notice %x", got.Bytes(), want)
			}
			return
		case <-giveUp:
			t.Fatal("the server kept a trickled request open for 10 s")
		case <-tick.C:
			if i == len(msg) {
				t.Fatalf("the server took the whole request, %d bytes over %d ticks", len(msg), i)
			}
			c.Write(msg[i : i+1])
			i++
		}
	}
}

// TestServerShedsSlowClients: slow clients (connected, one byte of a
// header sent, then nothing, within every timeout) fill the server
// again and again, as a Slowloris attack does; every good client is still
// served at its first attempt, because the connection that made no
// progress for longest is shed to make room. Before, the slow ones kept
// their slots and every good client was refused.
func TestServerShedsSlowClients(t *testing.T) {
	const maxConns = 4
	_, ap := startServer(t, ServerConfig{TCPOnly: true, MaxConns: maxConns, IdleTimeout: time.Minute,
		RequestTimeout: time.Minute, ShedAfter: time.Nanosecond})
	slow := func() {
		c := dialTCP(t, ap)
		if _, err := c.Write([]byte{0}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 * maxConns {
		slow()
	}
	for i := range 8 {
		for range maxConns { // the attacker fills the server again
			slow()
		}
		c := dialTCP(t, ap)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := NewPinger(c, 64).Ping(64); err != nil {
			t.Fatalf("good client %d behind %d slow ones: %v", i+1, maxConns, err)
		}
		c.Close()
	}
}

// TestServeStopsWhileAccepting ends Serve while clients keep connecting, so
// that an accept loop takes in a connection as Serve starts to wait for
// the ones it serves: that wait must follow every accept loop's end.
func TestServeStopsWhileAccepting(t *testing.T) {
	for round := range 30 {
		ap, cancel, done := serveTCP(t)
		stop := make(chan struct{})
		dialed := make(chan struct{}, 1)
		var dialers sync.WaitGroup
		for range 4 {
			dialers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					c, err := net.Dial("tcp", ap.String())
					if err != nil {
						continue
					}
					select {
					case dialed <- struct{}{}:
					default:
					}
					c.Close()
				}
			})
		}
		<-dialed // connections are arriving
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("round %d: Serve: %v", round, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Serve did not return", round)
		}
		close(stop)
		dialers.Wait()
	}
}

// flakyListener fails its first fail Accepts with err, then accepts; with
// fatal set, every Accept after the first connection waits for fatal to
// close and fails with EINVAL, as a listener that broke.
type flakyListener struct {
	net.Listener
	fail     atomic.Int32
	err      error
	fatal    chan struct{}
	accepted atomic.Bool
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fail.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", l.err)}
	}
	if l.fatal != nil && l.accepted.Swap(true) {
		<-l.fatal
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EINVAL)}
	}
	return l.Listener.Accept()
}

// serveFlaky is serveTCP over a flakyListener.
func serveFlaky(t *testing.T, l *flakyListener) (ap netip.AddrPort, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	s := NewServer(ServerConfig{Addr: netip.MustParseAddr("127.0.0.1"), TCPOnly: true})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	l.Listener = s.lns[0]
	s.lns[0] = l
	ctx, cancel := context.WithCancel(t.Context())
	d := make(chan error, 1)
	go func() { d <- s.Serve(ctx) }()
	return s.Addrs()[0], cancel, d
}

// TestServeRetriesAccept: an accept that fails for want of descriptors or
// memory (a burst of clients at the process's limit) is tried again, the
// client waiting in the backlog: the server goes on.
func TestServeRetriesAccept(t *testing.T) {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM} {
		l := &flakyListener{err: e}
		l.fail.Store(3)
		ap, cancel, done := serveFlaky(t, l)
		c := dialTCP(t, ap)
		if _, err := NewPinger(c, 64).Ping(64); err != nil {
			t.Fatalf("%v: ping after 3 failed accepts: %v", e, err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%v: Serve: %v", e, err)
		}
	}
}

// TestServeAcceptErrorEnds: a listener that breaks ends Serve with its
// error, and the connections open then are interrupted, not waited for.
func TestServeAcceptErrorEnds(t *testing.T) {
	l := &flakyListener{fatal: make(chan struct{})}
	ap, cancel, done := serveFlaky(t, l)
	defer cancel()
	c := dialTCP(t, ap)
	if _, err := NewPinger(c, 64).Ping(64); err != nil { // the handler is now blocked in read
		t.Fatal(err)
	}
	close(l.fatal)
	select {
	case err := <-done:
		if !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Serve: %v, want the accept error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its listener broke, with a connection open")
	}
	expectClosed(t, c)
}
