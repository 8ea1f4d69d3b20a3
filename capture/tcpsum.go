package capture

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
)

// TCPSumStatus is the result of verifying the checksums of a TCP segment
// of a connection followed as SMC (its CLC handshake): the TCP checksum,
// as RFC 9293 3.1 defines it over the segment and the IP pseudo-header,
// and the IPv4 header's own, which covers what the pseudo-header leaves
// out (type of service, identification, TTL).
type TCPSumStatus struct {
	Checked bool   // verified: see Frame.TCPSum for when
	OK      bool   // computed == carried
	Got     uint16 // carried in the segment
	Want    uint16 // computed
	// IPSumBad: the IPv4 header's checksum fails (decode.IPv4HeaderSumOK)
	// where that is damage (clcFlow.checkSum); Frame.IPv4Sum says what
	// it is. The TCP checksum's verdict is apart.
	IPSumBad bool
	// Offload: the field holds the pseudo-header's sum, for the NIC to
	// finish (checksum offload, and every segment on loopback): the
	// addresses and length verified, the ports and the rest unknown.
	Offload bool
}

// Damaged reports a segment the receiving host drops: its TCP checksum
// or its IPv4 header's fails.
func (s *TCPSumStatus) Damaged() bool { return s.Checked && !s.OK || s.IPSumBad }

// tcpSum says whether f's TCP checksum verifies, and what it is; ok is
// false when f cannot say (cut by the snap length, no IP layer, a
// checksum left to the NIC: checksum offload leaves the pseudo-header's
// sum in the field, __tcp_v4_send_check in net/ipv4/tcp_ipv4.c and
// __tcp_v6_send_check in include/net/ip6_checksum.h).
func tcpSum(f *Frame) (s TCPSumStatus, ok bool) {
	src, dst, ok := wholeSegment(f)
	if !ok {
		return s, false
	}
	t := f.TCP
	pseudo := pseudoSum(src, dst, len(t.Contents)+len(t.Payload))
	got := binary.BigEndian.Uint16(t.Contents[16:18])
	if got == ^gopacket.FoldChecksum(pseudo) {
		s.Offload = true
		return s, false // offloaded: the NIC computes it on the way out
	}
	want := segmentSum(t, pseudo, t.Contents[:4])
	return TCPSumStatus{Checked: true, OK: want == got, Got: got, Want: want}, true
}

// wholeSegment returns the addresses of f's IP header where f holds its
// whole TCP segment (not cut, not a fragment, no IPv6 extension header).
func wholeSegment(f *Frame) (src, dst []byte, ok bool) {
	t := f.TCP
	if t == nil || f.Cut || len(t.Contents) < 20 {
		return nil, nil, false
	}
	n := len(t.Contents) + len(t.Payload)
	switch {
	case f.IPv4 != nil && f.IPv4.Protocol == layers.IPProtocolTCP && len(f.IPv4.SrcIP) == net.IPv4len && len(f.IPv4.DstIP) == net.IPv4len:
		if int(f.IPv4.Length)-int(f.IPv4.IHL)*4 != n || f.IPv4.FragOffset != 0 || f.IPv4.Flags&layers.IPv4MoreFragments != 0 {
			return nil, nil, false // not the whole segment: cut, or a fragment
		}
		return f.IPv4.SrcIP, f.IPv4.DstIP, true
	case f.IPv6 != nil && len(f.IPv6.SrcIP) == net.IPv6len && len(f.IPv6.DstIP) == net.IPv6len:
		if f.IPv6.NextHeader != layers.IPProtocolTCP || int(f.IPv6.Length) != n {
			return nil, nil, false // extension headers, a jumbogram: not checked
		}
		return f.IPv6.SrcIP, f.IPv6.DstIP, true
	}
	return nil, nil, false
}

// pseudoSum is the sum of the TCP pseudo-header (RFC 9293 3.1) of a
// segment of n bytes from src to dst.
func pseudoSum(src, dst []byte, n int) uint32 {
	return gopacket.ComputeChecksum(dst, gopacket.ComputeChecksum(src, 0)) + uint32(layers.IPProtocolTCP) + uint32(n)
}

