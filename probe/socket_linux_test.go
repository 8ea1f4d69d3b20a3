//go:build linux

package probe

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// socketPair returns an fdConn on one end of a connected Unix stream pair
// and the other end's descriptor; both close when the test ends.
func socketPair(t *testing.T) (*fdConn, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newFDConn(fds[0], ProtoTCP)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); unix.Close(fds[1]) })
	return c, fds[1]
}

// step is one return of a faked read(2): n bytes of the real read (n < 0:
// all it gives) or err.
type step struct {
	n   int
	err error
}

// fakeRead makes c's read(2) return the steps in turn, then behave.
func fakeRead(c *fdConn, steps ...step) {
	c.sysread = func(fd int, p []byte) (int, error) {
		if len(steps) == 0 {
			return unix.Read(fd, p)
		}
		s := steps[0]
		steps = steps[1:]
		switch {
		case s.err != nil:
			return 0, s.err
		case s.n == 0:
			return 0, nil
		case s.n > 0:
			return unix.Read(fd, p[:min(s.n, len(p))])
		}
		return unix.Read(fd, p)
	}
}

// TestFDConnReadPath feeds Read every kind of return read(2) has.
func TestFDConnReadPath(t *testing.T) {
	tests := []struct {
		name     string
		steps    []step
		deadline bool // a read deadline is set
		expired  bool // the watchdog has ended the read
		wantN    int
		wantErr  error
	}{
		{name: "EINTR is retried", steps: []step{{err: unix.EINTR}, {err: unix.EINTR}, {n: -1}}, wantN: 5},
		{name: "EINTR under a deadline is retried", steps: []step{{err: unix.EINTR}, {n: -1}}, deadline: true, wantN: 5},
		{name: "short read", steps: []step{{n: 2}}, wantN: 2},
		{name: "EOF", steps: []step{{n: 0}}, wantErr: io.EOF},
		{name: "expired receive timeout (EAGAIN)", steps: []step{{err: unix.EAGAIN}}, deadline: true, wantErr: os.ErrDeadlineExceeded},
		{name: "the watchdog's shutdown is a timeout, not EOF", steps: []step{{n: 0}}, expired: true, wantErr: os.ErrDeadlineExceeded},
		{name: "other errors", steps: []step{{err: unix.ECONNRESET}}, wantErr: unix.ECONNRESET},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, peer := socketPair(t)
			if _, err := unix.Write(peer, []byte("hello")); err != nil {
				t.Fatal(err)
			}
			if tt.deadline {
				c.SetReadDeadline(time.Now().Add(time.Hour))
			}
			c.expired.Store(tt.expired)
			fakeRead(c, tt.steps...)
			n, err := c.Read(make([]byte, 16))
			if n != tt.wantN || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("Read = %d, %v; want %d, %v", n, err, tt.wantN, tt.wantErr)
			}
			if r := c.reading.Load(); r%2 != 0 {
				t.Errorf("reading = %d after Read returned: the watchdog would see a read waiting", r)
			}
		})
	}
}

func TestFDConnReadAfterClose(t *testing.T) {
	c, _ := socketPair(t)
	c.Close()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after Close: %v, want net.ErrClosed", err)
	}
	c.interrupt() // must not shut down a descriptor that may be another socket's now
	if c.watch(time.Now()) {
		t.Error("the watchdog of a closed connection ended a read")
	}
}

// waitReading returns once c's reader is inside an idle-bounded Read
// (between the count and read(2), or in it: the watchdog cannot tell).
func waitReading(t *testing.T, c *fdConn) {
	t.Helper()
	for c.reading.Load()%2 == 0 {
		runtime.Gosched()
	}
}

