package decode

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/gopacket/gopacket"
)

// decodeV2Length reads length_v2 (offset 1, 2 bytes). Linux stores it as
// a host-order u16 (struct smc_llc_hdr, length_v2): testdata/reference
// pingpong.pcap frame 14 has `21 2c 00` = 44 and multilink frame 23
// `22 58 00` = 88, little-endian on x86. The byte order is therefore the
// one that gives a value in 44..8192 equal to the message; when neither
// does, the little-endian reading decides between truncated and lying.
func (l *LLC) decodeV2Length(data []byte, df gopacket.DecodeFeedback) error {
	le := binary.LittleEndian.Uint16(data[1:3])
	be := binary.BigEndian.Uint16(data[1:3])
	valid := func(n uint16) bool { return n >= smcMsgLen && n <= llcV2MaxLen }
	switch {
	case valid(le) && int(le) == len(data):
		l.Length = le
	case valid(be) && int(be) == len(data):
		l.Length, l.LengthBigEndian = be, true
	case valid(le) && int(le) > len(data):
		l.Length = le
		df.SetTruncated()
		return Truncated(l.layerName(), "", len(data), int(le), len(data))
	case valid(be) && int(be) > len(data):
		l.Length, l.LengthBigEndian = be, true
		df.SetTruncated()
		return Truncated(l.layerName(), "", len(data), int(be), len(data))
	case valid(le):
		// Shorter than the SEND: keep the message, the rest is payload.
		l.Length = le
	case valid(be):
		l.Length, l.LengthBigEndian = be, true
	default:
		l.Length = le
		return BadLength(l.layerName(), "length", 1, "v2 length 0x"+
			string(appendHexPad(nil, uint64(le), 4))+" (either byte order) not in 44..8192")
	}
	return nil
}

// u16 reads a host-order u16 in the byte order the length used.
func (l *LLC) u16(b []byte) uint16 {
	if l.LengthBigEndian {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

// decodeAddLinkV2Ext reads the part of ADD LINK v2 after byte 44 (Linux
// struct smc_llc_msg_add_link_v2_ext): flags, target GID and the rkey
// triplets of every RMB in use. A v2 reject is 44 bytes and has none.
func (l *LLC) decodeAddLinkV2Ext(msg []byte) error {
	if len(msg) == smcMsgLen {
		return nil
	}
	const extHdr = 72
	if len(msg) < extHdr {
		return BadLength(l.layerName(), "length", 1, "length "+strconv.Itoa(len(msg))+
			": v2 extension needs 72 bytes")
	}
	a := &l.AddLink
	a.V2Ext = true
	a.Direct = msg[44]&0x80 != 0
	a.TargetGID = netip.AddrFrom16([16]byte(msg[46:62]))
	// Host order like length_v2: `01 00` = 1 in pingpong.pcap frame 18.
	a.NumRKeys = l.u16(msg[70:72])
	if need := extHdr + 16*int(a.NumRKeys); need > len(msg) {
		return BadLength(l.layerName(), "rkey_count", 70, strconv.Itoa(int(a.NumRKeys))+
			" rkeys need "+strconv.Itoa(need)+" bytes, message has "+strconv.Itoa(len(msg)))
	}
	for i := range min(int(a.NumRKeys), LLCMaxRKeys) {
		a.RKeys[i] = readTriplet(msg[extHdr+16*i:])
	}
	return nil
}

// decodeRequestAddLink reads REQUEST ADD LINK (Linux struct
// smc_llc_msg_req_add_link_v2): GID count at 24, GIDs from 28.
func (l *LLC) decodeRequestAddLink(msg []byte) error {
	q := &l.RequestAddLink
	q.NumGIDs = msg[24]
	if need := 28 + 16*int(q.NumGIDs); need > len(msg) {
		return BadLength(l.layerName(), "gid_cnt", 24, strconv.Itoa(int(q.NumGIDs))+
			" GIDs need "+strconv.Itoa(need)+" bytes, message has "+strconv.Itoa(len(msg)))
	}
	for i := range min(int(q.NumGIDs), LLCMaxGIDs) {
		q.GIDs[i] = netip.AddrFrom16([16]byte(msg[28+16*i : 44+16*i]))
	}
	return nil
}
