package track

import (
	"slices"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
)

// unreadFrame is a frame the capture holds damaged past reading: no
// connection or link can be told from it (unreadable), or a RoCE packet
// whose ICRC fails whose key no link has (its finding, id, raised on
// the capture). When a peer's acknowledgement then covers TCP bytes or
// request PSNs the capture shows nowhere else, such frames in their
// place whose lengths fit them are those, damaged in the capture's copy
// (unreadTCP, unreadRoCE): not missed, and not the network's loss.
type unreadFrame struct {
	number int
	ns     int64
	wire   int       // its length on the wire (capture.Frame.CI.Length)
	id     expert.ID // a RoCE packet's finding (BadICRC, BadIPSum, BadLength), None for the others
	taken  bool
	// addrs: an IPv4 header that verifies names its ends, src and dst:
	// it holds no other hosts' bytes.
	addrs    bool
	src, dst addr
	// mac: its Ethernet destination (hasMAC), which the damage spared
	// as likely as not.
	mac    [6]byte
	hasMAC bool
	// bth: a datagram to RoCEv2's port whose BTH is past reading names
	// qpn and psn where its DestQP and PSN sit (heldDamaged).
	bth      bool
	qpn, psn uint32
}

// from reports whether u may hold a packet sent from src to dst.
func (u *unreadFrame) from(src, dst addr) bool {
	return !u.addrs || u.src == src && u.dst == dst
}

// maxUnread bounds the unreadable frames kept: those before a
// direction's stream last went on can no longer be taken, and a capture
// damaged that much has more of them than its gaps.
const maxUnread = 64

// maxUnreadFit bounds the unreadable frames tried together for one gap
// of TCP bytes (2^n subsets).
const maxUnreadFit = 8

// unreadable reports whether f, a frame that is neither TCP nor RoCE nor
// a dump device's, is one the capture damaged past reading: a header
// error (but where the snap length cut it), an IPv4 header checksum that
// fails, a UDP destination port one byte off RoCEv2's (the packet more
// damaged than that byte, or its ICRC would have read it as RoCE), or an
// EtherType that no protocol a capture of SMC hosts holds has.
func unreadable(f *capture.Frame) bool {
	switch {
	case f.Cut:
		// Short, not damaged: smc.capture.snap_cut says so.
		return false
	case f.Err != nil:
		return true
	case f.UDP != nil && len(f.UDP.Payload) >= 12+4 && nearRoCEv2(uint16(f.UDP.SrcPort), uint16(f.UDP.DstPort)):
		return true
	case f.IPv4 != nil:
		return !decode.IPv4HeaderSumOK(f.IPv4.Contents) // (one of 0 was not filled in: it passes)
	case f.IPv6 != nil:
		return false // no header checksum tells
	case f.Eth != nil && len(f.VLAN) == 0:
		return !knownEtherType(f.Eth.EthernetType, len(f.Eth.Payload))
	}
	return false
}

// nearRoCEv2 reports whether a datagram from port src to port dst is a
// RoCEv2 packet's with its destination port damaged: dst one byte off
// RoCEv2's but for VXLAN's and VXLAN-GPE's (4789, 4790: a mirror's
// overlay), src in the range RoCEv2's senders take theirs from (RFC
// 6335's dynamic ports, from 0xC000: rdma_get_udp_sport in
// include/rdma/ib_verbs.h).
func nearRoCEv2(src, dst uint16) bool {
	r := uint16(decode.UDPPortRoCEv2)
	return src >= 0xC000 && dst != r && dst != 4789 && dst != 4790 && (dst>>8 == r>>8 || dst&0xFF == r&0xFF)
}

// knownEtherType reports whether t is the EtherType of a frame a capture
// of SMC hosts holds besides IP (which is decoded): ARP, LLDP, PAUSE and
// PFC, LACP, 802.1X, PTP, CFM, MACsec, FCoE and its FIP, RoCEv1, MPLS;
// or an IEEE 802.3 length that its payload holds (n bytes).
func knownEtherType(t layers.EthernetType, n int) bool {
	switch t {
	case 0x0806, 0x8035, 0x88cc, 0x8808, 0x8809, 0x888e, 0x88f7, 0x8902, 0x88e5, 0x8906, 0x8914, 0x8915, 0x8847, 0x8848:
		return true
	}
	return t > 0 && t <= 1500 && int(t) <= n
}

// unreadFrom says in in what f, a frame damaged past reading, still
// tells of where it went: the addresses of an IPv4 header that
// verifies, its Ethernet destination.
func (in *input) unreadFrom(f *capture.Frame) {
	in.unreadAddrs = f.IPv4 != nil && ipv4Vouches(f.IPv4.Contents)
	if in.unreadAddrs {
		in.unreadSrc, in.unreadDst = addrOfIP(f.IPv4.SrcIP), addrOfIP(f.IPv4.DstIP)
	}
	if in.unreadHasMAC = f.Eth != nil && len(f.Eth.DstMAC) == 6; in.unreadHasMAC {
		in.unreadMAC = [6]byte(f.Eth.DstMAC)
	}
	in.unreadBTH = false
	if u := f.UDP; u != nil && u.DstPort == decode.UDPPortRoCEv2 && len(u.Payload) >= 12 {
		// IBA Vol. 1 9.2: DestQP in bytes 5-7, PSN in 9-11.
		b := u.Payload
		in.unreadBTH = true
		in.unreadQPN = uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7])
		in.unreadPSN = uint32(b[9])<<16 | uint32(b[10])<<8 | uint32(b[11])
	}
}

