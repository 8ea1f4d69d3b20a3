//go:build linux

package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"

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
	// Inode of the socket, the key SMC sock_diag reports (smc_diag_msg.diag_inode).
	Inode uint64
}

// Dial opens a connection of kind p to ap. The connect is non-blocking so
// that ctx and timeout bound it even when the peer never answers.
func Dial(ctx context.Context, p Proto, ap netip.AddrPort, timeout time.Duration) (*Conn, error) {
	fd, err := openSocket(p, ap)
	if err != nil {
		return nil, err
	}
	opErr := func(err error) error {
		return &net.OpError{Op: "dial", Net: p.String(), Addr: net.TCPAddrFromAddrPort(ap), Err: err}
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
	return wrapConn(fd, p)
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

// wrapConn hands fd to the Go runtime poller. net.FileConn works for AF_SMC
// because getsockname on an SMC socket answers with the clcsock's AF_INET[6]
// address.
func wrapConn(fd int, p Proto) (*Conn, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("fstat", err)
	}
	f := os.NewFile(uintptr(fd), p.String())
	c, err := net.FileConn(f)
	f.Close() // FileConn holds its own dup
	if err != nil {
		return nil, fmt.Errorf("wrap %s socket: %w", p, err)
	}
	return &Conn{Conn: c, Proto: p, Inode: st.Ino}, nil
}

// Listen opens a listening socket of kind p on ap.
func Listen(p Proto, ap netip.AddrPort, backlog int) (net.Listener, error) {
	fd, err := openSocket(p, ap)
	if err != nil {
		return nil, err
	}
	fail := func(op string, err error) (net.Listener, error) {
		unix.Close(fd)
		return nil, &net.OpError{Op: "listen", Net: p.String(), Addr: net.TCPAddrFromAddrPort(ap), Err: os.NewSyscallError(op, err)}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("setsockopt", err)
	}
	if err := unix.Bind(fd, sockaddr(ap, clcDomain(p, ap))); err != nil {
		return fail("bind", err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		return fail("listen", err)
	}
	f := os.NewFile(uintptr(fd), p.String())
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("wrap %s listener: %w", p, err)
	}
	return ln, nil
}

// socketInode returns the inode of a connection's socket, or 0.
func socketInode(c net.Conn) uint64 {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	var ino uint64
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) == nil {
			ino = st.Ino
		}
	})
	return ino
}
