//go:build linux

package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	smcprotoSMC  = 0 // SMCPROTO_SMC: AF_SMC over an IPv4 clcsock
	smcprotoSMC6 = 1 // SMCPROTO_SMC6: AF_SMC over an IPv6 clcsock
)

// socketArgs maps a Proto and the address family of ap to socket(2) arguments.
func socketArgs(p Proto, ap netip.AddrPort) (domain, proto int) {
	v4 := ap.Addr().Unmap().Is4()
	inet := unix.AF_INET6
	if v4 {
		inet = unix.AF_INET
	}
	switch p {
	case ProtoSMC:
		if v4 {
			return unix.AF_SMC, smcprotoSMC
		}
		return unix.AF_SMC, smcprotoSMC6
	case ProtoIPPROTO:
		return inet, unix.IPPROTO_SMC
	default:
		return inet, 0
	}
}

func openSocket(p Proto, ap netip.AddrPort) (int, error) {
	domain, proto := socketArgs(p, ap)
	fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, socketError(p, err)
	}
	return fd, nil
}

// socketError names the kernel piece that is missing when socket(2) fails.
func socketError(p Proto, err error) error {
	switch {
	case p == ProtoSMC && errors.Is(err, unix.EAFNOSUPPORT):
		return &UnsupportedError{Feature: "AF_SMC sockets", Needs: "the smc kernel module (modprobe smc; CONFIG_SMC)", Err: err}
	case p == ProtoIPPROTO && (errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.EAFNOSUPPORT)):
		return &UnsupportedError{Feature: "IPPROTO_SMC sockets", Needs: "Linux >= 6.11 with the smc kernel module (modprobe smc; CONFIG_SMC)", Err: err}
	}
	return os.NewSyscallError("socket", err)
}

func sockaddr(ap netip.AddrPort, domain int) unix.Sockaddr {
	a := ap.Addr().Unmap()
	if a.Is4() && domain != unix.AF_INET6 {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: a.As16()}
}

func clcDomain(p Proto, ap netip.AddrPort) int {
	domain, proto := socketArgs(p, ap)
	if domain == unix.AF_SMC {
		if proto == smcprotoSMC6 {
			return unix.AF_INET6
		}
		return unix.AF_INET
	}
	return domain
}

// Conn is an open probe connection plus what identifies it to sock_diag.
type Conn struct {
	net.Conn
	Proto Proto
	// Inode and Cookie of the socket, the keys SMC sock_diag reports
	// (smc_diag_msg.diag_inode, id.idiag_cookie); 0 when unknown.
	Inode  uint64
	Cookie uint64
}

// ID returns what finds the connection in SMC sock_diag.
func (c *Conn) ID() SocketID { return SocketID{Inode: c.Inode, Cookie: c.Cookie} }

// ioTimeout bounds every blocked read or write of a client connection, so
// that a peer that vanishes without a FIN or RST cannot hang smcping.
const ioTimeout = 60 * time.Second

// Dial opens a connection of kind p to ap. The connect is non-blocking so
// that ctx and timeout bound it even when the peer never answers; the
// connection itself is then switched to blocking I/O (see fdConn).
func Dial(ctx context.Context, p Proto, ap netip.AddrPort, timeout time.Duration) (*Conn, error) {
	fd, err := openSocket(p, ap)
	if err != nil {
		return nil, err
	}
	opErr := func(err error) error {
		return &net.OpError{Op: "dial", Net: p.String(), Addr: net.TCPAddrFromAddrPort(ap), Err: err}
	}
	// Before connect: an SMC socket that falls back copies its timeouts to
	// the internal TCP socket only at connect (smc_copy_sock_settings_to_clc).
	// Reads are bounded by the connection's watchdog instead (fdConn).
	if err := setSendTimeout(fd, ioTimeout); err != nil {
		unix.Close(fd)
		return nil, opErr(err)
	}
	// As sockperf does by default, and as Go does for its TCP sockets; on an
	// SMC socket it also stops SMC's own autocorking from delaying a ping.
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		unix.Close(fd)
		return nil, opErr(os.NewSyscallError("setsockopt TCP_NODELAY", err))
	}
	err = unix.Connect(fd, sockaddr(ap, clcDomain(p, ap)))
	if err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return nil, opErr(os.NewSyscallError("connect", err))
	}
	if err != nil {
		if err := waitConnected(ctx, fd, timeout); err != nil {
			unix.Close(fd)
			return nil, opErr(err)
		}
	}
	c, err := newFDConn(fd, p)
	if err != nil {
		return nil, opErr(err)
	}
	c.watchIdle(ioTimeout)
	return &Conn{Conn: c, Proto: p, Inode: c.ino, Cookie: c.cookie}, nil
}

