package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// Pinger runs exchanges of the smcping protocol on one connection. Its
// methods do not allocate, so they can sit inside the measuring loop.
type Pinger struct {
	conn net.Conn
	buf  []byte
	// base makes every timestamp a single monotonic clock read
	// (time.Since(base)); time.Now would also read the wall clock, which
	// costs about 0.1 µs more per ping on a VM.
	base time.Time
	// sent is when the last Ping started, as an offset from base.
	sent time.Duration
	dig  *digest // --digest, nil without
}

// NewPinger prepares a Pinger for messages up to maxSize bytes.
func NewPinger(c net.Conn, maxSize int) *Pinger {
	buf := make([]byte, max(maxSize, HeaderLen))
	for i := range buf {
		buf[i] = byte(i) // a pattern, so a broken echo is seen in a capture
	}
	return &Pinger{conn: c, buf: buf, base: time.Now()}
}

// Ping sends one size-byte message and waits for its echo; it returns the
// round-trip time on the monotonic clock.
func (p *Pinger) Ping(size int) (time.Duration, error) {
	if size < HeaderLen || size > len(p.buf) {
		return 0, fmt.Errorf("ping: size %d outside [%d, %d]", size, HeaderLen, len(p.buf))
	}
	if p.dig != nil {
		p.dig.fill(p.buf[HeaderLen:size])
	}
	putHeader(p.buf, size, false)
	start := time.Since(p.base)
	p.sent = start
	if _, err := p.conn.Write(p.buf[:size]); err != nil {
		return 0, p.closed("send", size, nil, err)
	}
	if p.dig != nil {
		p.dig.wrote(p.buf[:size])
	}
	if n, err := io.ReadFull(p.conn, p.buf[:size]); err != nil {
		return 0, p.closed("receive", size, p.buf[:n], err)
	}
	if p.dig != nil {
		p.dig.read(p.buf[:size])
	}
	rtt := time.Since(p.base) - start
	if got, noReply := parseHeader(p.buf); got != size || noReply {
		if err := p.notice(p.buf[:size], size); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("echo header says %d bytes, sent %d: not an smcping server?", got, size)
	}
	return rtt, nil
}

// closed explains a failed send or receive of a size-byte message (got:
// the bytes of the echo that came): the server's notice when it sent one,
// else that it closed the connection without a reason.
func (p *Pinger) closed(op string, size int, got []byte, err error) error {
	if len(got) == 0 && !errors.Is(err, os.ErrDeadlineExceeded) {
		// The notice may wait unread behind a failed send, or come as
		// the first bytes of what failed to be a whole echo.
		var b [noticeLen]byte
		p.conn.SetReadDeadline(time.Now().Add(time.Second))
		n, _ := io.ReadFull(p.conn, b[:])
		got = b[:n]
	}
	if n := p.notice(got, size); n != nil {
		return n
	}
	what := "send %d bytes"
	if op == "receive" {
		what = "receive %d-byte echo"
	}
	return fmt.Errorf(what+": %w (the server closed the connection without a notice: it stopped, or is no smcping server)", size, err)
}

// notice reads the server's notice at the start of b (the rest of it from
// the connection when b is short), or returns nil when b holds none.
func (p *Pinger) notice(b []byte, size int) error {
	if len(b) < HeaderLen {
		return nil
	}
	code, ok := isNotice(b)
	if !ok {
		return nil
	}
	var v [noticeLen]byte
	n := copy(v[:], b)
	if n < noticeLen {
		p.conn.SetReadDeadline(time.Now().Add(time.Second))
		io.ReadFull(p.conn, v[n:])
	}
	return &ServerNotice{Code: code, Value: binary.BigEndian.Uint32(v[HeaderLen:]), Size: size}
}

// SentAt returns when the last Ping was sent, as an offset from the
// Pinger's creation (or the base given to SetBase).
func (p *Pinger) SentAt() time.Duration { return p.sent }

// SetBase sets the time SentAt counts from, so that the pingers of one
// run share a time line.
func (p *Pinger) SetBase(t time.Time) { p.base = t }

// Send sends one size-byte message the server discards (stream mode).
func (p *Pinger) Send(size int) error {
	if size < HeaderLen || size > len(p.buf) {
		return fmt.Errorf("send: size %d outside [%d, %d]", size, HeaderLen, len(p.buf))
	}
	if p.dig != nil {
		p.dig.fill(p.buf[HeaderLen:size])
	}
	putHeader(p.buf, size, true)
	if _, err := p.conn.Write(p.buf[:size]); err != nil {
		return p.closed("send", size, nil, err)
	}
	if p.dig != nil {
		p.dig.wrote(p.buf[:size])
	}
	return nil
}
