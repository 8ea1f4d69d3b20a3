//go:build linux

package probe

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"
)

// startServer runs a Server on 127.0.0.1 with kernel-chosen ports and
// returns it with its main address; it stops when the test ends.
func startServer(t *testing.T, cfg ServerConfig) (*Server, netip.AddrPort) {
	t.Helper()
	cfg.Addr = netip.MustParseAddr("127.0.0.1")
	s := NewServer(cfg)
	if err := s.Listen(); err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, s.Addrs()[0]
}

func dialTCP(t *testing.T, ap netip.AddrPort) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), ProtoTCP, ap, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %v: %v", ap, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// serveOne accepts one TCP connection on 127.0.0.1 and hands it to handle,
// which owns it; a peer that is not an smcping server. It returns the
// address to dial; the listener closes when the test ends.
func serveOne(t *testing.T, handle func(c net.Conn)) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		handle(c)
	}()
	return ln.Addr().(*net.TCPAddr).AddrPort()
}

var _ net.Conn = (*Conn)(nil)