// waitConnected polls in short slices so that ctx cancellation is noticed.
func waitConnected(ctx context.Context, fd int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("connect: timeout after %v", timeout)
		}
		ms := int(min(left, 100*time.Millisecond)/time.Millisecond) + 1
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(pfd, ms)
		if errors.Is(err, unix.EINTR) || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			return os.NewSyscallError("poll", err)
		}
		soErr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return os.NewSyscallError("getsockopt", err)
		}
		if soErr != 0 {
			return os.NewSyscallError("connect", unix.Errno(soErr))
		}
		return nil
	}
}

// setSendTimeout sets SO_SNDTIMEO, which bounds a write that has to wait
// for room in the socket buffer. (The send that fits, the common one, does
// not wait and so arms no timer: see Write.)
func setSendTimeout(fd int, d time.Duration) error {
	tv := unix.NsecToTimeval(d.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return os.NewSyscallError("setsockopt SO_SNDTIMEO", err)
	}
	return nil
}

// fdConn is a connection on a blocking socket. The measuring thread sleeps
// in read(2) and the kernel wakes it directly, as sockperf's does; through
// the Go netpoller every message would cost an extra epoll wake-up (about
// +50 % RTT on loopback TCP, see BENCH.md). Each fdConn is used by one
// goroutine (reads and writes may be two); others may only call interrupt.
//
// The read is an ordinary system call (entersyscall/exitsyscall), not a
// raw one that would keep the goroutine's P: a raw read waiting on a
// stalled peer would hold up every stop-the-world (a GC) and with it the
// whole process, and could only be woken for one by a receive timeout,
// whose timer costs as much as the system call's bookkeeping saves (both
// measured, BENCH.md). What makes the ordinary call cheap is a spare P
// (reserveProcs).
//
// Time limits come in three kinds. An idle limit bounds each read that
// waits (the client's ioTimeout, the server's idle timeout); a watchdog
// keeps it, not SO_RCVTIMEO: a socket receive timeout makes the kernel arm
// and cancel a timer around every read that sleeps (sk_wait_data), about
// 2 % of a loopback round trip, while the watchdog costs two atomic adds
// per read and a timer tick every eighth of the limit (watch). Writes that
// must wait for room are bounded by SO_SNDTIMEO, which only a blocking
// write pays for. A deadline (SetDeadline and its siblings) is absolute, as
// net.Conn's: each blocked call is bounded by the time left, the socket
// timeout being set to it just before the call, one setsockopt per call
// while the deadline is set; clearing it puts the socket's own timeout
// back. The idle limit does not apply to a read under a deadline.
type fdConn struct {
	fd            int
	ino, cookie   uint64
	net           string
	local, remote net.Addr
	// mu orders interrupt and the watchdog against Close: a descriptor is
	// never shut down once closed, when its number may be another socket's.
	mu     sync.Mutex
	closed atomic.Bool
	// reading counts the idle-bounded reads begun and ended: odd while
	// one waits. expired says that the watchdog ended one, so that it
	// reports a timeout, not the EOF the shutdown brings.
	reading atomic.Uint32
	expired atomic.Bool
	// The watchdog, under mu: the idle limit, its timer, and the value
	// of reading it saw last and since when.
	ridle  time.Duration
	wd     *time.Timer
	wseen  uint32
	wsince time.Time
	// sysread is read(2); tests replace it to feed Read what a socket
	// rarely gives (EINTR, short reads) at a chosen moment.
	sysread func(fd int, p []byte) (int, error)
	// rdl and wdl are the read and write deadlines (zero: none);
	// rbase and wbase the socket's own timeouts, restored when a
	// deadline is cleared; rset and wset say that the socket holds a
	// deadline's time left instead.
	rdl, wdl     time.Time
	rbase, wbase unix.Timeval
	rset, wset   bool
	// wlimit, when set, bounds the blocked part of each Write as a whole,
	// not per system call (writeLimit).
	wlimit time.Duration
	// tick, when set, splits a read that waits without a deadline into
	// system calls of at most tick each (the socket's SO_RCVTIMEO, kept
	// in rbase; rown is the socket's own): see setTick.
	tick time.Duration
	rown unix.Timeval
}

