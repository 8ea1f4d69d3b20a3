package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ServerConfig bounds what one smcping server accepts.
type ServerConfig struct {
	// Addr is the listen address; the zero Addr means 0.0.0.0.
	Addr netip.Addr
	// Port carries SMC (AF_SMC), or plain TCP when TCPOnly is set.
	Port uint16
	// TCPPort carries the plain TCP baseline; 0 disables it.
	TCPPort uint16
	// TCPOnly makes the server a plain TCP peer, not SMC-capable at all, so
	// SMC clients fall back with PEERNOSMC (lab scenario fallback-nosmc).
	TCPOnly bool
	// SMCProto is how the SMC listener is opened (ProtoSMC or ProtoIPPROTO).
	SMCProto Proto
	// MaxMessage is the largest message accepted; larger ones close the connection.
	MaxMessage int
	// MaxConns is the number of connections served at once. At the limit a
	// new connection takes the place of one that has completed no request
	// within ShedAfter (the order is in Server.victim); when every
	// connection has, the new one is refused.
	MaxConns int
	// IdleTimeout closes a connection that sends nothing between requests
	// (or takes nothing of a reply) for this long.
	IdleTimeout time.Duration
	// RequestTimeout bounds each request as a whole, from its first byte
	// to the last byte of the reply, however steadily its bytes trickle
	// in: a client sending a byte before each idle timeout cannot hold a
	// connection with it (Slowloris).
	RequestTimeout time.Duration
	// ShedAfter is how long a connection may go without completing a
	// request and still keep its slot against a new one at MaxConns: busy
	// clients keep theirs, connections that only hold a slot give it up.
	// It is also how long a new connection is given for its first request
	// before it counts as slow, unless it starts one and does not finish
	// it: that counts as slow at once.
	ShedAfter time.Duration
	// Log receives one line per connection; nil discards.
	Log *slog.Logger
	// Inspector, when set, logs the kernel's mode of each accepted SMC connection.
	Inspector Inspector
}

// Server defaults, also the flag defaults of smcping -s.
const (
	DefaultPort           = 5000
	DefaultMaxMessage     = 1 << 20
	DefaultMaxConns       = 64
	DefaultIdleTimeout    = 60 * time.Second
	DefaultRequestTimeout = 10 * time.Second
	DefaultShedAfter      = time.Second
)

// Server is an echo server speaking the smcping protocol (see package doc).
type Server struct {
	cfg ServerConfig
	lns []net.Listener
	wg  sync.WaitGroup
	// mu guards sessions, the connections being served (at most
	// MaxConns), and perAddr, how many of them each client address holds.
	mu       sync.Mutex
	sessions map[*session]struct{}
	perAddr  map[netip.Addr]int
}

// session is one connection being served. Its handler shares two things
// with the accept loop: done, its completed requests (an atomic add per
// request, the only per-request cost), and partial, whether a request is
// under way that the first read did not bring whole (set and cleared only
// on that slow path, which reads the clock and sets a deadline anyway).
// seenDone and seenAt are when the server last saw done move (at first,
// the accept), under Server.mu: that is how it tells a busy connection
// from one that only holds its slot.
type session struct {
	c        net.Conn
	addr     netip.Addr
	done     atomic.Uint64
	partial  atomic.Bool
	seenDone uint64
	seenAt   time.Time
}

// NewServer fills defaults into cfg; call Listen, then Serve.
func NewServer(cfg ServerConfig) *Server {
	if !cfg.Addr.IsValid() {
		cfg.Addr = netip.IPv4Unspecified()
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	cfg.MaxMessage = min(cfg.MaxMessage, MaxMessage)
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.ShedAfter <= 0 {
		cfg.ShedAfter = DefaultShedAfter
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg,
		sessions: make(map[*session]struct{}, cfg.MaxConns), perAddr: make(map[netip.Addr]int)}
}

// Listen opens the listeners, so that a missing AF_SMC or a busy port is
// reported before anything is served.
func (s *Server) Listen() error {
	main := s.cfg.SMCProto
	if s.cfg.TCPOnly {
		main = ProtoTCP
	}
	ln, err := listen(main, netip.AddrPortFrom(s.cfg.Addr, s.cfg.Port), 128, s.cfg.IdleTimeout)
	if err != nil {
		return err
	}
	s.lns = append(s.lns, ln)
	if s.cfg.TCPPort != 0 {
		ln, err := listen(ProtoTCP, netip.AddrPortFrom(s.cfg.Addr, s.cfg.TCPPort), 128, s.cfg.IdleTimeout)
		if err != nil {
			s.Close()
			return fmt.Errorf("TCP baseline listener: %w", err)
		}
		s.lns = append(s.lns, ln)
	}
	return nil
}

// Addrs returns the listening addresses: the main one first, then the TCP baseline.
func (s *Server) Addrs() []netip.AddrPort {
	out := make([]netip.AddrPort, 0, len(s.lns))
	for _, ln := range s.lns {
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			out = append(out, a.AddrPort())
		}
	}
	return out
}

