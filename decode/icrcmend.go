package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// A CRC is linear: a packet whose bytes changed after its ICRC was made
// fails it by a difference (the frame's ICRC xor the one computed) that
// depends on the change alone, not on the packet. One byte changed at one
// place gives a difference that CRC-32 ties to that place and value: the
// difference walked back over the bytes after it (the register's step over
// a zero byte, which CRC-32's odd polynomial makes invertible) is the
// table's entry for the change. So where one byte's change explains the
// difference, and only one does, the damaged byte and the value it was
// sent with are known, and every other byte of the packet is the
// sender's. A change of more bytes passes for one byte's by chance only:
// one in 2^32 / (255 × the packet's length) of those so damaged, which is
// one in 2^24 / length. That is rare enough for the short packets SMC
// sends as SENDs and ACKs (up to mendAnyByte bytes: one in 65,000 or
// fewer); a longer one (a WRITE of the application's bytes) is mended
// only where one bit explains it, one in 2^29 / length (a 4 KiB WRITE:
// one in 131,000).

// ICRCMend is one byte of a RoCE packet that explains its ICRC failing:
// the packet as sent had Sent at offset Off (from the start of the IP
// header), where the frame holds Held.
type ICRCMend struct {
	Off        int
	Held, Sent byte
}

// mendAnyByte is the longest packet (IP header to ICRC) whose damage is
// mended where any one byte's change explains it; a longer one is mended
// where one bit's does.
const mendAnyByte = 256

// icrcTop maps the top byte of each IEEE table entry back to its index:
// the top bytes of the 256 entries are all different.
var icrcTop = func() (top [256]byte) {
	for i, v := range crc32.IEEETable {
		top[v>>24] = byte(i)
	}
	return top
}()

// MendICRCRoCEv2 finds the one byte whose change explains why the RoCEv2
// packet at ip (an IPv4 or IPv6 header on) carries ICRC got where its
// bytes give want (as ICRC.RoCEv2 computed them). It reports false where
// no one byte, or more than one, explains it (in a packet longer than
// mendAnyByte: no one bit), and where the packet's length fields do not
// hold. A byte of the ICRC itself counts: the packet
// was then sent as the capture holds it but for its trailer.
func MendICRCRoCEv2(ip []byte, got, want uint32) (ICRCMend, bool) {
	if len(ip) < 1 || got == want {
		return ICRCMend{}, false
	}
	var hdr, end int
	switch ip[0] >> 4 {
	case 4:
		if len(ip) < 20 {
			return ICRCMend{}, false
		}
		hdr, end = int(ip[0]&0x0F)*4, int(binary.BigEndian.Uint16(ip[2:4]))
	case 6:
		if len(ip) < 40 {
			return ICRCMend{}, false
		}
		hdr, end = 40, 40+int(binary.BigEndian.Uint16(ip[4:6]))
	default:
		return ICRCMend{}, false
	}
	if hdr < 20 || end > len(ip) || end < hdr+8+bthLen+icrcLen {
		return ICRCMend{}, false
	}
	diff := got ^ want
	var (
		m ICRCMend
		n int
	)
	// fits reports whether a change by x is one this packet is mended for.
	long := end > mendAnyByte
	fits := func(x byte) bool { return !long || x&(x-1) == 0 }
	// The trailer: the frame's ICRC read little-endian, a byte of it
	// changed is a difference in that byte's eight bits alone.
	for k := range 4 {
		if diff&^(0xFF<<(8*k)) == 0 && fits(byte(diff>>(8*k))) {
			off := end - icrcLen + k
			m, n = ICRCMend{Off: off, Held: ip[off], Sent: ip[off] ^ byte(diff>>(8*k))}, n+1
		}
	}
	// The bytes the ICRC covers, from the last: s is the difference a
	// change of the byte at off would have to make in the register.
	s := diff
	for off := end - icrcLen - 1; off >= 0; off-- {
		if v := icrcTop[s>>24]; crc32.IEEETable[v] == s && fits(v) && !icrcVariant(ip, hdr, off) {
			m, n = ICRCMend{Off: off, Held: ip[off], Sent: ip[off] ^ v}, n+1
		}
		i := icrcTop[s>>24]
		s = (s^crc32.IEEETable[i])<<8 | uint32(i)
	}
	return m, n == 1
}

// icrcVariant reports whether byte off of the packet at ip (IP header
// hdr bytes long) is one the ICRC leaves out (masked to ones, as
// ICRC.RoCEv2 does) or one that sets the packet's length: a change there
// cannot be what made it fail.
func icrcVariant(ip []byte, hdr, off int) bool {
	if ip[0]>>4 == 4 {
		switch off {
		case 1, 2, 3, 8, 10, 11:
			return true
		}
	} else if off < 8 {
		// Traffic class, flow label, payload length, hop limit; the
		// version and next header are the packet's kind.
		return off != 6
	}
	switch off - hdr {
	case 6, 7: // UDP checksum (its length is not the ICRC's framing: the IP length is)
		return true
	case 8 + 4: // BTH FECN, BECN and reserved bits
		return true
	}
	return false
}

// ICRCKey is what places a RoCE request on its queue pair: the IP
// addresses (4 or 16 bytes, as the packet carries them), the BTH DestQP
// and PSN.
type ICRCKey struct {
	Src, Dst []byte
	QPN, PSN uint32
}