// newFDConn takes ownership of fd (closing it on error) and makes it blocking.
func newFDConn(fd int, p Proto) (*fdConn, error) {
	var st unix.Stat_t
	err := unix.Fstat(fd, &st)
	if err == nil {
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("socket setup", err)
	}
	c := &fdConn{fd: fd, ino: st.Ino, net: p.String(), local: &net.TCPAddr{}, remote: &net.TCPAddr{}, sysread: unix.Read}
	// SO_COOKIE (4.18+) is the sock's cookie, the one smc_diag reports; a
	// kernel without it leaves the inode as the only key.
	if v, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_COOKIE); err == nil {
		c.cookie = v
	}
	// getsockname on an SMC socket answers with the internal TCP socket's
	// address; IPPROTO_SMC sockets are AF_INET[6] anyway.
	if sa, err := unix.Getsockname(fd); err == nil {
		c.local = tcpAddr(sa)
	}
	if sa, err := unix.Getpeername(fd); err == nil {
		c.remote = tcpAddr(sa)
	}
	if tv, err := unix.GetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO); err == nil {
		c.rbase, c.rown = *tv, *tv
	}
	if tv, err := unix.GetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO); err == nil {
		c.wbase = *tv
	}
	return c, nil
}

func tcpAddr(sa unix.Sockaddr) *net.TCPAddr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)))
	case *unix.SockaddrInet6:
		return net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port)))
	}
	return &net.TCPAddr{}
}

func (c *fdConn) opErr(op string, err error) error {
	if c.closed.Load() {
		err = net.ErrClosed
	} else if errors.Is(err, unix.EAGAIN) || c.expired.Load() {
		err = os.ErrDeadlineExceeded // SO_RCVTIMEO / SO_SNDTIMEO or the watchdog's idle limit expired
	} else {
		err = os.NewSyscallError(op, err)
	}
	return &net.OpError{Op: op, Net: c.net, Source: c.local, Addr: c.remote, Err: err}
}

