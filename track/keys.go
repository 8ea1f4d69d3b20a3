package track

import (
	"encoding/binary"
	"net/netip"
)

// addr is an IP address or GID as the tracker's keys hold it: its 16
// bytes (IPv4 v4-mapped, so an IPv4 packet and the v4-mapped GID of
// SMC-Rv2 name the same host) as two words. Unlike netip.Addr it holds no
// pointer, so keys built of it are hashed and compared as plain memory,
// once per frame.
type addr struct{ hi, lo uint64 }

func addrOf(a netip.Addr) addr {
	b := a.As16()
	return addr{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// addrOfIP reads an address from a packet's 4 or 16 bytes.
func addrOfIP(ip []byte) addr {
	switch len(ip) {
	case 4:
		return addr{0, 0xffff<<32 | uint64(binary.BigEndian.Uint32(ip))}
	case 16:
		return addr{binary.BigEndian.Uint64(ip[:8]), binary.BigEndian.Uint64(ip[8:])}
	}
	return addr{}
}

// wellFormed reports whether a is an address a RoCE device's GID gives
// (wellFormedGID): IPv4, or IPv6 outside the reserved ::/8 and not
// multicast.
func (a addr) wellFormed() bool {
	if a.hi == 0 && a.lo>>32 == 0xffff {
		return true
	}
	b := byte(a.hi >> 56)
	return b != 0 && b != 0xff
}

// nearly reports whether a and b differ in at most one byte.
func (a addr) nearly(b addr) bool {
	n := 0
	for _, x := range [2]uint64{a.hi ^ b.hi, a.lo ^ b.lo} {
		for ; x != 0; x >>= 8 {
			if x&0xff != 0 {
				n++
			}
		}
	}
	return n <= 1
}

// netip returns a as netip.Addr, IPv4 unmapped.
func (a addr) netip() netip.Addr {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], a.hi)
	binary.BigEndian.PutUint64(b[8:], a.lo)
	return netip.AddrFrom16(b).Unmap()
}

// qpKey identifies one direction of a link on the wire. QPNs alone repeat
// (rxe numbers the first QP of every device 0x11), the address pair makes
// the key unique for an observer.
type qpKey struct {
	src, dst addr
	qpn      uint64 // a BTH DestQP (24 bits); 64 so that the key has no padding
}

// eq is k == o word by word, most telling first: == on the struct calls
// memequal, once per cached key per frame.
func (k *qpKey) eq(o *qpKey) bool {
	return k.qpn == o.qpn && k.src.lo == o.src.lo && k.dst.lo == o.dst.lo && k.src.hi == o.src.hi && k.dst.hi == o.dst.hi
}

func makeQPKey(src, dst netip.Addr, qpn uint32) qpKey {
	return qpKey{addrOf(src), addrOf(dst), uint64(qpn)}
}

// linkRef is what a qpKey resolves to.
type linkRef struct {
	link *Link
	dir  Dir
}

// tcpKey is a TCP 4-tuple in a canonical order, so both directions of a
// connection find the same entry; like qpKey, plain memory.
type tcpKey struct {
	a, b  addr
	ports uint64 // a's port << 16 | b's port
}

func makeTCPKey(src, dst netip.AddrPort) tcpKey {
	a, b := addrOf(src.Addr()), addrOf(dst.Addr())
	pa, pb := src.Port(), dst.Port()
	if b.hi < a.hi || b.hi == a.hi && (b.lo < a.lo || b.lo == a.lo && pb < pa) {
		a, b, pa, pb = b, a, pb, pa
	}
	return tcpKey{a, b, uint64(pa)<<16 | uint64(pb)}
}

// rkeyKey names an rkey of a link and direction in announcements that
// wait for their connection (LinkGroup.pendingRKeys). Its fields fill it
// without padding, so that it hashes as plain memory.
type rkeyKey struct {
	link *Link
	rkey uint32
	dir  uint32 // a Dir: of the WRITE (receiver = its destination)
}

func rkKey(l *Link, d Dir, rkey uint32) rkeyKey { return rkeyKey{l, rkey, uint32(d)} }

// setRKey records the RMB element that WRITEs in direction d with this
// rkey write into.
func (l *Link) setRKey(d Dir, rkey uint32, r rmbRef) {
	if l.rkeys[d] == nil {
		l.rkeys[d] = map[uint32]rmbRef{}
	}
	l.rkeys[d][rkey] = r
}

// rmbRef is one registered RMB element.
type rmbRef struct {
	conn *Conn
	va   uint64 // start of the RMBE; 0 when learned from traffic alone
	size uint32
}

// pendingRKey is what a CONFIRM_RKEY said of an RMB before the CLC message
// of its connection: its VA on the link it was sent on, its rkeys and VAs
// on the group's other links.
type pendingRKey struct {
	va     uint64
	others []rkeyOther
}

// rkeyOther is an rkey/VA of an RMB on another link of the group, as
// carried by CONFIRM_RKEY.
type rkeyOther struct {
	linkID uint8
	rkey   uint32
	va     uint64
}

// addrPair orders an inferred link's known direction (src, dst).
type addrPair struct {
	src, dst addr
}

// gidAddr turns a GID into the address the RoCE packets of that link carry:
// SMC-Rv2 GIDs are IPv4-mapped and the packets are IPv4; RoCEv1 packets
// carry the GID itself in the GRH.
func gidAddr(gid netip.Addr) netip.Addr {
	if gid.Is4In6() {
		return gid.Unmap()
	}
	return gid
}