// TestWatchdog drives the watchdog's looks with chosen times; its own
// timer, at an hour, stays out of the way.
func TestWatchdog(t *testing.T) {
	t0 := time.Now()
	t.Run("a read waiting the idle limit ends as a timeout", func(t *testing.T) {
		c, _ := socketPair(t)
		c.watchIdle(time.Hour)
		errc := make(chan error, 1)
		go func() { _, err := c.Read(make([]byte, 1)); errc <- err }()
		waitReading(t, c)
		if c.watch(t0) || c.watch(t0.Add(time.Hour-time.Nanosecond)) {
			t.Fatal("ended a read before the idle limit")
		}
		if !c.watch(t0.Add(time.Hour)) {
			t.Fatal("did not end a read waiting the idle limit")
		}
		if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read: %v, want os.ErrDeadlineExceeded", err)
		}
	})
	t.Run("no read, no timeout", func(t *testing.T) {
		c, peer := socketPair(t)
		c.watchIdle(time.Hour)
		for i := range 10 {
			if c.watch(t0.Add(time.Duration(i) * time.Hour)) {
				t.Fatal("ended a connection that was not reading")
			}
		}
		unix.Write(peer, []byte("x"))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Errorf("Read after idle looks: %v", err)
		}
	})
	t.Run("each new read starts the limit again", func(t *testing.T) {
		c, peer := socketPair(t)
		c.watchIdle(time.Hour)
		for i := range 3 {
			errc := make(chan error, 1)
			go func() { _, err := c.Read(make([]byte, 1)); errc <- err }()
			waitReading(t, c)
			at := t0.Add(time.Duration(i) * 50 * time.Minute)
			if c.watch(at) {
				t.Fatalf("read %d ended at its first look", i)
			}
			unix.Write(peer, []byte("x"))
			if err := <-errc; err != nil {
				t.Fatalf("read %d: %v", i, err)
			}
		}
	})
	t.Run("a read under a deadline is the deadline's", func(t *testing.T) {
		c, peer := socketPair(t)
		c.watchIdle(time.Hour)
		c.SetReadDeadline(time.Now().Add(time.Hour))
		errc := make(chan error, 1)
		go func() { _, err := c.Read(make([]byte, 1)); errc <- err }()
		// Nothing to wait for: the read under a deadline does not count.
		for i := range 4 {
			if c.watch(t0.Add(time.Duration(i) * time.Hour)) {
				t.Fatal("the idle limit ended a read under a deadline")
			}
		}
		unix.Write(peer, []byte("x"))
		if err := <-errc; err != nil {
			t.Errorf("Read: %v", err)
		}
	})
}

// TestWatchdogEndsStalledServer: a server that takes the connection and
// then never answers. The watchdog's own timer ends the client's read at
// the idle limit, as a timeout (what smcping reports for a stalled server).
func TestWatchdogEndsStalledServer(t *testing.T) {
	ap := serveOne(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // reads, never answers
	c := dialTCP(t, ap)
	fc := c.Conn.(*fdConn)
	if fc.ridle != ioTimeout {
		t.Errorf("a dialled connection's idle limit is %v, want ioTimeout %v", fc.ridle, ioTimeout)
	}
	fc.watchIdle(20 * time.Millisecond)
	_, err := NewPinger(c, 64).Ping(64)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Ping to a stalled server: %v, want a timeout", err)
	}
}

// TestPingShortReads: the client's read(2) gives one byte at a time, so
// every echo takes as many reads as it has bytes.
func TestPingShortReads(t *testing.T) {
	_, ap := startServer(t, ServerConfig{TCPOnly: true})
	c := dialTCP(t, ap)
	fc := c.Conn.(*fdConn)
	var reads atomic.Int64
	fc.sysread = func(fd int, p []byte) (int, error) {
		reads.Add(1)
		return unix.Read(fd, p[:1])
	}
	p := NewPinger(c, 1024)
	for _, size := range []int{HeaderLen, 64, 1024} {
		reads.Store(0)
		if _, err := p.Ping(size); err != nil {
			t.Fatalf("Ping(%d): %v", size, err)
		}
		if reads.Load() != int64(size) {
			t.Errorf("Ping(%d) took %d reads, want %d", size, reads.Load(), size)
		}
	}
}