func (c *fdConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	waiting := false // an idle-bounded read begun (reading is odd)
	var ticked time.Duration
	for {
		idle := c.rdl.IsZero()
		if !idle {
			if err := c.arm(unix.SO_RCVTIMEO, c.rdl, &c.rset); err != nil {
				return 0, c.opErr("read", err)
			}
		} else if !waiting {
			c.reading.Add(1)
			waiting = true
		}
		n, err := c.sysread(c.fd, b)
		if idle && err == unix.EAGAIN && c.tick > 0 && !c.expired.Load() && !c.closed.Load() {
			// A tick passed with nothing to read: the same wait goes on
			// in a new system call, after a pass through the scheduler;
			// in one without a tick once it has lasted tickMax.
			if ticked += c.tick; ticked >= tickMax {
				if err := c.setTick(0); err != nil {
					return 0, err
				}
			}
			goyield()
			continue
		}
		if waiting {
			c.reading.Add(1)
			waiting = false
		}
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, c.opErr("read", err)
		case n == 0 && c.expired.Load():
			return 0, c.opErr("read", unix.EAGAIN)
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// setTick splits each read that waits without a deadline into system
// calls of at most d (0: one system call, however long the wait), by the
// socket's receive timeout, which a deadline overrides while it is set.
//
// Why: the Go runtime's sysmon takes the P from a goroutine that has been
// in one system call for 10 ms or more (runtime/proc.go, retake), and
// that resets its back-off: it then wakes every 20 µs for the next 50
// rounds, and the read returns through exitsyscall's slow path. A wait of
// a few milliseconds (SMC-R between TCG guests) is often longer than
// that. A receive timeout makes the kernel arm a timer for every read that
// sleeps, so it is only worth it where waits are long: the callers turn
// it on and off from the waits they see (readTick).
func (c *fdConn) setTick(d time.Duration) error {
	if d == c.tick {
		return nil
	}
	tv := c.rown
	if d > 0 {
		tv = unix.NsecToTimeval(d.Nanoseconds())
	}
	// While a deadline's time left is in the socket, restore puts tv
	// there when the deadline is cleared.
	if !c.rset {
		if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return c.opErr("setsockopt", err)
		}
	}
	c.tick, c.rbase = d, tv
	return nil
}

// watchIdle bounds each read that waits without a deadline to d: a
// watchdog looks every eighth of d whether the same read is still
// waiting, and once it has seen one wait d it shuts the socket down,
// which ends the read (a timeout, os.ErrDeadlineExceeded) and the
// connection. A read first seen up to a look after it began may so wait
// up to an eighth longer than d, more on a loaded machine: fine for
// limits that only catch a peer gone silent.
func (c *fdConn) watchIdle(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wd != nil {
		c.wd.Stop()
		c.wd = nil
	}
	c.ridle, c.wseen, c.wsince = d, c.reading.Load(), time.Time{}
	if d > 0 && !c.closed.Load() {
		c.wd = time.AfterFunc(watchPeriod(d), func() { c.watch(time.Now()) })
	}
}

// watchPeriod is how often the watchdog of an idle limit d looks.
func watchPeriod(d time.Duration) time.Duration {
	return max(d/8, min(d, time.Millisecond))
}

// watch is one look of the watchdog at time now; it returns whether it
// ended a read.
func (c *fdConn) watch(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() || c.wd == nil {
		return false
	}
	r := c.reading.Load()
	switch {
	case r&1 == 0 || r != c.wseen || c.wsince.IsZero():
		// Not waiting, or another read since the last look.
		c.wseen, c.wsince = r, now
	case now.Sub(c.wsince) >= c.ridle:
		c.expired.Store(true)
		unix.Shutdown(c.fd, unix.SHUT_RDWR)
		return true
	}
	c.wd.Reset(watchPeriod(c.ridle))
	return false
}

// Write first tries a send that cannot block, as a raw system call: a
// ping almost always fits the socket buffer, and skipping the scheduler's
// entersyscall/exitsyscall brings smcping's loopback RTT within a few
// percent of sockperf's (BENCH.md). What does not fit goes through an
// ordinary blocking write, which releases the P while it waits.
func (c *fdConn) Write(b []byte) (int, error) {
	n := 0
	if len(b) > 0 {
		r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
			unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
		switch {
		case e == 0:
			n = int(r)
		case e != unix.EAGAIN && e != unix.EINTR:
			return 0, c.opErr("write", e)
		}
	}
	dl := c.wdl
	if c.wlimit > 0 && n < len(b) {
		if lim := time.Now().Add(c.wlimit); dl.IsZero() || lim.Before(dl) {
			dl = lim
		}
	}
	for n < len(b) {
		if !dl.IsZero() {
			if err := c.arm(unix.SO_SNDTIMEO, dl, &c.wset); err != nil {
				return n, c.opErr("write", err)
			}
		}
		m, err := unix.Write(c.fd, b[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, c.opErr("write", err)
		}
		n += m
	}
	return n, nil
}

// Close shuts the socket down and closes it; only the owning goroutine may call it.
func (c *fdConn) Close() error {
	c.mu.Lock()
	if c.closed.Swap(true) {
		c.mu.Unlock()
		return nil
	}
	if c.wd != nil {
		c.wd.Stop()
	}
	c.mu.Unlock()
	unix.Shutdown(c.fd, unix.SHUT_RDWR)
	return os.NewSyscallError("close", unix.Close(c.fd))
}

// interrupt wakes a goroutine blocked in Read or Write (they return EOF or
// EPIPE) without closing the descriptor under its feet.
func (c *fdConn) interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed.Load() {
		unix.Shutdown(c.fd, unix.SHUT_RDWR)
	}
}

// peek copies the start of what c's socket holds unread into b and says
// how much it holds in all, without taking any; ok is false when it cannot
// tell (closed, or the socket would not say).
func (c *fdConn) peek(b []byte) (n, queued int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return 0, 0, false
	}
	n, _, err := unix.Recvfrom(c.fd, b, unix.MSG_PEEK|unix.MSG_DONTWAIT)
	if errors.Is(err, unix.EAGAIN) {
		return 0, 0, true
	}
	if err != nil || n <= 0 {
		return 0, 0, false
	}
	if queued, err = unix.IoctlGetInt(c.fd, unix.SIOCINQ); err != nil {
		return 0, 0, false
	}
	return n, max(n, queued), true
}

