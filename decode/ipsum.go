package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
)

// IPv4HeaderSumOK reports whether the IPv4 header at the start of ip
// carries a checksum that verifies (RFC 791, RFC 1071): the ones'
// complement sum of its 16-bit words, the checksum included, is all ones.
// The RoCE ICRC leaves the fields a router changes (type of service, TTL,
// the checksum) out, so damage there is the checksum's alone to show; the
// receiving host's IP layer drops such a packet (ip_rcv_core,
// net/ipv4/ip_input.c), as an RNIC does. A checksum of 0 was not filled
// in (ANCK's dump device, smc_dump_fill_skb_header; a host capture's
// checksum offload): it reports true, as for a header it cannot read
// (shorter than its IHL says, or not version 4), but for a header of 20
// bytes exactly: one a decoder read as a plain header though its first
// byte says otherwise (that byte damaged in a capture's copy), whose
// checksum is over those bytes.
func IPv4HeaderSumOK(ip []byte) bool {
	if len(ip) < 20 {
		return true
	}
	n := int(ip[0]&0x0F) * 4
	switch {
	case len(ip) == 20 && ip[0] != 0x45:
		n = 20
	case ip[0]>>4 != 4 || n < 20 || len(ip) < n:
		return true
	}
	if ip[10]|ip[11] == 0 {
		return true
	}
	return gopacket.FoldChecksum(gopacket.ComputeChecksum(ip[:n], 0)) == 0
}

// IPv4HeaderSum is the checksum the IPv4 header at the start of ip
// carries and the one computed over it (RFC 1071): what a header
// IPv4HeaderSumOK turns down says.
func IPv4HeaderSum(ip []byte) (got, want uint16) {
	if len(ip) < 20 {
		return 0, 0
	}
	n := min(max(int(ip[0]&0x0F)*4, 20), len(ip))
	// The header with its checksum field left out.
	return binary.BigEndian.Uint16(ip[10:]), gopacket.FoldChecksum(gopacket.ComputeChecksum(ip[12:n], gopacket.ComputeChecksum(ip[:10], 0)))
}

// IPv4Header20SumOK is IPv4HeaderSumOK for a header of 20 bytes (no
// options, as RoCEv2's are), small enough to be inlined on the paths that
// read every frame.
func IPv4Header20SumOK(h *[20]byte) bool {
	s := uint64(binary.BigEndian.Uint32(h[0:])) + uint64(binary.BigEndian.Uint32(h[4:])) +
		uint64(binary.BigEndian.Uint32(h[8:])) + uint64(binary.BigEndian.Uint32(h[12:])) +
		uint64(binary.BigEndian.Uint32(h[16:]))
	s = s>>32 + s&0xFFFFFFFF // below 2^35: the carries fit in the high half
	s = s>>16 + s&0xFFFF
	s = s>>16 + s&0xFFFF
	return s == 0xFFFF || h[10]|h[11] == 0
}
