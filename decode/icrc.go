package decode

import (
	"encoding/binary"
	"hash/crc32"
	"strconv"
)

// The ICRC (IBTA vol. 1 §7.8.1 and annex A17) is a
// CRC-32 (IEEE 802.3, the zlib crc32) over the packet from the network
// header to the end of the transport payload, with every field a router
// may change masked to all ones, preceded by 8 bytes of ones standing for
// the InfiniBand LRH. It is transmitted least-significant byte first, so
// the trailer read little-endian equals the CRC. Checked against every
// RoCE packet of testdata/reference and testdata/public (RoCEv2), and once
// by hand against 2,791 RoCEv1 packets of Mellanox ConnectX captures in
// the project's reference corpus (magnate3/linux-riscv-dev rocev1*.pcap),
// which carry no licence and so are not in testdata.

// Where the CPU has AVX-512 with its carry-less multiply, a RoCEv2 packet
// over IPv4 without options, the commonest, is read in place: the fields a
// router may change are masked in registers (icrcDirectZ). Other packets
// have their masked headers copied into a scratch buffer owned by an ICRC
// value and the CRC is computed over it and the rest of the packet in one
// pass: fed piece by piece (a dozen small updates per packet) it cost more
// than the rest of decoding a RoCE frame. The buffer cannot live on the
// stack, since crc32.Update hands its slice to a function variable, which
// moves it to the heap.
//
// The carry-less multiply (foldSum, or crc32's) takes runs of 16 bytes, so
// the message is stretched to a multiple of 16 (crc32's: of at least 64
// bytes) with zero bytes in front, which do not change a CRC whose
// register is zero. The register is zero after the first four bytes of
// the LRH stand-in (ones, against crc32's all-ones initial register), so
// the CRC starts there from a zero register (crc32.Update with ^0) with
// the zeros before the remaining four bytes of ones.

// icrcScratch holds the zero run, the rest of the LRH stand-in, the
// masked headers (up to a 60-byte IPv4 header, UDP and BTH) and the rest
// of any packet of common size; icrcZeros is the zero run's room, never
// written.
const (
	icrcZeros   = 64
	icrcScratch = icrcZeros + 512
)

// ICRC computes the invariant CRC of RoCE packets. The zero value is ready
// to use; it is not safe for concurrent use.
type ICRC struct {
	buf [icrcScratch]byte
}

// start returns the scratch buffer after the zero run, holding the last
// four bytes of the LRH stand-in.
func (c *ICRC) start() []byte {
	return append(c.buf[icrcZeros:icrcZeros], 0xFF, 0xFF, 0xFF, 0xFF)
}

// sum returns the CRC of the message in b (which start began), counting
// the four bytes of ones before it.
func (c *ICRC) sum(b []byte) uint32 {
	n := len(b)
	if haveFold {
		pad := -n & 15
		return foldSum(c.buf[icrcZeros-pad:icrcZeros+n], nil)
	}
	pad := max(64, (n+15)&^15) - n
	return crc32.Update(^uint32(0), crc32.IEEETable, c.buf[icrcZeros-pad:icrcZeros+n])
}

// ICRCRoCEv2 checks the ICRC of a RoCEv2 packet. ip starts at the IPv4 or
// IPv6 header; the packet ends where the IP length field says (so trailing
// Ethernet padding is ignored), and its last 4 bytes are the ICRC. It
// returns the computed CRC, and an error wrapping ErrBadICRC when it
// differs from the trailer (or ErrTruncated/ErrBadLength/ErrUnknownType
// when ip does not hold a whole IP/UDP/BTH packet). It allocates its
// scratch buffer; checking many packets, keep an ICRC and call RoCEv2.
func ICRCRoCEv2(ip []byte) (computed uint32, err error) { return new(ICRC).RoCEv2(ip) }

// ICRCRoCEv1 checks the ICRC of a RoCEv1 packet; grh starts at the GRH
// and the packet ends where GRH PayLen says, its last 4 bytes being the
// ICRC. Results as for ICRCRoCEv2.
func ICRCRoCEv1(grh []byte) (uint32, error) { return new(ICRC).RoCEv1(grh) }