func (c *fdConn) LocalAddr() net.Addr  { return c.local }
func (c *fdConn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline and its two siblings set absolute deadlines (see fdConn):
// a deadline costs nothing until a read or write blocks under it; the zero
// time clears it and puts the socket's own timeout back.
func (c *fdConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *fdConn) SetReadDeadline(t time.Time) error {
	c.rdl = t
	return c.restore(t, unix.SO_RCVTIMEO, &c.rbase, &c.rset)
}

func (c *fdConn) SetWriteDeadline(t time.Time) error {
	c.wdl = t
	return c.restore(t, unix.SO_SNDTIMEO, &c.wbase, &c.wset)
}

// restore puts the socket's own timeout base back when a deadline is
// cleared (t zero) after one was armed.
func (c *fdConn) restore(t time.Time, opt int, base *unix.Timeval, set *bool) error {
	if !t.IsZero() || !*set {
		return nil
	}
	*set = false
	if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, opt, base); err != nil {
		return c.opErr("setsockopt", err)
	}
	return nil
}

// arm sets the socket timeout opt to the time left before dl, for the
// blocking call that follows; a passed deadline is os.ErrDeadlineExceeded.
func (c *fdConn) arm(opt int, dl time.Time, set *bool) error {
	d := time.Until(dl)
	if d <= 0 {
		return unix.EAGAIN // what an expired SO_RCVTIMEO returns: opErr's deadline error
	}
	*set = true
	tv := unix.NsecToTimeval(max(d, time.Microsecond).Nanoseconds())
	return unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, opt, &tv)
}

// setIdle bounds each blocked read and write to d while no deadline is
// set: reads by the watchdog, writes by the socket's send timeout.
func (c *fdConn) setIdle(d time.Duration) error {
	tv := unix.NsecToTimeval(d.Nanoseconds())
	if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return c.opErr("setsockopt", err)
	}
	c.wbase, c.wset = tv, false
	c.watchIdle(d)
	return nil
}

// Listen opens a listening socket of kind p on ap.
func Listen(p Proto, ap netip.AddrPort, backlog int) (net.Listener, error) {
	return listen(p, ap, backlog, 0)
}

// listen sets the idle timeout for writes (SO_SNDTIMEO) on the listening
// socket: accepted sockets inherit it, including the internal TCP socket
// of an SMC connection that falls back, which a setsockopt after accept
// would not reach. Reads are bounded by each connection's watchdog
// (limitConn), which ends a wait in whichever socket it happens.
func listen(p Proto, ap netip.AddrPort, backlog int, idle time.Duration) (net.Listener, error) {
	fd, err := openSocket(p, ap)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (net.Listener, error) {
		unix.Close(fd)
		return nil, &net.OpError{Op: "listen", Net: p.String(), Addr: net.TCPAddrFromAddrPort(ap), Err: err}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail(os.NewSyscallError("setsockopt", err))
	}
	if idle > 0 {
		if err := setSendTimeout(fd, idle); err != nil {
			return fail(err)
		}
	}
	if err := unix.Bind(fd, sockaddr(ap, clcDomain(p, ap))); err != nil {
		return fail(os.NewSyscallError("bind", err))
	}
	if err := unix.Listen(fd, backlog); err != nil {
		return fail(os.NewSyscallError("listen", err))
	}
	// The listener stays on the Go poller: accept latency does not matter,
	// and closing it must wake Accept, which shutdown(2) does not do for
	// an SMC listener.
	f := os.NewFile(uintptr(fd), p.String())
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("wrap %s listener: %w", p, err)
	}
	return ln, nil
}

