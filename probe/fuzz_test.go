package probe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/internal/cli"
)

// streamConn feeds the server a fixed byte stream in uneven reads and
// records what it writes back.
type streamConn struct {
	in    []byte
	chunk int
	out   bytes.Buffer
}

func (c *streamConn) Read(b []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), c.chunk)], c.in)
	c.in = c.in[n:]
	return n, nil
}

func (c *streamConn) Write(b []byte) (int, error)        { return c.out.Write(b) }
func (c *streamConn) Close() error                       { return nil }
func (c *streamConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (c *streamConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (c *streamConn) SetDeadline(t time.Time) error      { return nil }
func (c *streamConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *streamConn) SetWriteDeadline(t time.Time) error { return nil }

func message(size int, noReply bool) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i * 7)
	}
	putHeader(b, size, noReply)
	return b
}

// FuzzServerHandle checks the server's promises on any client byte stream:
// no panic, and the reply is exactly the echo of the complete, valid,
// reply-wanted messages, in order, then the too-large notice if a header
// asked for more than the limit; so never more bytes than were sent, but
// for that notice.
func FuzzServerHandle(f *testing.F) {
	f.Add(message(64, false), 64)
	f.Add(append(message(4, false), message(100, true)...), 3)
	f.Add(append(message(4096, false), message(4097, false)...), 1000)
	f.Add([]byte{0, 0, 0, 3}, 4)
	f.Add([]byte{0x80, 0, 0, 8, 1, 2, 3, 4, 0, 0, 0, 4}, 5)
	f.Add(message(70, false)[:50], 7)
	f.Fuzz(func(t *testing.T, in []byte, chunk int) {
		const limit = 4096
		s := NewServer(ServerConfig{MaxMessage: limit})
		c := &streamConn{in: bytes.Clone(in), chunk: max(1, chunk%9000)}
		s.handle(c, new(session))
		// The reference: walk the stream the way the protocol defines it.
		var want []byte
		for rest := in; len(rest) >= HeaderLen; {
			h := binary.BigEndian.Uint32(rest)
			size := int(h &^ flagNoReply)
			if size > limit {
				want = putNotice(want, NoticeTooLarge, limit)
				break
			}
			if size < HeaderLen || size > len(rest) {
				break
			}
			if h&flagNoReply == 0 {
				want = append(want, rest[:size]...)
			}
			rest = rest[size:]
		}
		if got := c.out.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("server wrote %d bytes, want the %d-byte echo of the valid messages", len(got), len(want))
		}
		if c.out.Len() > len(in)+noticeLen {
			t.Fatalf("reply of %d bytes to %d bytes", c.out.Len(), len(in))
		}
	})
}

// FuzzParseArgs: no command line makes ParseArgs panic, and every error it
// returns is a usage error (exit 2) or the help request.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"-s", "-s --tcp -p 0", "h:1 -m 64-65536 -t 1.5", "[::1]:5 --compare tcp -P 3", "h -m 4,,5", "-m 1-0 h", "h -i -1s", "a b c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		_, err := ParseArgs(strings.Fields(line))
		if err != nil && !errors.Is(err, ErrUsage) && !errors.Is(err, flag.ErrHelp) && !errors.Is(err, cli.ErrVersion) {
			t.Fatalf("ParseArgs(%q) = %v: not a usage error", line, err)
		}
	})
}