// segmentSum is t's checksum over pseudo, with head (its first bytes, the
// ports or the ports and sequence number, or others in their place) and
// its checksum field left out (gopacket's VerifyChecksum appends the
// payload to the header, a write into the buffer or chunk the frame lies
// in).
func segmentSum(t *layers.TCP, pseudo uint32, head []byte) uint16 {
	return headerSum(t.Contents, t.Payload, pseudo, head)
}

// headerSum is segmentSum of a TCP header hdr and its payload.
func headerSum(hdr, payload []byte, pseudo uint32, head []byte) uint16 {
	sum := gopacket.ComputeChecksum(head, pseudo)
	sum = gopacket.ComputeChecksum(hdr[len(head):16], sum)
	sum = gopacket.ComputeChecksum(hdr[18:], sum)
	return gopacket.FoldChecksum(wordSum(payload, sum))
}

// wordSum is gopacket.ComputeChecksum's sum (RFC 1071) of b, an even
// number of bytes from the segment's start, added to sum, eight bytes at
// a time: two 32-bit big-endian words add up to what their four 16-bit
// words do modulo 0xffff (2^16 is 1 there), the ones' complement sum.
// The checksum of every TCP segment of a connection followed as SMC is
// computed, a fallback's bulk data among them.
func wordSum(b []byte, sum uint32) uint32 {
	acc := uint64(sum)
	for len(b) >= 8 {
		v := binary.BigEndian.Uint64(b)
		acc += v>>32 + v&0xffffffff
		b = b[8:]
	}
	for len(b) >= 2 {
		acc += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		acc += uint64(b[0]) << 8
	}
	for acc>>32 != 0 {
		acc = acc&0xffffffff + acc>>32
	}
	return uint32(acc)
}

// SYNSumAs reports whether hdr, the header of a TCP segment with no
// payload (a SYN's, copied from its frame), verifies its checksum as if
// it named src -> dst with sequence number seq: where its own fail, that
// those fields are all the capture damaged.
func SYNSumAs(hdr []byte, src, dst netip.AddrPort, seq uint32) bool {
	if len(hdr) < 20 || src.Addr().Is4() != dst.Addr().Is4() {
		return false
	}
	var head [8]byte
	binary.BigEndian.PutUint16(head[:], src.Port())
	binary.BigEndian.PutUint16(head[2:], dst.Port())
	binary.BigEndian.PutUint32(head[4:], seq)
	pseudo := pseudoSum(src.Addr().AsSlice(), dst.Addr().AsSlice(), len(hdr))
	return headerSum(hdr, nil, pseudo, head[:]) == binary.BigEndian.Uint16(hdr[16:18])
}

// IPv4Sum is the checksum f's IPv4 header carries and the one computed
// over it (decode.IPv4HeaderSum): what TCPSum.IPSumBad turns down says.
// Computed when asked, not kept in every frame for the few that fail.
func (f *Frame) IPv4Sum() [2]uint16 {
	if f.IPv4 == nil {
		return [2]uint16{}
	}
	got, want := decode.IPv4HeaderSum(f.IPv4.Contents)
	return [2]uint16{got, want}
}

// TCPSumAnyway verifies f's TCP checksum and its IPv4 header's whatever
// the segment's flow (TCPSum judges a failing checksum damage only where
// the direction's segments verified before): the tracker asks it of a
// segment that would start a connection of its own, whose addresses or
// ports the capture may have damaged (a damaged address or port fails
// the checksum that covers it). Checked is false where f cannot say
// (tcpSum); IPSumBad is set on a nonzero IPv4 header checksum that fails.
func (f *Frame) TCPSumAnyway() TCPSumStatus {
	s, _ := tcpSum(f)
	if f.IPv4 != nil && !decode.IPv4HeaderSumOK(f.IPv4.Contents) {
		s.IPSumBad = true
	}
	return s
}

