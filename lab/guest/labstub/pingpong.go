package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

const (
	afSMC       = 43
	smcProtoV4  = 0
	smcProtoV6  = 1
	opPingPong  = 'P'
	opBulk      = 'B'
	bulkChunk   = 64 << 10
	maxPingSize = 1 << 20
)

// fdConn is a blocking socket; AF_SMC has no net.Conn, and ping-pong needs nothing more.
type fdConn int

func (c fdConn) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(c), p)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c fdConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := unix.Write(int(c), p[done:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

// newSocket opens AF_SMC (SMCPROTO_SMC/SMC6 by address family) or, with tcp, a plain socket.
func newSocket(v6, tcp bool) (int, error) {
	switch {
	case tcp && v6:
		return unix.Socket(unix.AF_INET6, unix.SOCK_STREAM, 0)
	case tcp:
		return unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	case v6:
		return unix.Socket(afSMC, unix.SOCK_STREAM, smcProtoV6)
	default:
		return unix.Socket(afSMC, unix.SOCK_STREAM, smcProtoV4)
	}
}

func addrPortOf(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
	}
	return netip.AddrPort{}
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	port := fs.Int("p", 5000, "TCP port")
	tcp := fs.Bool("tcp", false, "plain TCP listener (no SMC)")
	v6 := fs.Bool("6", false, "listen on [::] (accepts IPv4 too)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fd, err := newSocket(*v6, *tcp)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fmt.Errorf("SO_REUSEADDR: %w", err)
	}
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: *port}
	if *v6 {
		sa = &unix.SockaddrInet6{Port: *port}
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fmt.Errorf("bind :%d: %w", *port, err)
	}
	if err := unix.Listen(fd, 64); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	kind := "smc"
	if *tcp {
		kind = "tcp"
	}
	fmt.Printf("SERVER listening kind=%s port=%d\n", kind, *port)
	for {
		nfd, rsa, err := unix.Accept(fd)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ECONNABORTED) {
			continue
		}
		if err != nil {
			return fmt.Errorf("accept: %w", err)
		}
		lsa, _ := unix.Getsockname(nfd)
		local, remote := addrPortOf(lsa), addrPortOf(rsa)
		if !*tcp {
			fmt.Printf("SERVER accept %s\n", describe(local, remote))
		} else {
			fmt.Printf("SERVER accept %s -> %s mode=TCP (plain TCP listener)\n", local, remote)
		}
		go func() {
			defer unix.Close(nfd)
			if err := handle(fdConn(nfd)); err != nil && !errors.Is(err, io.EOF) {
				fmt.Printf("SERVER conn %s error: %v\n", remote, err)
			}
		}()
	}
}

// handle serves one connection: the first byte chooses echo (ping-pong) or sink (bulk).
func handle(c fdConn) error {
	var op [1]byte
	if _, err := io.ReadFull(c, op[:]); err != nil {
		return err
	}
	buf := make([]byte, bulkChunk)
	switch op[0] {
	case opPingPong:
		for {
			n, err := c.Read(buf)
			if err != nil {
				return err
			}
			if _, err := c.Write(buf[:n]); err != nil {
				return err
			}
		}
	case opBulk:
		var hdr [8]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return err
		}
		want := binary.BigEndian.Uint64(hdr[:])
		if _, err := io.CopyN(io.Discard, c, int64(want)); err != nil {
			return fmt.Errorf("bulk after %d bytes: %w", want, err)
		}
		_, err := c.Write(hdr[:])
		return err
	}
	return fmt.Errorf("unknown opcode %#x", op[0])
}

// describe is the kernel's view of one connection, from smc_diag.
func describe(local, remote netip.AddrPort) string {
	socks, err := sockDiag()
	if err != nil {
		return fmt.Sprintf("%s -> %s diag-error=%q", local, remote, err.Error())
	}
	for _, s := range socks {
		if s.src == local && s.dst == remote {
			return s.String()
		}
	}
	return fmt.Sprintf("%s -> %s diag=not-found", local, remote)
}

// intList parses "500" or "300,200,100"; short lists repeat their last value.
func intList(s string, n int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("bad number %q", f)
		}
		out = append(out, v)
	}
	for len(out) < n {
		out = append(out, out[len(out)-1])
	}
	return out, nil
}

type clientConn struct {
	c      fdConn
	fd     int
	local  netip.AddrPort
	remote netip.AddrPort
}

func dial(target netip.AddrPort, tcp bool, op byte) (*clientConn, error) {
	fd, err := newSocket(!target.Addr().Is4(), tcp)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	if err := unix.Connect(fd, sockaddr(target)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("connect %s: %w", target, err)
	}
	lsa, _ := unix.Getsockname(fd)
	cc := &clientConn{c: fdConn(fd), fd: fd, local: addrPortOf(lsa), remote: target}
	if _, err := cc.c.Write([]byte{op}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("opcode: %w", err)
	}
	return cc, nil
}