// accept takes the next connection from the Go poller and moves it to a
// blocking descriptor of its own. (A listener's RawConn cannot Read, so
// accept4 cannot be called under the poller directly.)
func accept(ln net.Listener, p Proto) (net.Conn, error) {
	c, err := ln.Accept()
	if err != nil {
		return nil, err
	}
	defer c.Close() // the dup below keeps the socket open
	// accept4 returned the addresses. getpeername on the accepted SMC-R
	// socket failed once in the lab (smc_getname answers ENOTCONN outside
	// SMC_ACTIVE/APPCLOSEWAIT1), which left RemoteAddr nil.
	local, remote := c.LocalAddr(), c.RemoteAddr()
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("accept: %T has no descriptor", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) {
		nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, os.NewSyscallError("dup", derr)
	}
	fc, err := newFDConn(nfd, p)
	if err != nil {
		return nil, err
	}
	if a, ok := local.(*net.TCPAddr); ok && a != nil {
		fc.local = a
	}
	if a, ok := remote.(*net.TCPAddr); ok && a != nil {
		fc.remote = a
	}
	return fc, nil
}

// refuse sends a notice on a connection just accepted and closes it,
// without blocking (the accept loop calls it): the notice goes only if the
// socket takes it at once, which an empty one does. What the client sent
// already is read and dropped first, so that the close is a FIN after the
// notice, not a reset that could overtake it.
func refuse(c net.Conn, notice []byte) {
	fc, ok := c.(*fdConn)
	if !ok {
		c.SetWriteDeadline(time.Now())
		c.Write(notice)
		c.Close()
		return
	}
	unix.Sendto(fc.fd, notice, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, nil)
	unix.Shutdown(fc.fd, unix.SHUT_WR)
	var b [4096]byte
	for range 16 {
		if n, _, err := unix.Recvfrom(fc.fd, b[:], unix.MSG_DONTWAIT); n <= 0 || err != nil {
			break
		}
	}
	fc.Close()
}

// limitConn makes idle bound each blocked read or write of c while no
// deadline is set (the server's idle timeout), and write bound the blocked
// part of each Write as a whole: a reader that takes a reply a byte at a
// time, each within idle, cannot hold it longer than that.
func limitConn(c net.Conn, idle, write time.Duration) error {
	fc, ok := c.(*fdConn)
	if !ok {
		return c.SetDeadline(time.Now().Add(idle))
	}
	fc.wlimit = write
	return fc.setIdle(idle)
}

// interrupt wakes the goroutine serving c; Close is only safe from it.
func interrupt(c net.Conn) {
	if fc, ok := c.(*fdConn); ok {
		fc.interrupt()
		return
	}
	c.Close()
}

// readTick is fdConn.setTick for any connection, from the wait before the
// last message (tickFor); other connections have no tick.
func readTick(c net.Conn, wait time.Duration) {
	if fc, ok := c.(*fdConn); ok {
		if d, change := tickFor(fc.tick, wait); change {
			fc.setTick(d)
		}
	}
}

// peekConn is fdConn.peek for any connection: one the server did not
// open itself cannot tell.
func peekConn(c net.Conn, b []byte) (n, queued int, ok bool) {
	if fc, ok := c.(*fdConn); ok {
		return fc.peek(b)
	}
	return 0, 0, false
}

// socketID returns what finds a connection's socket in SMC sock_diag
// (zero when it is not one of ours).
func socketID(c net.Conn) SocketID {
	if fc, ok := c.(*fdConn); ok {
		return SocketID{Inode: fc.ino, Cookie: fc.cookie}
	}
	return SocketID{}
}
