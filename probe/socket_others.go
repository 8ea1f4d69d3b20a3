//go:build !linux

package probe

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"time"
)

// Conn is an open probe connection plus what identifies it to sock_diag.
type Conn struct {
	net.Conn
	Proto  Proto
	Inode  uint64
	Cookie uint64
}

// ID returns what finds the connection in SMC sock_diag.
func (c *Conn) ID() SocketID { return SocketID{Inode: c.Inode, Cookie: c.Cookie} }

func errUnimplemented() error {
	return fmt.Errorf("probe: SMC sockets not implemented on %s/%s", runtime.GOOS, runtime.GOARCH)
}

// Dial is only implemented on Linux.
func Dial(ctx context.Context, p Proto, ap netip.AddrPort, timeout time.Duration) (*Conn, error) {
	return nil, errUnimplemented()
}

// Listen is only implemented on Linux.
func Listen(p Proto, ap netip.AddrPort, backlog int) (net.Listener, error) {
	return nil, errUnimplemented()
}

func listen(p Proto, ap netip.AddrPort, backlog int, idle time.Duration) (net.Listener, error) {
	return nil, errUnimplemented()
}

func accept(ln net.Listener, p Proto) (net.Conn, error) { return ln.Accept() }

func interrupt(c net.Conn) { c.Close() }

func readTick(net.Conn, time.Duration) {}

func refuse(c net.Conn, notice []byte) {
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(notice)
	c.Close()
}

func limitConn(c net.Conn, idle, write time.Duration) error {
	return c.SetDeadline(time.Now().Add(idle))
}

func peekConn(c net.Conn, b []byte) (n, queued int, ok bool) { return 0, 0, false }

func socketID(c net.Conn) SocketID { return SocketID{} }
