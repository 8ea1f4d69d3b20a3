package mutate

import (
	"encoding/binary"
	"slices"

	"github.com/gopacket/gopacket"
)

// Carry wraps an Ethernet frame as a mirror session or an overlay
// delivers it to a collector, from 192.168.1.1 to 192.168.1.2 over IPv4:
// "erspan1", "erspan2" or "erspan3" (ERSPAN type I, II or III, session 5
// or 6; seq the GRE sequence number), "gre" (transparent Ethernet
// bridging, key 9), "vxlan" (VNI 77) or "geneve" (VNI 88). truncated sets
// ERSPAN's T bit: the switch cut the frame. Another kind gives nil.
func Carry(kind string, frame []byte, seq uint32, truncated bool) []byte {
	be := binary.BigEndian
	var t byte
	if truncated {
		t = 0x04
	}
	var proto byte = 47 // GRE
	var hdr []byte
	switch kind {
	case "vxlan":
		proto, hdr = 17, []byte{0, 0, 0x12, 0xb5, 0, 0, 0, 0, 0x08, 0, 0, 0, 0, 0, 77, 0} // UDP to 4789, VNI 77
	case "geneve":
		proto, hdr = 17, []byte{0, 0, 0x17, 0xc1, 0, 0, 0, 0, 0, 0, 0x65, 0x58, 0, 0, 88, 0} // UDP to 6081, VNI 88
	case "erspan1":
		hdr = []byte{0, 0, 0x88, 0xbe}
	case "erspan2":
		hdr = be.AppendUint32([]byte{0x10, 0, 0x88, 0xbe}, seq)
		hdr = append(hdr, 0x10, 100, t, 5, 0, 0, 0, 0)
	case "erspan3":
		hdr = be.AppendUint32([]byte{0x10, 0, 0x22, 0xeb}, seq)
		hdr = append(hdr, 0x20, 100, t, 6, 0, 0, 0x30, 0x39, 0, 0, 0, 0)
	case "gre":
		hdr = []byte{0x20, 0, 0x65, 0x58, 0, 0, 0, 9}
	default:
		return nil
	}
	payload := append(hdr, frame...)
	if proto == 17 {
		be.PutUint16(payload[4:], uint16(len(payload)))
	}
	ip := []byte{0x45, 0, 0, 0, 0, 7, 0x40, 0, 64, proto, 0, 0, 192, 168, 1, 1, 192, 168, 1, 2}
	be.PutUint16(ip[2:], uint16(20+len(payload)))
	// The header checksum, as the mirroring switch fills it (RFC 1071;
	// gopacket's sum, as decode.IPv4HeaderSum's, which mutate cannot
	// import: decode's tests import mutate).
	be.PutUint16(ip[10:], gopacket.FoldChecksum(gopacket.ComputeChecksum(ip, 0)))
	eth := []byte{2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00}
	return slices.Concat(eth, ip, payload)
}
