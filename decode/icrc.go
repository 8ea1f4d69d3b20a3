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

// icrcOnes stands in for the LRH and for every masked field. It is never
// written. The masked header is fed to the CRC piece by piece instead of
// being copied into a local buffer, because crc32.Update hands its slice
// to a function variable and would move such a buffer to the heap.
var icrcOnes = [8]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}

// icrcVersionByte[v] is the first byte of a masked IPv6 header or GRH of
// version v; read-only, for the same reason as icrcOnes.
var icrcVersionByte = [16]byte{0x0F, 0x1F, 0x2F, 0x3F, 0x4F, 0x5F, 0x6F, 0x7F,
	0x8F, 0x9F, 0xAF, 0xBF, 0xCF, 0xDF, 0xEF, 0xFF}

// ICRCRoCEv2 checks the ICRC of a RoCEv2 packet. ip starts at the IPv4 or
// IPv6 header; the packet ends where the IP length field says (so trailing
// Ethernet padding is ignored), and its last 4 bytes are the ICRC. It
// returns the computed CRC, and an error wrapping ErrBadICRC when it
// differs from the trailer (or ErrTruncated/ErrBadLength/ErrUnknownType
// when ip does not hold a whole IP/UDP/BTH packet).
func ICRCRoCEv2(ip []byte) (computed uint32, err error) {
	if len(ip) < 1 {
		return 0, truncated("ICRC", "ip", 0, 1, 0)
	}
	crc := crc32.Update(0, crc32.IEEETable, icrcOnes[:])
	var hdr, end int
	switch ip[0] >> 4 {
	case 4:
		hdr = int(ip[0]&0x0F) * 4
		if hdr < 20 {
			return 0, badLength("ICRC", "ihl", 0, "IPv4 header length "+strconv.Itoa(hdr))
		}
		if len(ip) < hdr {
			return 0, truncated("ICRC", "ipv4", 0, hdr, len(ip))
		}
		end = int(binary.BigEndian.Uint16(ip[2:4]))
		if end < hdr {
			return 0, badLength("ICRC", "total_length", 2, "IPv4 total length "+strconv.Itoa(end)+" shorter than header")
		}
		if end > len(ip) {
			return 0, truncated("ICRC", "total_length", 2, end, len(ip))
		}
		crc = crc32.Update(crc, crc32.IEEETable, ip[0:1])
		crc = crc32.Update(crc, crc32.IEEETable, icrcOnes[:1]) // type of service (DSCP+ECN)
		crc = crc32.Update(crc, crc32.IEEETable, ip[2:8])
		crc = crc32.Update(crc, crc32.IEEETable, icrcOnes[:1]) // TTL
		crc = crc32.Update(crc, crc32.IEEETable, ip[9:10])
		crc = crc32.Update(crc, crc32.IEEETable, icrcOnes[:2]) // header checksum
		crc = crc32.Update(crc, crc32.IEEETable, ip[12:hdr])
	case 6:
		hdr = 40
		if len(ip) < hdr {
			return 0, truncated("ICRC", "ipv6", 0, hdr, len(ip))
		}
		end = hdr + int(binary.BigEndian.Uint16(ip[4:6]))
		if end > len(ip) {
			return 0, truncated("ICRC", "payload_length", 4, end, len(ip))
		}
		crc = icrcIPv6(crc, ip[:hdr])
	default:
		return 0, &Error{Layer: "ICRC", Field: "ip version", Offset: 0, Err: ErrUnknownType,
			Detail: "IP version " + strconv.Itoa(int(ip[0]>>4))}
	}
	if end < hdr+8+bthLen+icrcLen {
		return 0, truncated("ICRC", "udp+bth", hdr, hdr+8+bthLen+icrcLen, end)
	}
	crc = crc32.Update(crc, crc32.IEEETable, ip[hdr:hdr+6])
	crc = crc32.Update(crc, crc32.IEEETable, icrcOnes[:2]) // UDP checksum
	return icrcFinish(crc, ip[hdr+8:end], hdr+8)
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
	crc := crc32.Update(0, crc32.IEEETable, icrcOnes[:])
	crc = icrcIPv6(crc, grh[:grhLen])
	return icrcFinish(crc, grh[grhLen:end], grhLen)
}

// icrcIPv6 adds an IPv6 header or GRH with traffic class, flow label and
// hop limit set to ones.
func icrcIPv6(crc uint32, h []byte) uint32 {
	v := h[0] >> 4 // version kept, traffic class high nibble masked
	crc = crc32.Update(crc, crc32.IEEETable, icrcVersionByte[v:v+1])
	crc = crc32.Update(crc, crc32.IEEETable, icrcOnes[:3]) // traffic class low nibble + flow label
	crc = crc32.Update(crc, crc32.IEEETable, h[4:7])
	crc = crc32.Update(crc, crc32.IEEETable, icrcOnes[:1]) // hop limit
	return crc32.Update(crc, crc32.IEEETable, h[8:40])
}

// icrcFinish adds the BTH (with the FECN/BECN/reserved byte masked) and
// the rest of the transport packet, and compares with the trailer. tp
// starts at the BTH, at offset base of the caller's input, and ends with
// the ICRC.
func icrcFinish(crc uint32, tp []byte, base int) (uint32, error) {
	crc = crc32.Update(crc, crc32.IEEETable, tp[:4])
	crc = crc32.Update(crc, crc32.IEEETable, icrcOnes[:1])
	crc = crc32.Update(crc, crc32.IEEETable, tp[5:len(tp)-icrcLen])
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