func client(args []string) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	addr := fs.String("addr", "10.10.0.1:5000", "server address")
	ns := fs.String("n", "500", "round trips per connection (comma list per connection)")
	ms := fs.String("m", "64", "message size per connection (comma list)")
	conns := fs.Int("P", 1, "concurrent connections (one link group)")
	bulk := fs.Int64("bulk", 0, "after ping-pong, send this many bytes one way on a new connection")
	pauseAfter := fs.Int("pause-after", 0, "pause every connection after this many round trips")
	pauseFile := fs.String("pause-file", "/tmp/pause", "PAUSED is announced as FILE.ready, resumes on FILE.go")
	tcp := fs.Bool("tcp", false, "plain TCP instead of AF_SMC")
	limit := fs.Duration("timeout", 120*time.Second, "give up after")
	if err := fs.Parse(args); err != nil {
		return err
	}
	target, err := netip.ParseAddrPort(*addr)
	if err != nil {
		return fmt.Errorf("-addr: %w", err)
	}
	nl, err := intList(*ns, *conns)
	if err != nil {
		return err
	}
	ml, err := intList(*ms, *conns)
	if err != nil {
		return err
	}
	time.AfterFunc(*limit, func() {
		fmt.Println("CLIENT TIMEOUT")
		os.Exit(3)
	})
	// Connect all first so that they share one link group and are all visible together.
	cs := make([]*clientConn, *conns)
	for i := range cs {
		if cs[i], err = dial(target, *tcp, opPingPong); err != nil {
			return fmt.Errorf("conn%d: %w", i, err)
		}
		fmt.Printf("CLIENT conn%d %s\n", i, describe(cs[i].local, cs[i].remote))
	}
	var wg sync.WaitGroup
	var pauseWG sync.WaitGroup
	errs := make([]error, len(cs))
	rtts := make([][]time.Duration, len(cs))
	pauseWG.Add(len(cs))
	for i, cc := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rtts[i], errs[i] = pingPong(cc, nl[i], ml[i], *pauseAfter, pauseWG.Done, *pauseFile)
		}()
	}
	if *pauseAfter > 0 {
		pauseWG.Wait()
		fmt.Println("CLIENT PAUSED")
		if err := os.WriteFile(*pauseFile+".ready", nil, 0o644); err != nil {
			return err
		}
	}
	wg.Wait()
	failed := 0
	for i, cc := range cs {
		fmt.Printf("CLIENT conn%d END %s\n", i, describe(cc.local, cc.remote))
		if errs[i] != nil {
			failed++
			fmt.Printf("CLIENT conn%d error: %v\n", i, errs[i])
			continue
		}
		fmt.Printf("CLIENT conn%d n=%d size=%d %s\n", i, nl[i], ml[i], percentiles(rtts[i]))
	}
	if *bulk > 0 {
		if err := sendBulk(target, *tcp, *bulk); err != nil {
			failed++
			fmt.Printf("CLIENT bulk error: %v\n", err)
		}
	}
	for _, cc := range cs {
		unix.Close(cc.fd)
	}
	fmt.Printf("CLIENT RESULT conns=%d failed=%d\n", len(cs), failed)
	if failed > 0 {
		return fmt.Errorf("%d connection(s) failed", failed)
	}
	return nil
}

func pingPong(cc *clientConn, n, size, pauseAfter int, paused func(), pauseFile string) ([]time.Duration, error) {
	if size < 1 || size > maxPingSize {
		return nil, fmt.Errorf("size %d out of range", size)
	}
	out, in := make([]byte, size), make([]byte, size)
	for i := range out {
		out[i] = byte(i)
	}
	rtts := make([]time.Duration, 0, n)
	signalled := false
	for i := 0; i < n; i++ {
		if pauseAfter > 0 && i == pauseAfter {
			signalled = true
			paused()
			for {
				if _, err := os.Stat(pauseFile + ".go"); err == nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		t0 := time.Now()
		if _, err := cc.c.Write(out); err != nil {
			return rtts, fmt.Errorf("round %d write: %w", i, err)
		}
		if _, err := io.ReadFull(cc.c, in); err != nil {
			return rtts, fmt.Errorf("round %d read: %w", i, err)
		}
		rtts = append(rtts, time.Since(t0))
	}
	if pauseAfter > 0 && !signalled {
		paused()
	}
	return rtts, nil
}

func sendBulk(target netip.AddrPort, tcp bool, total int64) error {
	cc, err := dial(target, tcp, opBulk)
	if err != nil {
		return err
	}
	defer unix.Close(cc.fd)
	fmt.Printf("CLIENT bulk %s\n", describe(cc.local, cc.remote))
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(total))
	if _, err := cc.c.Write(hdr[:]); err != nil {
		return err
	}
	buf := make([]byte, bulkChunk)
	t0 := time.Now()
	for left := total; left > 0; {
		n := min(left, int64(len(buf)))
		if _, err := cc.c.Write(buf[:n]); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		left -= n
	}
	if _, err := io.ReadFull(cc.c, hdr[:]); err != nil {
		return fmt.Errorf("bulk ack: %w", err)
	}
	d := time.Since(t0)
	fmt.Printf("CLIENT bulk END %s bytes=%d secs=%.3f MBps=%.2f\n", describe(cc.local, cc.remote),
		total, d.Seconds(), float64(total)/d.Seconds()/1e6)
	return nil
}

func percentiles(d []time.Duration) string {
	if len(d) == 0 {
		return "n=0"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	us := func(q float64) float64 { return float64(s[int(q*float64(len(s)-1))].Nanoseconds()) / 1e3 }
	return fmt.Sprintf("min_us=%.1f p50_us=%.1f p99_us=%.1f max_us=%.1f", us(0), us(0.5), us(0.99), us(1))
}