// Close closes the listeners; Serve returns once open connections end.
func (s *Server) Close() {
	for _, ln := range s.lns {
		ln.Close()
	}
}

// Serve accepts on every listener until ctx ends, then closes the
// listeners and waits for the connections it serves.
func (s *Server) Serve(ctx context.Context) error {
	if len(s.lns) == 0 {
		return errors.New("serve: no listener (call Listen first)")
	}
	// The first connection finds its spare P (reserveProcs) in place;
	// admit adds more as sessions come.
	serverProcs(1, s.cfg.MaxConns)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(s.lns))
	for i, ln := range s.lns {
		p := ProtoTCP
		if i == 0 && !s.cfg.TCPOnly {
			p = s.cfg.SMCProto
		}
		go func() { errc <- s.acceptLoop(ctx, ln, p) }()
	}
	var err error
	loops := len(s.lns)
	select {
	case <-ctx.Done():
	case err = <-errc:
		loops--
	}
	// An accept loop that failed ends the server: its open connections
	// are interrupted as on a stop, not waited for.
	cancel()
	s.Close()
	// Every accept loop must have returned before the wait: a loop still
	// running may Add a connection it accepted just before the close, and
	// an Add racing a Wait on an idle group is a misuse sync panics on.
	for ; loops > 0; loops-- {
		if e := <-errc; err == nil {
			err = e
		}
	}
	s.wg.Wait()
	return err
}

func (s *Server) acceptLoop(ctx context.Context, ln net.Listener, p Proto) error {
	var wait time.Duration // the pause after a failed accept, while the failures last
	for {
		c, err := accept(ln, p)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			if !acceptRetry(err) {
				return fmt.Errorf("accept on %v: %w", ln.Addr(), err)
			}
			// Out of descriptors or memory for a moment (a burst of
			// clients at the process's limit): the listener is fine,
			// and the connections that end free what the next accept
			// needs. The pending connection waits in the backlog.
			if wait == 0 {
				s.cfg.Log.Warn("accept failed, retrying while it fails", "listen", ln.Addr().String(), "err", err)
			}
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
			continue
		}
		if wait != 0 {
			s.cfg.Log.Info("accepting again", "listen", ln.Addr().String())
			wait = 0
		}
		// Nothing here blocks: a full server sheds or refuses at once, and
		// the connection's own goroutine does everything else.
		ss, shed, why := s.admit(c)
		if ss == nil {
			s.cfg.Log.Warn("connection limit reached, all connections busy: refusing the new one", "remote", c.RemoteAddr().String(), "max_conns", s.cfg.MaxConns)
			var b [noticeLen]byte
			refuse(c, putNotice(b[:0], NoticeBusy, uint32(min(s.cfg.MaxConns, math.MaxUint32))))
			continue
		}
		if shed != nil {
			s.cfg.Log.Warn("connection limit reached: closing one that completed no request lately for the new one",
				"shed", shed.c.RemoteAddr().String(), "shed_as", why, "remote", c.RemoteAddr().String(), "max_conns", s.cfg.MaxConns)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.leave(ss)
			stop := context.AfterFunc(ctx, func() { interrupt(c) })
			defer stop()
			s.logAccept(c, p)
			n, err := s.handle(c, ss)
			c.Close()
			if err != nil && ctx.Err() == nil {
				s.cfg.Log.Warn("connection ended", "remote", c.RemoteAddr().String(), "proto", p.String(), "messages", n, "err", err)
				return
			}
			s.cfg.Log.Info("connection closed", "remote", c.RemoteAddr().String(), "proto", p.String(), "messages", n)
		}()
	}
}

