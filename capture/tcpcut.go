package capture

import (
	"encoding/binary"

	"github.com/gopacket/gopacket/layers"
)

// decodeTCPCut reads into t a TCP header the snap length cut inside its
// options: b holds its fixed 20 bytes (struct tcphdr,
// include/uapi/linux/tcp.h) and part of the options its data offset
// claims. The options whole in b are kept, in order, up to the first one
// cut or malformed (tcp_parse_options stops there too); the payload is
// not in the capture. It reports false where b cannot be such a header.
func decodeTCPCut(t *layers.TCP, b []byte) bool {
	if len(b) < 20 {
		return false
	}
	doff := b[12] >> 4
	if int(doff)*4 <= len(b) {
		return false
	}
	be := binary.BigEndian
	opts := t.Options[:0]
	*t = layers.TCP{
		SrcPort:    layers.TCPPort(be.Uint16(b[0:])),
		DstPort:    layers.TCPPort(be.Uint16(b[2:])),
		Seq:        be.Uint32(b[4:]),
		Ack:        be.Uint32(b[8:]),
		DataOffset: doff,
		NS:         b[12]&0x01 != 0,
		Window:     be.Uint16(b[14:]),
		Checksum:   be.Uint16(b[16:]),
		Urgent:     be.Uint16(b[18:]),
	}
	setTCPFlags(t, b[13])
	t.Contents = b
	for o := b[20:]; len(o) > 0; {
		kind := layers.TCPOptionKind(o[0])
		if kind == layers.TCPOptionKindEndList || kind == layers.TCPOptionKindNop {
			opts = append(opts, layers.TCPOption{OptionType: kind, OptionLength: 1})
			if kind == layers.TCPOptionKindEndList {
				break
			}
			o = o[1:]
			continue
		}
		if len(o) < 2 || o[1] < 2 || int(o[1]) > len(o) {
			break
		}
		n := int(o[1])
		opts = append(opts, layers.TCPOption{OptionType: kind, OptionLength: o[1], OptionData: o[2:n]})
		o = o[n:]
	}
	t.Options = opts
	return true
}

// setTCPFlags sets t's flags from the header's flags byte (byte 13 of
// struct tcphdr).
func setTCPFlags(t *layers.TCP, b byte) {
	t.CWR, t.ECE, t.URG, t.ACK = b&0x80 != 0, b&0x40 != 0, b&0x20 != 0, b&0x10 != 0
	t.PSH, t.RST, t.SYN, t.FIN = b&0x08 != 0, b&0x04 != 0, b&0x02 != 0, b&0x01 != 0
}