// RoCEv2 is ICRCRoCEv2 without allocating.
func (c *ICRC) RoCEv2(ip []byte) (computed uint32, err error) {
	// The commonest packet, IPv4 without options: read in place where
	// the CPU can (directSum; directSumX without AVX-512, for the short
	// packets its fold is the quicker for: a copy masked by narrow stores
	// and read back by wide loads stalls), else, short enough for the
	// scratch buffer, in one copy: the same message as below, masked in
	// place (its few appends were a third of the check's time).
	const v4 = 20 + 8 + bthLen + icrcLen // the shortest: IPv4, UDP, BTH, ICRC
	if len(ip) >= v4 && ip[0] == 0x45 {
		if end := int(binary.BigEndian.Uint16(ip[2:4])); end >= v4 && end <= len(ip) {
			crc, ok := uint32(0), false
			switch {
			case haveDirectZ && end-icrcLen <= 16*foldMax-20:
				crc, ok = directSum(ip[:end-icrcLen])
			case haveFold && end-icrcLen <= directXMax:
				crc, ok = directSumX(ip[:end-icrcLen])
			}
			if !ok && 4+end-icrcLen <= icrcScratch-icrcZeros {
				b := c.buf[icrcZeros : icrcZeros+4+end-icrcLen]
				b[0], b[1], b[2], b[3] = 0xFF, 0xFF, 0xFF, 0xFF // the rest of the LRH stand-in
				copy(b[4:], ip[:end-icrcLen])
				b[4+1] = 0xFF                 // type of service (DSCP+ECN)
				b[4+8] = 0xFF                 // TTL
				b[4+10], b[4+11] = 0xFF, 0xFF // header checksum
				b[4+26], b[4+27] = 0xFF, 0xFF // UDP checksum
				b[4+28+4] = 0xFF              // BTH FECN, BECN and reserved bits
				crc, ok = c.sum(b), true
			}
			if ok {
				if got := binary.LittleEndian.Uint32(ip[end-icrcLen : end]); got != crc {
					return crc, icrcMismatch(got, crc, end-icrcLen)
				}
				return crc, nil
			}
		}
	}
	if len(ip) < 1 {
		return 0, Truncated("ICRC", "ip", 0, 1, 0)
	}
	b := c.start()
	var hdr, end int
	switch ip[0] >> 4 {
	case 4:
		hdr = int(ip[0]&0x0F) * 4
		if hdr < 20 {
			return 0, BadLength("ICRC", "ihl", 0, "IPv4 header length "+strconv.Itoa(hdr))
		}
		if len(ip) < hdr {
			return 0, Truncated("ICRC", "ipv4", 0, hdr, len(ip))
		}
		end = int(binary.BigEndian.Uint16(ip[2:4]))
		if end < hdr {
			return 0, BadLength("ICRC", "total_length", 2, "IPv4 total length "+strconv.Itoa(end)+" shorter than header")
		}
		if end > len(ip) {
			return 0, Truncated("ICRC", "total_length", 2, end, len(ip))
		}
		b = append(b, ip[:hdr]...)
		b[4+1] = 0xFF                 // type of service (DSCP+ECN)
		b[4+8] = 0xFF                 // TTL
		b[4+10], b[4+11] = 0xFF, 0xFF // header checksum
	case 6:
		hdr = 40
		if len(ip) < hdr {
			return 0, Truncated("ICRC", "ipv6", 0, hdr, len(ip))
		}
		end = hdr + int(binary.BigEndian.Uint16(ip[4:6]))
		if end > len(ip) {
			return 0, Truncated("ICRC", "payload_length", 4, end, len(ip))
		}
		b = appendMaskedIPv6(b, ip[:hdr])
	default:
		return 0, &Error{Layer: "ICRC", Field: "ip version", Offset: 0, Err: ErrUnknownType,
			Detail: "IP version " + strconv.Itoa(int(ip[0]>>4))}
	}
	if end < hdr+8+bthLen+icrcLen {
		return 0, Truncated("ICRC", "udp+bth", hdr, hdr+8+bthLen+icrcLen, end)
	}
	b = append(b, ip[hdr:hdr+8]...)
	b[len(b)-2], b[len(b)-1] = 0xFF, 0xFF // UDP checksum
	return c.finish(b, ip[hdr+8:end], hdr+8)
}

// RoCEv1 is ICRCRoCEv1 without allocating.
func (c *ICRC) RoCEv1(grh []byte) (uint32, error) {
	if len(grh) < grhLen {
		return 0, Truncated("ICRC", "grh", 0, grhLen, len(grh))
	}
	end := grhLen + int(binary.BigEndian.Uint16(grh[4:6]))
	if end > len(grh) {
		return 0, Truncated("ICRC", "paylen", 4, end, len(grh))
	}
	if end < grhLen+bthLen+icrcLen {
		return 0, Truncated("ICRC", "bth", grhLen, grhLen+bthLen+icrcLen, end)
	}
	b := appendMaskedIPv6(c.start(), grh[:grhLen])
	return c.finish(b, grh[grhLen:end], grhLen)
}

// appendMaskedIPv6 appends an IPv6 header or GRH with traffic class, flow
// label and hop limit set to ones (the version is kept).
func appendMaskedIPv6(b, h []byte) []byte {
	n := len(b)
	b = append(b, h[:40]...)
	b[n] |= 0x0F                              // traffic class high nibble
	b[n+1], b[n+2], b[n+3] = 0xFF, 0xFF, 0xFF // traffic class low nibble + flow label
	b[n+7] = 0xFF                             // hop limit
	return b
}

// finish adds the BTH (with the FECN/BECN/reserved byte masked) and the
// rest of the transport packet to the masked headers in b (the scratch
// buffer), and compares with the trailer. tp starts at the BTH, at offset
// base of the caller's input, and ends with the ICRC.
func (c *ICRC) finish(b, tp []byte, base int) (uint32, error) {
	body := tp[:len(tp)-icrcLen]
	n := len(b)
	var crc uint32
	if n+len(body) <= cap(b) {
		b = append(b, body...)
		b[n+4] = 0xFF
		crc = c.sum(b)
	} else {
		// Copied: the BTH and as many bytes after it as leave the rest
		// of the packet a multiple of 16 bytes long, which the carry-less
		// multiply then takes in place (crc32's byte tables would take a
		// remainder, at a tenth of the speed).
		k := bthLen + (len(body)-bthLen)%16
		b = append(b, body[:k]...)
		b[n+4] = 0xFF
		// Only AVX-512's fold beats crc32 over a long body: SSE's, a
		// chunk a multiply, is twice as slow there (BenchmarkICRCSum).
		if pad := -len(b) & 15; haveFoldZ && (pad+len(b)+len(body)-k)/16 <= foldMax {
			crc = foldSum(c.buf[icrcZeros-pad:icrcZeros+len(b)], body[k:])
		} else {
			crc = crc32.Update(c.sum(b), crc32.IEEETable, body[k:])
		}
	}
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
var FieldICRCOK = Field(OwnerICRCCheck, "roce.icrc.ok", KindBool, "ICRC verified")
