package capture

import (
	"encoding/binary"
	"net"

	"github.com/gopacket/gopacket/layers"
)

// TCPSumStatus is the result of verifying the checksum of a TCP segment
// of a connection followed as SMC (its CLC handshake), as RFC 9293 3.1
// defines it over the segment and the IP pseudo-header.
type TCPSumStatus struct {
	Checked bool   // verified: see Frame.TCPSum for when
	OK      bool   // computed == carried
	Got     uint16 // carried in the segment
	Want    uint16 // computed
}

// tcpSum says whether f's TCP checksum verifies, and what it is; ok is
// false when f cannot say (cut by the snap length, no IP layer, a
// checksum left to the NIC: checksum offload leaves the pseudo-header's
// sum in the field, __tcp_v4_send_check in net/ipv4/tcp_ipv4.c and
// __tcp_v6_send_check in include/net/ip6_checksum.h).
func tcpSum(f *Frame) (s TCPSumStatus, ok bool) {
	t := f.TCP
	if t == nil || f.Cut || len(t.Contents) < 20 {
		return s, false
	}
	n := len(t.Contents) + len(t.Payload)
	var pseudo uint32
	switch {
	case f.IPv4 != nil && f.IPv4.Protocol == layers.IPProtocolTCP && len(f.IPv4.SrcIP) == net.IPv4len && len(f.IPv4.DstIP) == net.IPv4len:
		if int(f.IPv4.Length)-int(f.IPv4.IHL)*4 != n || f.IPv4.FragOffset != 0 || f.IPv4.Flags&layers.IPv4MoreFragments != 0 {
			return s, false // not the whole segment: cut, or a fragment
		}
		pseudo = sum16(sum16(0, f.IPv4.SrcIP), f.IPv4.DstIP) + uint32(layers.IPProtocolTCP) + uint32(n)
	case f.IPv6 != nil && len(f.IPv6.SrcIP) == net.IPv6len && len(f.IPv6.DstIP) == net.IPv6len:
		if f.IPv6.NextHeader != layers.IPProtocolTCP || int(f.IPv6.Length) != n {
			return s, false // extension headers, a jumbogram: not checked
		}
		pseudo = sum16(sum16(0, f.IPv6.SrcIP), f.IPv6.DstIP) + uint32(layers.IPProtocolTCP) + uint32(n)
	default:
		return s, false
	}
	got := binary.BigEndian.Uint16(t.Contents[16:18])
	if got == fold(pseudo) {
		return s, false // offloaded: the NIC computes it on the way out
	}
	sum := sum16(sum16(pseudo, t.Contents[:16]), t.Contents[18:])
	sum = sum16(sum, t.Payload)
	want := ^fold(sum)
	return TCPSumStatus{Checked: true, OK: want == got, Got: got, Want: want}, true
}

// sum16 adds b to the ones'-complement sum acc as big-endian 16-bit
// words, an odd last byte padded with zero.
func sum16(acc uint32, b []byte) uint32 {
	for len(b) >= 2 {
		acc += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		acc += uint32(b[0]) << 8
	}
	return acc
}

// fold folds a ones'-complement sum to 16 bits.
func fold(acc uint32) uint16 {
	for acc>>16 != 0 {
		acc = acc&0xffff + acc>>16
	}
	return uint16(acc)
}