// ipv4Vouches reports whether IPv4 header ip holds the addresses its
// sender gave: its checksum filled in (decode.IPv4HeaderSumOK passes one
// of 0) and verifying.
func ipv4Vouches(ip []byte) bool {
	return len(ip) >= 20 && ip[10]|ip[11] != 0 && decode.IPv4HeaderSumOK(ip)
}

// lastUnread is the number of the newest frame kept as damaged past
// reading, 0 for none.
func (t *Tracker) lastUnread() int {
	if n := len(t.unread); n > 0 {
		return t.unread[n-1].number
	}
	return 0
}

// keepUnread keeps the frame in in as one the capture damaged past
// reading (id: its finding, for a RoCE packet; None otherwise).
func (t *Tracker) keepUnread(in *input, id expert.ID) {
	if len(t.unread) == maxUnread {
		t.unread = append(t.unread[:0], t.unread[maxUnread/4:]...)
	}
	t.unread = append(t.unread, unreadFrame{number: in.number, ns: in.ns, wire: in.wire, id: id,
		addrs: in.unreadAddrs, src: in.unreadSrc, dst: in.unreadDst, mac: in.unreadMAC, hasMAC: in.unreadHasMAC,
		bth: in.unreadBTH, qpn: in.unreadQPN, psn: in.unreadPSN})
}

// unreadTCP settles, of rest TCP bytes of direction d of c that the
// peer's ACK in in covers and the capture showed nowhere, those that
// unreadable frames since the direction's stream last went on hold: a
// set of them whose lengths, less the direction's headers (Flow.frameHdr),
// add up to rest, or to rest less one with a FIN among them where the
// direction's FIN is not known (a frame's flags are past reading). It
// returns the bytes left and whether a FIN was taken.
func (t *Tracker) unreadTCP(c *Conn, d Dir, rest uint32, in *input) (left uint32, fin bool) {
	f := &c.Flow[d]
	hdr := f.frameHdr
	if hdr == 0 {
		hdr = c.Flow[d.Reverse()].frameHdr
	}
	if hdr == 0 {
		return rest, false
	}
	src, dst := addrOf(c.Client.Addr()), addrOf(c.Server.Addr())
	if d == DirS2C {
		src, dst = dst, src
	}
	var idx [maxUnreadFit]int
	n := 0
	for i := len(t.unread) - 1; i >= 0 && n < len(idx); i-- {
		u := &t.unread[i]
		if u.number <= f.tcpNextFrame {
			break
		}
		if !u.taken && u.id == expert.None && u.number < in.number && u.wire >= hdr && u.from(src, dst) {
			idx[n], n = i, n+1
		}
	}
	finOpen := !f.FIN && !f.RST
	found := 0
	for set := 1; set < 1<<n && found == 0; set++ {
		var sum uint32
		for j := range n {
			if set&(1<<j) != 0 {
				sum += uint32(t.unread[idx[j]].wire - hdr)
			}
		}
		switch {
		case sum == rest:
			found = set
		case finOpen && sum+1 == rest:
			found, fin = set, true
		}
	}
	if found == 0 {
		return rest, false
	}
	var frames [maxUnreadFit]unreadFrame
	k := 0
	for j := n - 1; j >= 0; j-- {
		if found&(1<<j) != 0 {
			u := &t.unread[idx[j]]
			u.taken = true
			frames[k], k = *u, k+1
		}
	}
	f.TCPUnreadable += uint64(rest)
	t.unreadFound(&c.expert, frames[:k])
	return 0, fin
}

