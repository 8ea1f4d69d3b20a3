package capture

import (
	"encoding/binary"
	"math/bits"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
)

// guessLinkType is the link type, of those a Decoder decodes, whose
// headers the frame data (wire: its length on the wire) begins with, for
// a file header that declares one with no decoder (declared): a damaged
// header's, where the frames say what they are. ok is false where no
// link type fits, or two fit that are as near declared (bits that
// differ), its damage being the likelier the fewer. Each shape is held
// strictly (the IP header beneath, its version, lengths the frame can
// hold), so that frames of a link type truly unknown here are refused as
// before rather than read as another's.
func guessLinkType(declared layers.LinkType, data []byte, wire int) (lt layers.LinkType, ok bool) {
	best, ties := 17, 0
	try := func(c layers.LinkType, fits bool) {
		if !fits {
			return
		}
		switch d := bits.OnesCount16(uint16(c ^ declared)); {
		case d < best:
			best, ties, lt = d, 1, c
		case d == best && c != lt:
			ties++
		}
	}
	try(layers.LinkTypeEthernet, ethernetFits(data, wire))
	try(layers.LinkTypeLinuxSLL, len(data) >= 16 && binary.BigEndian.Uint16(data[0:2]) <= 4 &&
		binary.BigEndian.Uint16(data[4:6]) <= 8 && l3Fits(binary.BigEndian.Uint16(data[14:16]), data[16:], wire-16))
	try(layers.LinkTypeLinuxSLL2, len(data) >= 20 && binary.BigEndian.Uint16(data[2:4]) == 0 && data[10] <= 4 &&
		data[11] <= 8 && l3Fits(binary.BigEndian.Uint16(data[0:2]), data[20:], wire-20))
	// Raw IP: the IP header first, its length the frame's. The raw
	// link types decode alike: the nearest that fits stands for them.
	v4 := ipv4Fits(data, wire) && int(binary.BigEndian.Uint16(data[2:4])) == wire
	v6 := ipv6Fits(data, wire) && int(binary.BigEndian.Uint16(data[4:6]))+40 == wire
	raw, d := layers.LinkType(0), 17
	for _, c := range []struct {
		lt   layers.LinkType
		fits bool
	}{{layers.LinkTypeRaw, v4 || v6}, {linkTypeRawBSD12, v4 || v6}, {linkTypeRawBSD14, v4 || v6}, {layers.LinkTypeIPv4, v4}, {layers.LinkTypeIPv6, v6}} {
		if n := bits.OnesCount16(uint16(c.lt ^ declared)); c.fits && n < d {
			raw, d = c.lt, n
		}
	}
	try(raw, d < 17)
	return lt, ties == 1
}

// ethernetFits: an Ethernet II header, up to two VLAN tags, and the layer
// its type names (l3Fits).
func ethernetFits(data []byte, wire int) bool {
	et, off, ok := ethernetNetwork(data)
	return ok && l3Fits(et, data[off:], wire-off)
}

// ethernetNetwork reads an Ethernet II header and up to two VLAN tags:
// the type of the layer after them and where it starts.
func ethernetNetwork(data []byte) (et uint16, off int, ok bool) {
	off = 12
	for range 3 {
		if len(data) < off+2 {
			return 0, 0, false
		}
		et = binary.BigEndian.Uint16(data[off : off+2])
		if et != uint16(layers.EthernetTypeDot1Q) && et != uint16(layers.EthernetTypeQinQ) {
			return et, off + 2, true
		}
		off += 4
	}
	return 0, 0, false
}

// l3Fits: data, of wire bytes on the wire, begins with a header of the
// Ethernet type et that SMC runs over (IPv4, IPv6, RoCEv1's GRH) or ARP.
func l3Fits(et uint16, data []byte, wire int) bool {
	switch layers.EthernetType(et) {
	case layers.EthernetTypeIPv4:
		return ipv4Fits(data, wire)
	case layers.EthernetTypeIPv6, decode.EtherTypeRoCEv1:
		return ipv6Fits(data, wire)
	case layers.EthernetTypeARP:
		// Ethernet and IPv4 addresses (RFC 826).
		return len(data) >= 8 && binary.BigEndian.Uint16(data[0:2]) == 1 && binary.BigEndian.Uint16(data[2:4]) == 0x0800 &&
			data[4] == 6 && data[5] == 4
	}
	return false
}

// ipv4Fits: an IPv4 header whose lengths the frame (wire bytes) holds.
func ipv4Fits(data []byte, wire int) bool {
	if len(data) < 20 || data[0]>>4 != 4 {
		return false
	}
	ihl, total := int(data[0]&0x0F)*4, int(binary.BigEndian.Uint16(data[2:4]))
	return ihl >= 20 && total >= ihl && total <= wire
}

// ipv6Fits: an IPv6 header (or a GRH) whose payload the frame holds.
func ipv6Fits(data []byte, wire int) bool {
	return len(data) >= 40 && data[0]>>4 == 6 && int(binary.BigEndian.Uint16(data[4:6]))+40 <= wire
}