// TCPSumAs reports whether f's TCP checksum verifies as if the segment
// named src -> dst (addresses and ports): where its own 4-tuple fails the
// checksum, whether that 4-tuple is all the capture damaged.
func (f *Frame) TCPSumAs(src, dst netip.AddrPort) bool {
	s, d, ok := wholeSegment(f)
	if !ok || len(s) != len(src.Addr().AsSlice()) || len(d) != len(dst.Addr().AsSlice()) {
		return false
	}
	t := f.TCP
	var ports [4]byte
	binary.BigEndian.PutUint16(ports[:], src.Port())
	binary.BigEndian.PutUint16(ports[2:], dst.Port())
	pseudo := pseudoSum(src.Addr().AsSlice(), dst.Addr().AsSlice(), len(t.Contents)+len(t.Payload))
	return segmentSum(t, pseudo, ports[:]) == binary.BigEndian.Uint16(t.Contents[16:18])
}

// IPv4SumAs reports whether f's IPv4 header checksum, which fails as
// held, verifies with src and dst as its addresses: the capture damaged
// the header's addresses, and nothing else of it (a receiver's IP layer
// drops a header whose checksum fails, ip_rcv_core in
// net/ipv4/ip_input.c, so the packet sent named src and dst). A checksum
// that fails for another reason (other fields damaged, a NIC's) verifies
// with other addresses by chance once in 65,536; one of 0, not filled
// in, is not judged.
func (f *Frame) IPv4SumAs(src, dst netip.Addr) bool {
	if f.IPv4 == nil || !src.Is4() || !dst.Is4() {
		return false
	}
	h := f.IPv4.Contents
	if len(h) < 20 || len(h) > 60 || decode.IPv4HeaderSumOK(h) {
		return false
	}
	var b [60]byte
	n := copy(b[:], h)
	a, d := src.As4(), dst.As4()
	copy(b[12:16], a[:])
	copy(b[16:20], d[:])
	return decode.IPv4HeaderSumOK(b[:n])
}

// SMCOptionDamaged reports whether f, a SYN or SYN-ACK in which no SMC
// option was found (Frame.SMCOption false), carried it in a copy the
// capture damaged: its TCP or IPv4 header checksum fails and its options
// hold the option but for at most two bytes, or whole behind an option
// whose damaged length ended the list (decode.SMCOptionNear). Its stream
// is followed (clcAssembler) and its connection tracked as SMC's.
func (f *Frame) SMCOptionDamaged() bool {
	t := f.TCP
	if t == nil || !t.SYN || f.SMCOption || len(t.Contents) <= 20 || !decode.SMCOptionNear(t.Contents[20:]) {
		return false
	}
	s := f.TCPSum
	if !s.Damaged() {
		s = f.TCPSumAnyway()
	}
	return s.Damaged()
}

// delta is what the segment's ones' complement sum as held exceeds the
// one its sender summed by, modulo 0xffff (RFC 1071): the carried and
// computed checksums, their complements, differ by as much.
func (s TCPSumStatus) delta() uint32 { return (uint32(s.Got) + 0xffff - uint32(s.Want)) % 0xffff }

// byteShare is what a byte at offset off of a segment adds to its ones'
// complement sum held rather than sent, modulo 0xffff: at an even offset
// it is a 16-bit word's high byte.
func byteShare(off int, held, sent byte) uint32 {
	d := (uint32(held) + 0xffff - uint32(sent)) % 0xffff
	if off%2 == 0 {
		d = d * 256 % 0xffff
	}
	return d
}

// sentFor returns the n values the byte held at offset off of a segment
// may have been sent with where it alone makes up delta (TCPSumStatus's):
// at a high byte, delta times 256 (its own inverse modulo 0xffff); held
// less that, or less that and 0xffff, the two zeros of ones' complement.
func sentFor(delta uint32, off int, held byte) (v [2]byte, n int) {
	d := delta
	if off%2 == 0 {
		d = delta * 256 % 0xffff
	}
	for _, sent := range [2]int{int(held) - int(d), int(held) - int(d) + 0xffff} {
		if sent >= 0 && sent <= 255 && sent != int(held) {
			v[n], n = byte(sent), n+1
		}
	}
	return v, n
}