// MendICRCRoCEv2As tells whether the RoCEv2 packet at ip was sent with
// the addresses, DestQP and PSN of k in place of those it holds: the
// damage hit them, in any number of bytes, where the
// ICRC verifies with k's (exact), or verifies with k's and one byte more
// changed (m, found as MendICRCRoCEv2 finds it, outside k's fields). A
// caller asks it of the few keys the packet can have had (its queue
// pair's, the PSN its responder expects), which a damage that passes
// for them matches by chance once in 2^32 (exact), as one byte does
// otherwise. It reports false where k is what the packet holds (nothing
// to test), and where the packet's lengths do not hold.
func MendICRCRoCEv2As(ip []byte, k ICRCKey) (m ICRCMend, exact, ok bool) {
	var hdr, src, end int
	switch {
	case len(ip) >= 20 && ip[0]>>4 == 4 && len(k.Src) == 4 && len(k.Dst) == 4:
		hdr, src, end = int(ip[0]&0x0F)*4, 12, int(binary.BigEndian.Uint16(ip[2:4]))
	case len(ip) >= 40 && ip[0]>>4 == 6 && len(k.Src) == 16 && len(k.Dst) == 16:
		hdr, src, end = 40, 8, 40+int(binary.BigEndian.Uint16(ip[4:6]))
	default:
		return ICRCMend{}, false, false
	}
	n := len(k.Src)
	bth := hdr + 8
	if hdr < 20 || end > len(ip) || end < bth+bthLen+icrcLen {
		return ICRCMend{}, false, false
	}
	p := bytes.Clone(ip[:end])
	copy(p[src:], k.Src)
	copy(p[src+n:], k.Dst)
	p[bth+5], p[bth+6], p[bth+7] = byte(k.QPN>>16), byte(k.QPN>>8), byte(k.QPN)
	p[bth+9], p[bth+10], p[bth+11] = byte(k.PSN>>16), byte(k.PSN>>8), byte(k.PSN)
	if bytes.Equal(p, ip[:end]) {
		return ICRCMend{}, false, false
	}
	return sentAs(ip, p, func(off int) bool {
		return !(off >= src && off < src+2*n || off >= bth+5 && off <= bth+11 && off != bth+8)
	})
}

// sentAs tells whether p, the packet at ip (its ICRC at p's end) with some
// of its bytes changed as a caller supposes they were sent, verifies its
// ICRC (exact), or does with one byte more changed, found as
// MendICRCRoCEv2 finds one, at an offset outside (m, its Held the
// frame's byte).
func sentAs(ip, p []byte, outside func(off int) bool) (m ICRCMend, exact, ok bool) {
	want, err := new(ICRC).RoCEv2(p)
	switch {
	case err == nil:
		return ICRCMend{}, true, true
	case !errors.Is(err, ErrBadICRC):
		return ICRCMend{}, false, false
	}
	m, ok = MendICRCRoCEv2(p, binary.LittleEndian.Uint32(p[len(p)-icrcLen:]), want)
	if !ok || !outside(m.Off) {
		return ICRCMend{}, false, false
	}
	m.Held = ip[m.Off]
	return m, false, true
}

// MendICRCRoCEv2Zeroed tells whether the RoCEv2 packet at ip (an IPv4 or
// IPv6 header on) was sent with the bytes of the ranges zero (offsets in
// ip, each from its first to before its second) zero, where the capture's
// copy holds some of them otherwise: fields its sender fills with zeros.
// exact: its ICRC verifies with them zeroed (any number of them damaged;
// a damage elsewhere passes for it once in 2^32); else m: it verifies with
// them zeroed and one byte more changed, found as MendICRCRoCEv2 finds
// one, outside those fields (m.Held is the frame's byte). It reports false
// where none of those bytes is nonzero, where neither verifies, and where
// the packet's lengths do not hold.
func MendICRCRoCEv2Zeroed(ip []byte, zero [][2]int) (m ICRCMend, exact, ok bool) {
	var hdr, end int
	switch {
	case len(ip) >= 20 && ip[0]>>4 == 4:
		hdr, end = int(ip[0]&0x0F)*4, int(binary.BigEndian.Uint16(ip[2:4]))
	case len(ip) >= 40 && ip[0]>>4 == 6:
		hdr, end = 40, 40+int(binary.BigEndian.Uint16(ip[4:6]))
	default:
		return ICRCMend{}, false, false
	}
	if hdr < 20 || end > len(ip) || end < hdr+8+bthLen+icrcLen {
		return ICRCMend{}, false, false
	}
	var p []byte
	zeroed := func(off int) bool {
		for _, z := range zero {
			if off >= max(z[0], hdr+8+bthLen) && off < min(z[1], end-icrcLen) {
				return true
			}
		}
		return false
	}
	for i := hdr + 8 + bthLen; i < end-icrcLen; i++ {
		if ip[i] != 0 && zeroed(i) {
			if p == nil {
				p = bytes.Clone(ip[:end])
			}
			p[i] = 0
		}
	}
	if p == nil {
		return ICRCMend{}, false, false
	}
	return sentAs(ip, p, func(off int) bool { return !zeroed(off) })
}
