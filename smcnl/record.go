package smcnl

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
)

// Recordings (smcnl/testdata/<scenario>/<name>.bin, made by `smclab record`)
// hold netlink messages back to back as the kernel frames them: a 16-byte
// nlmsghdr in host order whose length excludes the padding, the payload,
// then padding to 4 bytes.

const nlmsgHeaderLen = 16

// AppendMessages appends msgs in recording format. Header.Length is
// recomputed from the payload, so rebuilt headers need not set it.
func AppendMessages(b []byte, msgs []netlink.Message) []byte {
	ne := binary.NativeEndian
	for _, m := range msgs {
		l := nlmsgHeaderLen + len(m.Data)
		b = ne.AppendUint32(b, uint32(l))
		b = ne.AppendUint16(b, uint16(m.Header.Type))
		b = ne.AppendUint16(b, uint16(m.Header.Flags))
		b = ne.AppendUint32(b, m.Header.Sequence)
		b = ne.AppendUint32(b, m.Header.PID)
		b = append(b, m.Data...)
		for l%4 != 0 {
			b = append(b, 0)
			l++
		}
	}
	return b
}

// SplitMessages parses a recording back into messages.
func SplitMessages(b []byte) ([]netlink.Message, error) {
	ne := binary.NativeEndian
	var msgs []netlink.Message
	for off := 0; off < len(b); {
		if len(b)-off < nlmsgHeaderLen {
			return nil, fmt.Errorf("smcnl: recording offset %d: %d bytes left, need a %d-byte nlmsghdr", off, len(b)-off, nlmsgHeaderLen)
		}
		l := int(ne.Uint32(b[off:]))
		if l < nlmsgHeaderLen || l > len(b)-off {
			return nil, fmt.Errorf("smcnl: recording offset %d: bad nlmsg_len %d", off, l)
		}
		msgs = append(msgs, netlink.Message{
			Header: netlink.Header{
				Length:   uint32(l),
				Type:     netlink.HeaderType(ne.Uint16(b[off+4:])),
				Flags:    netlink.HeaderFlags(ne.Uint16(b[off+6:])),
				Sequence: ne.Uint32(b[off+8:]),
				PID:      ne.Uint32(b[off+12:]),
			},
			Data: b[off+nlmsgHeaderLen : off+l],
		})
		off += (l + 3) &^ 3
	}
	return msgs, nil
}