// unreadRoCE settles, of missed request PSNs of direction d of l that the
// responder's word in in says it took and the capture showed nowhere,
// those that unreadable frames since the direction's last request
// followed hold, one PSN a frame, in frame order: first those sent to
// the Ethernet address the direction's requests go to, then, for PSNs
// left, the others (their address damaged too). A frame as long as in,
// where in is an ACK of the responder (its encapsulation the link's), is
// taken for a damaged ACK, not a request. It returns how many it
// settled.
func (t *Tracker) unreadRoCE(l *Link, d Dir, missed int, n uint32, in *input) int {
	rc := &l.RC[d]
	ackWire := 0
	if r := &in.roce; in.isRoCE && r.hasAETH && !isRequest(r.opcode) {
		ackWire = in.wire
	}
	first := len(t.unread)
	for first > 0 && t.unread[first-1].number > rc.lastFrame {
		first--
	}
	var frames []unreadFrame
	for pass := range 2 {
		for i := first; i < len(t.unread) && len(frames) < missed; i++ {
			u := &t.unread[i]
			if u.taken || u.number >= in.number || u.wire == ackWire || l.keyed[d] && !u.from(l.keys[d].src, l.keys[d].dst) {
				continue
			}
			if pass == 0 && rc.haveMAC && u.hasMAC && u.mac != rc.mac {
				continue
			}
			u.taken = true
			frames = append(frames, *u)
			if u.id != expert.None {
				// The packet dropped for its ICRC was a copy: the
				// responder took the request.
				t.expert.unmark(u.id)
			}
		}
	}
	if len(frames) == 0 {
		return 0
	}
	// Which PSN each held is not known: the lowest the responder took
	// that no run held, in turn; should one of them show late after all
	// (shownLate), its frame held another.
	rc.unreadPSNs = slices.DeleteFunc(rc.unreadPSNs, func(u unreadPSN) bool { return in.ns-u.ns > int64(lateMax) })
	k := 0
	for i := uint32(0); i < n && i < aheadBits && k < len(frames); i++ {
		if !rc.ahead.has(i) {
			rc.unreadPSNs = append(rc.unreadPSNs, unreadPSN{psn: (rc.nextPSN + i) & 0xFFFFFF, ns: in.ns, frame: frames[k]})
			k++
		}
	}
	rc.Unreadable += len(frames)
	t.unreadFound(&l.expert, frames)
	t.contentUnknown(l, d, in)
	return len(frames)
}

// heldDamaged reports whether the PSNs direction d of l's open run
// skipped are each held by the capture damaged: a request whose copy
// fails its ICRC or IPv4 header checksum (RC.dmg), or a frame damaged
// past reading since the direction's last request whose BTH names the
// PSN and DestQP where it has them (its opcode reserved). The capture
// saw those packets: what the responder's word then shows lost was the
// damaged packet its RNIC dropped (roce.icrc.bad says so), or one lost
// past the capture point, as where the capture holds them whole; no PSN
// jumped where the capture stood. It takes the unreadable frames.
func (t *Tracker) heldDamaged(l *Link, d Dir) bool {
	rc := &l.RC[d]
	w := &rc.ahead
	if !l.keyed[d] || w.missing <= 0 || w.missing > maxUnreadFit {
		return false
	}
	k := &l.keys[d]
	var idx, held [maxUnreadFit]int
	nu, nh := 0, 0
	for i := range uint32(w.missing) {
		psn := (w.from + i) & 0xFFFFFF
		// (A copy shown before the direction's last request followed,
		// or that explained a loss shown before, is an earlier pass's:
		// the PSN sent again since went missing.)
		if j := slices.IndexFunc(rc.dmg, func(m damagedReq) bool {
			return m.req.roce.psn == psn && m.req.number > rc.lastFrame && !m.lossShown
		}); j >= 0 {
			held[nh], nh = j, nh+1
			continue
		}
		j := slices.IndexFunc(t.unread, func(u unreadFrame) bool {
			return !u.taken && u.bth && uint64(u.qpn) == k.qpn && u.psn == psn && u.number > rc.lastFrame && u.from(k.src, k.dst)
		})
		if j < 0 {
			return false
		}
		idx[nu], nu = j, nu+1
	}
	for _, j := range held[:nh] {
		rc.dmg[j].lossShown = true
	}
	if nu == 0 {
		return true
	}
	frames := make([]unreadFrame, nu)
	for i, j := range idx[:nu] {
		u := &t.unread[j]
		u.taken = true
		frames[i] = *u
		if u.id != expert.None {
			t.expert.unmark(u.id)
		}
	}
	rc.Unreadable += nu
	t.unreadFound(&l.expert, frames)
	return true
}

// unreadPSN is a PSN that unreadRoCE settled, at ns, by frame.
type unreadPSN struct {
	psn   uint32
	ns    int64
	frame unreadFrame
}

// shownLate takes psn, a request of direction d of l that the responder
// took before the capture showed it (reordered, damagedLate), out of
// what the capture held damaged past reading (the frame that settled it
// held another PSN, or none) or else out of what it missed.
func (t *Tracker) shownLate(l *Link, d Dir, psn uint32) {
	rc := &l.RC[d]
	i := slices.IndexFunc(rc.unreadPSNs, func(u unreadPSN) bool { return u.psn == psn })
	if i < 0 {
		rc.NotCaptured--
		return
	}
	u := rc.unreadPSNs[i].frame
	rc.unreadPSNs = slices.Delete(rc.unreadPSNs, i, i+1)
	rc.Unreadable--
	l.expert.unmark(expert.CaptureUnreadable)
	if u.id != expert.None {
		t.expert.add(u.id, u.number, u.ns, "")
	}
	for j := range t.unread {
		if t.unread[j].number == u.number {
			t.unread[j].taken = false
		}
	}
}

// unreadFound raises smc.capture.unreadable on ms for each frame taken,
// carried by it (findingDetail says what they held).
func (t *Tracker) unreadFound(ms *marks, frames []unreadFrame) {
	t.cur.expert |= 1 << expert.CaptureUnreadable
	for _, u := range frames {
		ms.add(expert.CaptureUnreadable, u.number, u.ns, "")
	}
}