// TestServerShortReads runs the server's echo loop on a connection whose
// read(2) gives at most 3 bytes at a time: headers and messages come in
// pieces, which takes the request-deadline path every time.
func TestServerShortReads(t *testing.T) {
	s := NewServer(ServerConfig{TCPOnly: true})
	c, peer := socketPair(t)
	c.sysread = func(fd int, p []byte) (int, error) { return unix.Read(fd, p[:min(3, len(p))]) }
	var ss session
	served := make(chan error, 1)
	go func() { _, err := s.handle(c, &ss); served <- err }()
	msg := make([]byte, 100)
	for i := range 5 {
		putHeader(msg, len(msg), false)
		msg[50] = byte(i)
		if _, err := unix.Write(peer, msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		for n := 0; n < len(got); {
			m, err := unix.Read(peer, got[n:])
			if m <= 0 || err != nil {
				t.Fatalf("echo %d: read %d, %v", i, m, err)
			}
			n += m
		}
		if string(got) != string(msg) {
			t.Fatalf("echo %d differs", i)
		}
	}
	unix.Shutdown(peer, unix.SHUT_WR)
	if err := <-served; err != nil {
		t.Errorf("handle: %v", err)
	}
	if ss.done.Load() != 5 {
		t.Errorf("%d requests counted, want 5", ss.done.Load())
	}
}

// forceProcs sets GOMAXPROCS to n for the test (skipping it when the
// environment fixes GOMAXPROCS: then smcping leaves it alone).
func forceProcs(t *testing.T, n int) {
	t.Helper()
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment: smcping does not change it")
	}
	old := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// TestClientParallelProcs: -P 4 from one P (as when pinned to one CPU).
// Each connection gets a P to wait in its read with and one is spare,
// and all four are measured.
func TestClientParallelProcs(t *testing.T) {
	o := loopbackOptions(t, ServerConfig{TCPOnly: true})
	forceProcs(t, 1)
	o.Parallel, o.Sizes = 4, []int{64}
	r := runJSON(t, o)
	if len(r.Results) != 1 || r.Results[0].RTT.N != 4*o.Count {
		t.Errorf("results: %+v", r.Results)
	}
	if got := runtime.GOMAXPROCS(0); got < 5 {
		t.Errorf("GOMAXPROCS = %d after a run with -P 4, want >= 5", got)
	}
}

// TestClientParallelInterrupted: -P 4 connections blocked in reads on a
// server that never answers, from one P; cancelling (Ctrl-C) ends them all.
func TestClientParallelInterrupted(t *testing.T) {
	forceProcs(t, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pinged := make(chan struct{}, 4)
	var conns sync.WaitGroup
	defer conns.Wait()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer c.Close()
				b := make([]byte, 64)
				if _, err := io.ReadFull(c, b); err == nil {
					pinged <- struct{}{} // the client now waits for the echo
				}
				io.Copy(io.Discard, c)
			})
		}
	}()
	ap := netipAddrPort(t, ln.Addr())
	o := Options{Host: "127.0.0.1", Port: ap.Port(), Proto: ProtoTCP, Count: 10, Sizes: []int{64}, Parallel: 4,
		Warmup: 1, Round: 10, Output: "text", Timeout: 5 * time.Second, MaxSamples: 10}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- runClient(ctx, o, io.Discard, fakeInspector{}) }()
	for range 4 {
		<-pinged
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("client did not stop after cancel")
	}
}

