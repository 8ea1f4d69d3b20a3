package track

import "net/netip"

// qpKey identifies one direction of a link on the wire. QPNs alone repeat
// (rxe numbers the first QP of every device 0x11), the address pair makes
// the key unique for an observer.
type qpKey struct {
	src, dst netip.Addr
	qpn      uint32
}

// linkRef is what a qpKey resolves to.
type linkRef struct {
	link *Link
	dir  Dir
}

// tcpKey is a TCP 4-tuple in a canonical order, so both directions of a
// connection find the same entry.
type tcpKey struct {
	a, b netip.AddrPort
}

func makeTCPKey(src, dst netip.AddrPort) tcpKey {
	if lessAddrPort(dst, src) {
		src, dst = dst, src
	}
	return tcpKey{src, dst}
}

func lessAddrPort(x, y netip.AddrPort) bool {
	if c := x.Addr().Compare(y.Addr()); c != 0 {
		return c < 0
	}
	return x.Port() < y.Port()
}

// tokenKey finds the connection of a CDC inside its link group: the CDC
// carries the receiver's alert token, so the direction says whose token.
type tokenKey struct {
	dir   Dir
	token uint32
}

// rkeyKey finds the connection an RDMA WRITE writes into: rkeys belong to
// the receiver's RMB on one link (each link has its own rkey for an RMB).
type rkeyKey struct {
	link *Link
	dir  Dir // direction of the WRITE (receiver = its destination)
	rkey uint32
}

// rmbRef is one registered RMB element.
type rmbRef struct {
	conn *Conn
	va   uint64 // start of the RMBE; 0 when learned from traffic alone
	size uint32
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
	src, dst netip.Addr
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
