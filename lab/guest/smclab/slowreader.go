package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/smcscope/smcscope/probe"
	"github.com/smcscope/smcscope/smcnl"
)

// slowReader is the lab's slow reader (the slow-reader scenario): an
// AF_SMC server of the smcping protocol that takes one connection and
// reads it little and late, at most chunk bytes per read with a pause
// before each, so that the peer's one-way stream (smcping --bw) fills its
// RMBE and has to wait: the CDCs it sends say write-blocked, and the RMBE
// stays full while the reader pauses. smcping's own server reads all it
// can at once, which is what a server should do; this one exists to be
// slow. At the end of each pause, when the RMBE is fullest, it prints the
// kernel's view of its socket (sock_diag: cursors and the flags of the
// peer's last CDC), the ground truth of the capture. After it has
// answered a ping it pauses no more: the peer closes next.
type slowReader struct {
	port        int
	chunk       int
	pause       time.Duration
	acceptWait  time.Duration // how long to wait for the connection
	maxMessages int           // bound on the stream's messages (a guard, not a limit in practice)
}

func parseSlowReader(args []string) (slowReader, error) {
	r := slowReader{port: 5000, chunk: 16 << 10, pause: time.Second, acceptWait: 120 * time.Second, maxMessages: 1 << 20}
	for len(args) > 0 {
		if len(args) < 2 {
			return r, usageError(fmt.Sprintf("slow-reader: %s needs a value", args[0]))
		}
		v := args[1]
		var err error
		switch args[0] {
		case "-port":
			r.port, err = strconv.Atoi(v)
			if err == nil && (r.port <= 0 || r.port > 65535) {
				err = errors.New("out of range")
			}
		case "-chunk":
			r.chunk, err = strconv.Atoi(v)
			if err == nil && r.chunk <= 0 {
				err = errors.New("must be positive")
			}
		case "-pause":
			r.pause, err = time.ParseDuration(v)
			if err == nil && r.pause < 0 {
				err = errors.New("negative")
			}
		case "-wait":
			r.acceptWait, err = time.ParseDuration(v)
			if err == nil && r.acceptWait <= 0 {
				err = errors.New("must be positive")
			}
		default:
			return r, usageError(fmt.Sprintf("slow-reader: unknown option %s", args[0]))
		}
		if err != nil {
			return r, usageError(fmt.Sprintf("slow-reader: bad %s %q: %v", args[0], v, err))
		}
		args = args[2:]
	}
	return r, nil
}

// run serves one connection and returns when the peer has closed it.
func (r slowReader) run(w io.Writer) error {
	ln, err := probe.Listen(probe.ProtoSMC, netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(r.port)), 8)
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Fprintf(w, "slow-reader listening port=%d chunk=%d pause=%v\n", r.port, r.chunk, r.pause)
	if tl, ok := ln.(interface{ SetDeadline(time.Time) error }); ok {
		tl.SetDeadline(time.Now().Add(r.acceptWait))
	}
	c, err := ln.Accept()
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	fd, err := blockingFD(c)
	c.Close()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return os.NewSyscallError("fstat", err)
	}
	fmt.Fprintf(w, "slow-reader accepted local=%v remote=%v inode=%d\n", c.LocalAddr(), c.RemoteAddr(), st.Ino)
	diag := func(what string) {
		fmt.Fprintf(w, "slow-reader diag %s: %s\n", what, socketLine(st.Ino))
	}
	diag("accept")
	var (
		p     smcpingStream
		buf   = make([]byte, r.chunk)
		total int64
		reads int
	)
	for {
		// Once it has answered the stream's closing ping (smcping --bw)
		// the reader reads on without pausing: what follows is the
		// close, which it takes at once.
		reads++
		if p.replied == 0 {
			time.Sleep(r.pause)
			diag(fmt.Sprintf("pause %d end", reads))
		}
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("read", err)
		}
		if n == 0 {
			break
		}
		total += int64(n)
		replies, err := p.feed(buf[:n])
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "slow-reader read %d bytes=%d total=%d\n", reads, n, total)
		for _, b := range replies {
			if err := writeAll(fd, b); err != nil {
				return err
			}
			p.replied++
		}
		if p.messages > r.maxMessages {
			return fmt.Errorf("slow-reader: more than %d messages", r.maxMessages)
		}
	}
	diag("eof")
	fmt.Fprintf(w, "slow-reader done bytes=%d reads=%d messages=%d replies=%d\n", total, reads, p.messages, p.replied)
	return nil
}

// blockingFD takes a blocking duplicate of an accepted connection's
// descriptor: the reader's pauses are its own, not the Go poller's.
func blockingFD(c net.Conn) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("accept: %T has no descriptor", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	nfd, derr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, os.NewSyscallError("dup", derr)
	}
	if err := unix.SetNonblock(nfd, false); err != nil {
		unix.Close(nfd)
		return -1, os.NewSyscallError("fcntl", err)
	}
	return nfd, nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("write", err)
		}
		b = b[n:]
	}
	return nil
}

// socketLine is the kernel's sock_diag line of the SMC socket with this
// inode (smcnl.WriteSockets' format), or what went wrong.
func socketLine(ino uint64) string {
	ss, err := smcnl.Sockets()
	if err != nil {
		return "error: " + err.Error()
	}
	for _, s := range ss {
		if s.Inode == ino {
			var b bytes.Buffer
			smcnl.WriteSockets(&b, []smcnl.Socket{s})
			line, _, _ := strings.Cut(b.String(), "\n")
			return line
		}
	}
	return fmt.Sprintf("error: no SMC socket with inode %d", ino)
}

// smcpingStream follows the smcping protocol on what the reader reads (see
// package probe): each message is a 4-byte big-endian header, bit 31 the
// no-reply flag and bits 0..30 its length, header included. A message
// without the flag is echoed byte for byte (smcping --bw ends its stream
// with one, whose echo says that all was read).
type smcpingStream struct {
	hdr      [probe.HeaderLen]byte
	nhdr     int
	left     int    // bytes of the current message's body still to come
	echo     []byte // the current message, when it is to be echoed
	reply    bool
	messages int
	replied  int
}

// feed takes the next bytes of the stream and returns the replies that
// became due.
func (s *smcpingStream) feed(b []byte) (replies [][]byte, err error) {
	for len(b) > 0 {
		if s.nhdr < len(s.hdr) {
			k := copy(s.hdr[s.nhdr:], b)
			s.nhdr += k
			b = b[k:]
			if s.nhdr < len(s.hdr) {
				break
			}
			v := binary.BigEndian.Uint32(s.hdr[:])
			size := int(v &^ (1 << 31))
			s.left, s.reply = size-probe.HeaderLen, v>>31 == 0
			// Only an echo is kept, so only its size is bounded (as
			// smcping's server bounds every message).
			if size < probe.HeaderLen || s.reply && size > probe.DefaultMaxMessage {
				return replies, fmt.Errorf("slow-reader: smcping header says %d bytes", size)
			}
			s.echo = s.echo[:0]
			if s.reply {
				s.echo = append(s.echo, s.hdr[:]...)
			}
		}
		k := min(s.left, len(b))
		if s.reply {
			s.echo = append(s.echo, b[:k]...)
		}
		s.left -= k
		b = b[k:]
		if s.left == 0 {
			s.messages++
			if s.reply {
				replies = append(replies, append([]byte(nil), s.echo...))
			}
			s.nhdr = 0
		}
	}
	return replies, nil
}
