package decode

import (
	"encoding/binary"
	"hash/crc32"
	"strconv"
)

// The ICRC (smc-wire-format §5.5; IBTA vol. 1 §7.8.1 and annex A17) is a
// CRC-32 (IEEE 802.3, the zlib crc32) over the packet from the network
// header to the end of the transport payload, with every field a router
// may change masked to all ones, preceded by 8 bytes of ones standing for
// the InfiniBand LRH. It is transmitted least-significant byte first, so
// the trailer read little-endian equals the CRC. Checked against every
// RoCE packet of testdata/reference and testdata/public.

// icrcMaxHdr bounds the masked copy: LRH stand-in 8 + IPv4 with options 60
// (IPv6 and GRH 40) + UDP 8 + BTH 12.
const icrcMaxHdr = 8 + 60 + 8 + bthLen

// ICRCRoCEv2 checks the ICRC of a RoCEv2 packet. ip starts at the IPv4 or
// IPv6 header; the packet ends where the IP length field says (so trailing
// Ethernet padding is ignored), and its last 4 bytes are the ICRC. It
// returns the computed CRC, and an error wrapping ErrBadICRC when it
// differs from the trailer (or ErrTruncated/ErrBadLength when ip does not
// hold a whole UDP+BTH packet).
func ICRCRoCEv2(ip []byte) (computed uint32, err error) {
	if len(ip) < 1 {
		return 0, truncated("ICRC", "ip", 0, 1, 0)
	}
	var buf [icrcMaxHdr]byte
	for i := range 8 {
		buf[i] = 0xFF
	}
	n := 8
	var end int
	switch ip[0] >> 4 {
	case 4:
		ihl := int(ip[0]&0x0F) * 4
		if ihl < 20 {
			return 0, badLength("ICRC", "ihl", 0, "IPv4 header length "+strconv.Itoa(ihl))
		}
		if len(ip) < ihl {
			return 0, truncated("ICRC", "ipv4", 0, ihl, len(ip))
		}
		end = int(binary.BigEndian.Uint16(ip[2:4]))
		if end < ihl {
			return 0, badLength("ICRC", "total_length", 2, "IPv4 total length "+strconv.Itoa(end)+" shorter than header")
		}
		copy(buf[n:], ip[:ihl])
		buf[n+1] = 0xFF                   // type of service (DSCP+ECN)
		buf[n+8] = 0xFF                   // TTL
		buf[n+10], buf[n+11] = 0xFF, 0xFF // header checksum
		n += ihl
	case 6:
		if len(ip) < 40 {
			return 0, truncated("ICRC", "ipv6", 0, 40, len(ip))
		}
		end = 40 + int(binary.BigEndian.Uint16(ip[4:6]))
		copy(buf[n:], ip[:40])
		maskIPv6Variant(buf[n:])
		n += 40
	default:
		return 0, &Error{Layer: "ICRC", Field: "ip version", Offset: 0, Err: ErrUnknownType,
			Detail: "IP version " + strconv.Itoa(int(ip[0]>>4))}
	}
	hdr := n - 8 // IP header length
	if end > len(ip) {
		return 0, truncated("ICRC", "ip length", 0, end, len(ip))
	}
	if end < hdr+8+bthLen+icrcLen {
		return 0, truncated("ICRC", "udp+bth", hdr, hdr+8+bthLen+icrcLen, end)
	}
	copy(buf[n:], ip[hdr:hdr+8])
	buf[n+6], buf[n+7] = 0xFF, 0xFF // UDP checksum
	n += 8
	return icrcFinish(&buf, n, ip[hdr+8:end], hdr+8)
}

// ICRCRoCEv1 checks the ICRC of a RoCEv1 packet; grh starts at the GRH
// and the packet ends where GRH PayLen says, its last 4 bytes being the
// ICRC. Results as for ICRCRoCEv2.
func ICRCRoCEv1(grh []byte) (uint32, error) {
	if len(grh) < grhLen {
		return 0, truncated("ICRC", "grh", 0, grhLen, len(grh))
	}
	end := grhLen + int(binary.BigEndian.Uint16(grh[4:6]))
	if end > len(grh) {
		return 0, truncated("ICRC", "paylen", 4, end, len(grh))
	}
	if end < grhLen+bthLen+icrcLen {
		return 0, truncated("ICRC", "bth", grhLen, grhLen+bthLen+icrcLen, end)
	}
	var buf [icrcMaxHdr]byte
	for i := range 8 {
		buf[i] = 0xFF
	}
	copy(buf[8:], grh[:grhLen])
	maskIPv6Variant(buf[8:])
	return icrcFinish(&buf, 8+grhLen, grh[grhLen:end], grhLen)
}

// maskIPv6Variant sets traffic class, flow label and hop limit of an IPv6
// header or GRH to ones.
func maskIPv6Variant(h []byte) {
	h[0] |= 0x0F
	h[1], h[2], h[3] = 0xFF, 0xFF, 0xFF
	h[7] = 0xFF
}

// icrcFinish adds the BTH (with FECN/BECN/reserved byte masked), the rest
// of the transport packet, and compares with the trailer. tp starts at the
// BTH, at offset base of the caller's input, and ends with the ICRC.
func icrcFinish(buf *[icrcMaxHdr]byte, n int, tp []byte, base int) (uint32, error) {
	copy(buf[n:], tp[:bthLen])
	buf[n+4] = 0xFF
	n += bthLen
	crc := crc32.Update(0, crc32.IEEETable, buf[:n])
	body := tp[bthLen : len(tp)-icrcLen]
	crc = crc32.Update(crc, crc32.IEEETable, body)
	if got := binary.LittleEndian.Uint32(tp[len(tp)-icrcLen:]); got != crc {
		return crc, icrcMismatch(got, crc, base+len(tp)-icrcLen)
	}
	return crc, nil
}

func icrcMismatch(got, want uint32, off int) error {
	return &Error{Layer: "ICRC", Field: "icrc", Offset: off, Err: ErrBadICRC,
		Detail: "trailer 0x" + string(appendHexPad(nil, uint64(got), 8)) +
			", computed 0x" + string(appendHexPad(nil, uint64(want), 8))}
}

// AppendICRCField records the verdict of ICRCRoCEv2/ICRCRoCEv1 as
// roce.icrc.ok.
func AppendICRCField(r *Record, ok bool) { r.AddBool(FieldICRCOK, ok) }

// FieldICRCOK is roce.icrc.ok: 1 when the ICRC verified, 0 when it did not;
// absent when nobody checked.
var FieldICRCOK = Field("roce.icrc.ok", KindBool, "ICRC verified")