// TestServerSlowClientsBesideGoodOnes: from one P, slow clients wait in
// every state a session can (nothing sent, half a header, a request not
// finished) while good clients ping on their own connections; every good
// ping is answered, and the server has a P for each session and a spare.
func TestServerSlowClientsBesideGoodOnes(t *testing.T) {
	forceProcs(t, 1)
	_, ap := startServer(t, ServerConfig{TCPOnly: true, MaxConns: 16, IdleTimeout: time.Hour, RequestTimeout: time.Hour, ShedAfter: time.Hour})
	var slow []*Conn
	partial := make([]byte, HeaderLen+3)
	putHeader(partial, 1000, false)
	for _, b := range [][]byte{nil, {0, 0}, partial} {
		c := dialTCP(t, ap)
		if len(b) > 0 {
			if _, err := c.Write(b); err != nil {
				t.Fatal(err)
			}
		}
		slow = append(slow, c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		c := dialTCP(t, ap)
		wg.Go(func() {
			p := NewPinger(c, 1024)
			for range 300 {
				if _, err := p.Ping(1024); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("good client beside slow ones: %v", err)
	}
	if got := runtime.GOMAXPROCS(0); got < 8 {
		t.Errorf("GOMAXPROCS = %d with 6 sessions, want >= 8 (the next power of two above 6)", got)
	}
	// The slow ones are still connected: served, not starved or shed.
	for i, c := range slow {
		c.SetReadDeadline(time.Now())
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("slow client %d: %v, want its connection still open", i, err)
		}
	}
}

func netipAddrPort(t *testing.T, a net.Addr) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

// TestFDConnReadTick: with a tick, a read that waits goes on through the
// ticks' EAGAINs as one read (the watchdog sees it waiting throughout)
// until data comes; a deadline still ends it as a timeout; the tick off
// puts the socket's own receive timeout back.
func TestFDConnReadTick(t *testing.T) {
	t.Run("ticks are not the end of the wait", func(t *testing.T) {
		c, peer := socketPair(t)
		if err := c.setTick(time.Millisecond); err != nil {
			t.Fatal(err)
		}
		ticks := 0
		c.sysread = func(fd int, p []byte) (int, error) {
			n, err := unix.Read(fd, p)
			if err == unix.EAGAIN {
				// The first EAGAINs are the ticks; then the peer writes.
				if ticks++; ticks == 3 {
					unix.Write(peer, []byte("x"))
				}
				if r := c.reading.Load(); r%2 != 1 {
					t.Errorf("reading = %d between ticks: the watchdog would not see the read waiting", r)
				}
			}
			return n, err
		}
		n, err := c.Read(make([]byte, 4))
		if n != 1 || err != nil || ticks < 3 {
			t.Errorf("Read = %d, %v after %d ticks; want 1, nil after at least 3", n, err, ticks)
		}
		if r := c.reading.Load(); r%2 != 0 {
			t.Errorf("reading = %d after Read returned", r)
		}
	})
	t.Run("a wait of tickMax goes on without the tick", func(t *testing.T) {
		c, peer := socketPair(t)
		c.setTick(time.Millisecond)
		steps := make([]step, tickMax/time.Millisecond)
		for i := range steps {
			steps[i] = step{err: unix.EAGAIN}
		}
		fakeRead(c, steps...)
		unix.Write(peer, []byte("x"))
		if n, err := c.Read(make([]byte, 4)); n != 1 || err != nil {
			t.Errorf("Read = %d, %v; want 1, nil", n, err)
		}
		tv, err := unix.GetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO)
		if c.tick != 0 || err != nil || tv.Sec != 0 || tv.Usec != 0 {
			t.Errorf("after a wait of %v: tick %v, SO_RCVTIMEO %v (%v); want none", tickMax, c.tick, tv, err)
		}
	})
	t.Run("a deadline ends the wait", func(t *testing.T) {
		c, _ := socketPair(t)
		c.setTick(time.Millisecond)
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read: %v, want os.ErrDeadlineExceeded", err)
		}
		// Cleared, the deadline gives the socket its tick back (which
		// the kernel keeps in jiffies: up to 10 ms more at HZ=100).
		c.SetReadDeadline(time.Time{})
		tv, err := unix.GetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO)
		if d := time.Duration(tv.Nano()); err != nil || d < time.Millisecond || d > 11*time.Millisecond {
			t.Errorf("SO_RCVTIMEO after the deadline: %v, %v; want the tick, 1ms rounded up to jiffies", d, err)
		}
	})
	t.Run("the watchdog ends a wait across ticks", func(t *testing.T) {
		c, _ := socketPair(t)
		c.setTick(time.Millisecond)
		c.watchIdle(time.Hour)
		t0 := time.Now()
		errc := make(chan error, 1)
		go func() { _, err := c.Read(make([]byte, 1)); errc <- err }()
		waitReading(t, c)
		c.watch(t0)
		if !c.watch(t0.Add(time.Hour)) {
			t.Fatal("did not end a read waiting the idle limit across ticks")
		}
		if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read: %v, want os.ErrDeadlineExceeded", err)
		}
	})
	t.Run("off", func(t *testing.T) {
		c, _ := socketPair(t)
		c.setTick(time.Millisecond)
		c.setTick(0)
		tv, err := unix.GetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO)
		if err != nil || tv.Sec != 0 || tv.Usec != 0 {
			t.Errorf("SO_RCVTIMEO with the tick off: %v, %v; want none", tv, err)
		}
	})
}