// admit takes c into the sessions. At MaxConns it sheds the victim (its
// handler is woken and closes it; it no longer counts) and returns it with
// why it was chosen; with none, it returns a nil session: c is to be
// refused.
func (s *Server) admit(c net.Conn) (ss, shed *session, why string) {
	addr := remoteAddr(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if len(s.sessions) >= s.cfg.MaxConns {
		var k shedClass
		if shed, k = s.victim(now, addr); shed == nil {
			return nil, nil, ""
		}
		why = k.String()
		s.forget(shed)
		interrupt(shed.c)
	}
	ss = &session{c: c, addr: addr, seenAt: now}
	s.sessions[ss] = struct{}{}
	s.perAddr[addr]++
	serverProcs(len(s.sessions), s.cfg.MaxConns)
	return ss, shed, why
}

// shedClass is how a full server ranks a connection as a victim for a new
// one, from never to first.
type shedClass int8

const (
	// keep: it completed a request within ShedAfter.
	keep shedClass = iota
	// fresh: accepted within ShedAfter, nothing sent yet that the server
	// has seen; maybe a good client about to send its first request.
	fresh
	// idle: it completed requests, none within ShedAfter, and has none
	// under way (a client pinging at long intervals, or done).
	idle
	// slow: a request started and not finished, or none completed within
	// ShedAfter of the accept (Slowloris, or a client that only connects).
	slow
)

func (k shedClass) String() string {
	return [...]string{"busy", "new", "idle", "slow"}[k]
}

// class ranks x at now; it also moves x's record of progress (under mu).
func (s *Server) class(x *session, now time.Time) shedClass {
	d := x.done.Load()
	if d != x.seenDone {
		x.seenDone, x.seenAt = d, now
	}
	stale := now.Sub(x.seenAt) >= s.cfg.ShedAfter
	switch {
	case d > 0 && !stale:
		return keep
	case x.partial.Load() || stale && d == 0:
		return slow
	case stale:
		return idle
	}
	return s.unread(x)
}

// unread ranks a new connection that its handler has seen nothing of by
// what its socket holds, for the handler may simply not have run yet (a
// busy machine, a burst of reconnecting clients): a whole request waiting
// is as good as served, part of one is slow, nothing is fresh. Two system
// calls, paid only at MaxConns, for connections that have completed none.
func (s *Server) unread(x *session) shedClass {
	var hdr [HeaderLen]byte
	n, queued, ok := peekConn(x.c, hdr[:])
	switch {
	case !ok || n == 0:
		return fresh
	case n < HeaderLen:
		return slow
	}
	if size, _ := parseHeader(hdr[:]); size < HeaderLen || size > s.cfg.MaxMessage || queued < size {
		return slow
	}
	return keep
}

// victim chooses the session a new connection from addr takes the place
// of at MaxConns, or nil when every session is busy (class keep). A slow
// one goes first, whatever its address, so that a good client's
// connection, new or idle, is never shed while a slow one is held. Among
// those of the same rank, one of an address holding more than its share
// of the table (MaxConns over the number of addresses, the newcomer's
// included) goes first; then idle before new; then the one that has gone
// longest without completing a request (since its accept, if it never
// did). Called under mu; a full scan, but only when the table is full.
func (s *Server) victim(now time.Time, addr netip.Addr) (*session, shedClass) {
	addrs := len(s.perAddr)
	if s.perAddr[addr] == 0 {
		addrs++
	}
	share := (s.cfg.MaxConns + addrs - 1) / addrs
	var (
		best     *session
		bestK    shedClass
		bestOver bool
	)
	for x := range s.sessions {
		k := s.class(x, now)
		if k == keep {
			continue
		}
		over := s.perAddr[x.addr] > share
		if best == nil || worse(k, over, x.seenAt, bestK, bestOver, best.seenAt) {
			best, bestK, bestOver = x, k, over
		}
	}
	return best, bestK
}

// worse says whether a connection of class k, of an address over its
// share or not, without a completed request since at, is shed before one
// of class bk, bover, bat (victim's order).
func worse(k shedClass, over bool, at time.Time, bk shedClass, bover bool, bat time.Time) bool {
	if (k == slow) != (bk == slow) {
		return k == slow
	}
	if over != bover {
		return over
	}
	if k != bk {
		return k > bk
	}
	return at.Before(bat)
}

// remoteAddr is c's client address, by which the server counts shares;
// an IPv4-mapped IPv6 address counts as the IPv4 one.
func remoteAddr(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// forget takes ss out of the sessions if it is still there (under mu).
func (s *Server) forget(ss *session) {
	if _, ok := s.sessions[ss]; !ok {
		return
	}
	delete(s.sessions, ss)
	if s.perAddr[ss.addr]--; s.perAddr[ss.addr] <= 0 {
		delete(s.perAddr, ss.addr)
	}
}

// notify sends the client a notice before its connection is closed, as
// far as its socket takes it at once: a reader that does not read is not
// waited for.
func (s *Server) notify(c net.Conn, code, value uint32) {
	var b [noticeLen]byte
	c.SetWriteDeadline(time.Now())
	c.Write(putNotice(b[:0], code, value))
}

// leave ends a session (one that was shed has left already).
func (s *Server) leave(ss *session) {
	s.mu.Lock()
	s.forget(ss)
	s.mu.Unlock()
}

func (s *Server) logAccept(c net.Conn, p Proto) {
	args := []any{"remote", c.RemoteAddr().String(), "local", c.LocalAddr().String(), "proto", p.String()}
	if p.IsSMC() && s.cfg.Inspector != nil {
		pr := Prove(s.cfg.Inspector, socketID(c))
		args = append(args, "mode", pr.String())
		if pr.Token != 0 {
			args = append(args, "token", fmt.Sprintf("%#x", pr.Token))
		}
	}
	s.cfg.Log.Info("connection accepted", args...)
}

// handle echoes messages until EOF, counting the completed ones in done.
// It reads as much as the socket has, so a ping costs one read and one
// write (sockperf's server does the same), and allocates only when a
// message is larger than any before on this connection.
//
// Between requests the idle timeout bounds the wait. A request that the
// first read does not bring whole gets a deadline, RequestTimeout from
// then, for the rest of it and for its reply; a reply that does not fit the
// socket at once has RequestTimeout in any case. So the common ping costs
// no system call for all this, and one clock read, for the yielder.
func (s *Server) handle(c net.Conn, ss *session) (int, error) {
	buf := make([]byte, min(64<<10, s.cfg.MaxMessage))
	if err := limitConn(c, s.cfg.IdleTimeout, s.cfg.RequestTimeout); err != nil {
		return 0, err
	}
	have := 0 // bytes of buf holding data not yet handled
	var deadline time.Time
	var y yielder
	base := time.Now()
	var last time.Duration // when the last request was answered, from base
	fill := func(need int) error {
		for have < need {
			if have > 0 && deadline.IsZero() {
				// A request under way: the rest of it, and its reply,
				// within RequestTimeout, however the bytes trickle; and
				// until it completes, the connection is slow to admit.
				ss.partial.Store(true)
				deadline = time.Now().Add(s.cfg.RequestTimeout)
				if err := c.SetDeadline(deadline); err != nil {
					return err
				}
			}
			n, err := c.Read(buf[have:])
			have += n
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) && !deadline.IsZero() {
					s.notify(c, NoticeTimeout, uint32(min(s.cfg.RequestTimeout.Milliseconds(), math.MaxUint32)))
					return fmt.Errorf("%w: request not complete within %v", err, s.cfg.RequestTimeout)
				}
				return err
			}
		}
		return nil
	}
	for n := 0; ; n++ {
		if err := fill(HeaderLen); err != nil {
			if errors.Is(err, io.EOF) && have == 0 {
				return n, nil
			}
			return n, fmt.Errorf("read header: %w", err)
		}
		size, noReply := parseHeader(buf)
		if err := checkSize(size, s.cfg.MaxMessage); err != nil {
			if size > s.cfg.MaxMessage { // a client of ours: it says why to its user
				s.notify(c, NoticeTooLarge, uint32(s.cfg.MaxMessage))
			}
			return n, err
		}
		if size > len(buf) {
			buf = append(buf, make([]byte, size-len(buf))...)
		}
		if err := fill(size); err != nil {
			return n, fmt.Errorf("read %d-byte message: %w", size, err)
		}
		// Counted before the reply leaves: the client may connect again
		// the moment it has the reply, and a full server must then see
		// this connection as serving, not as a new one to shed.
		ss.done.Add(1)
		if !noReply {
			if _, err := c.Write(buf[:size]); err != nil {
				return n, fmt.Errorf("reply: %w", err)
			}
		}
		if !deadline.IsZero() {
			ss.partial.Store(false)
			deadline = time.Time{}
			if err := c.SetDeadline(deadline); err != nil {
				return n, err
			}
		}
		have = copy(buf, buf[size:have])
		// One monotonic clock read per request (tens of ns): the
		// goroutine yields when yieldEvery has passed, and the wait
		// for this request sets the read tick (yield.go).
		now := time.Since(base)
		y.maybe(now)
		readTick(c, now-last)
		last = now
	}
}

// acceptRetry reports whether a failed accept may succeed later on the
// same listener: the process or system ran out of descriptors (EMFILE,
// ENFILE; accept4 and the dup of the accepted socket both take one) or
// of memory for a socket (ENOBUFS, ENOMEM), as accept(2) documents.
func acceptRetry(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}
