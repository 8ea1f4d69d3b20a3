package probe

import (
	"encoding/binary"
	"fmt"
	"time"
)

// HeaderLen is the size of the message header of the smcping protocol.
const HeaderLen = 4

// flagNoReply in the header asks the server to discard the message (stream
// mode) instead of echoing it.
const flagNoReply = 1 << 31

// MaxMessage is the largest message length the header can carry.
const MaxMessage = 1<<31 - 1

func putHeader(b []byte, size int, noReply bool) {
	h := uint32(size)
	if noReply {
		h |= flagNoReply
	}
	binary.BigEndian.PutUint32(b[:HeaderLen], h)
}

func parseHeader(b []byte) (size int, noReply bool) {
	h := binary.BigEndian.Uint32(b[:HeaderLen])
	return int(h &^ flagNoReply), h&flagNoReply != 0
}

// checkSize validates a message size against the protocol and a limit.
func checkSize(size, limit int) error {
	if size < HeaderLen {
		return fmt.Errorf("message size %d below the %d-byte header", size, HeaderLen)
	}
	if size > limit {
		return fmt.Errorf("message size %d above the limit %d", size, limit)
	}
	return nil
}

// Notices. Before it closes a connection for a reason the client should
// tell its user, the server sends a notice instead of an echo: a header
// with the no-reply flag, which no echo carries (the server echoes only
// messages without it), and a size field below HeaderLen, which no message
// has, that field being the code; then a 4-byte big-endian value. A client
// that reads one where it waited for an echo has its reason.
const (
	NoticeBusy     = 1 // refused: the server serves MaxConns connections, none idle; value: MaxConns
	NoticeTooLarge = 2 // a message above MaxMessage; value: MaxMessage
	NoticeTimeout  = 3 // a request not complete within RequestTimeout; value: milliseconds
	noticeLen      = 8
)

func putNotice(b []byte, code, value uint32) []byte {
	b = binary.BigEndian.AppendUint32(b, flagNoReply|code)
	return binary.BigEndian.AppendUint32(b, value)
}

// isNotice reports whether the header at b starts a notice, and its code.
func isNotice(b []byte) (code uint32, ok bool) {
	size, noReply := parseHeader(b)
	return uint32(size), noReply && size < HeaderLen
}

// ServerNotice is the server's reason for closing a connection, as its
// notice said.
type ServerNotice struct {
	Code  uint32 // NoticeBusy, NoticeTooLarge, NoticeTimeout
	Value uint32 // see the codes
	Size  int    // the message the client sent (NoticeTooLarge)
}

func (n *ServerNotice) Error() string {
	switch n.Code {
	case NoticeBusy:
		conns := "connections"
		if n.Value == 1 {
			conns = "connection"
		}
		return fmt.Sprintf("the server refused the connection: it serves %d %s at once (--max-conns) and none is idle", n.Value, conns)
	case NoticeTooLarge:
		return fmt.Sprintf("the server refused a %d-byte message: its limit is %d bytes (--max-msg)", n.Size, n.Value)
	case NoticeTimeout:
		return fmt.Sprintf("the server closed the connection: a request took longer than %v (--request-timeout)",
			time.Duration(n.Value)*time.Millisecond)
	}
	return fmt.Sprintf("the server closed the connection with notice %d (value %d), which this smcping does not know", n.Code, n.Value)
}
