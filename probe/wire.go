package probe

import (
	"encoding/binary"
	"fmt"
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