// SMCOptionMended reports whether f, a SYN or SYN-ACK whose SMC option
// the capture damaged (SMCOptionDamaged), was sent as the capture holds
// it but for that: its TCP checksum verifies with the option's six bytes
// as Linux sends them (decode.SMCOptionSent), or with one byte of its
// options changed so that the list, walked as a receiver walks it, holds
// the option (an option's length that ended the list was the damage). So
// its sequence and acknowledgement numbers are the sender's. One whose
// option was found as held is not asked (a byte of its options could make
// up for damage elsewhere, its list still whole), nor one whose options
// hold no near copy of it (a peer that offered no SMC).
func (f *Frame) SMCOptionMended() bool {
	t := f.TCP
	if t == nil || !t.SYN || f.SMCOption || len(t.Contents) <= 20 || !decode.SMCOptionNear(t.Contents[20:]) {
		return false
	}
	s, ok := tcpSum(f) // not ok: offloaded, or not whole
	if !ok || s.OK {
		return false
	}
	delta := s.delta()
	h := t.Contents
	want := decode.SMCOptionSent()
	for i := 20; i+len(want) <= len(h); i++ {
		var d uint32
		off := 0
		for j, b := range want {
			if h[i+j] != b {
				d, off = (d+byteShare(i+j, h[i+j], b))%0xffff, off+1
			}
		}
		if off > 0 && off <= 2 && d == delta {
			return true
		}
	}
	var opts [40]byte
	n := copy(opts[:], h[20:])
	for i, held := range opts[:n] {
		v, k := sentFor(delta, 20+i, held)
		for _, sent := range v[:k] {
			opts[i] = sent
			in := decode.SMCOptionIn(opts[:n])
			opts[i] = held
			if in {
				return true
			}
		}
	}
	return false
}

// ErrTCPFlagsMended notes a SYN or SYN-ACK whose flags byte the capture
// damaged (mendSYNFlags).
var ErrTCPFlagsMended = fmt.Errorf("flags %w", ErrMended)

// mendSYNFlags reads as sent a segment whose flags say no SYN but whose
// options only a SYN or SYN-ACK carries: the SMC option (Linux writes it
// there alone, smc_options_write under OPTION_SMC in
// net/ipv4/tcp_output.c, and a receiver reads it there alone,
// smc_parse_options), the MSS, window scale or SACK-permitted option (RFC
// 9293, RFC 7323, RFC 2018). Where its TCP checksum fails as held, the
// capture damaged the flags byte: it is read with the flags sent, the one
// value the checksums' difference gives where that byte alone was damaged
// (sentFor), else a SYN's (a SYN-ACK's where it acknowledges a number),
// with a note.
func (f *Frame) mendSYNFlags() {
	t := f.TCP
	if t == nil || t.SYN || len(t.Contents) < 20 || !synOptions(t.Options) {
		return
	}
	s, ok := tcpSum(f)
	if !ok || s.OK {
		return
	}
	held := t.Contents[13]
	sent, found := byte(0), false
	v, n := sentFor(s.delta(), 13, held)
	for _, b := range v[:n] {
		if b&0x02 != 0 && b&0x05 == 0 { // a SYN, no FIN or RST
			sent, found = b, true
			break
		}
	}
	why := "it verifies with"
	if !found {
		sent, why = 0x02, "its options are a SYN's: read as"
		if t.Ack != 0 {
			sent = 0x12
		}
	}
	setTCPFlags(t, sent)
	detail := fmt.Sprintf("%#02x held, with which the segment's checksum fails; %s %#02x", held, why, sent)
	if found {
		detail += ": read as that"
	}
	f.CLCErr = append(f.CLCErr, &decode.Error{Layer: "TCP", Field: "flags", Offset: 13, Err: ErrTCPFlagsMended, Detail: detail})
}

// synOptions reports options only a SYN or SYN-ACK carries
// (mendSYNFlags): walked once, as every TCP segment with options asks.
func synOptions(opts []layers.TCPOption) bool {
	for _, o := range opts {
		switch o.OptionType {
		case layers.TCPOptionKindMSS, layers.TCPOptionKindWindowScale, layers.TCPOptionKindSACKPermitted:
			return true
		case 254:
			if smc, _ := decode.SMCOptionKind(opts); smc {
				return true
			}
		}
	}
	return false
}
