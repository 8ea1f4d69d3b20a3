package capture

import (
	"bytes"
	"encoding/binary"
	"slices"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
)

// sumHistory is what judging the checksums of a connection's segments
// needs of those before them: sumOK[d], a segment of direction d (0: the
// flow key's) carried a TCP checksum that verifies; ipSumOK[d], one
// carried an IPv4 header checksum that verifies; mss[d], the MSS
// direction d's SYN announced (the largest segment the other direction
// sends), 0 when none was seen.
type sumHistory struct {
	sumOK   [2]bool
	ipSumOK [2]bool
	mss     [2]uint16
}

// judge says in f.TCPSum what s, f's TCP checksum as tcpSum found it (ok
// false where it could not), tells of f, a segment of direction d, and
// reports whether that is a damaged copy: a checksum that verifies, or
// one that fails where that cannot be the capture point's own doing (the
// connection's segments verified before: a host capture with checksum
// offload verifies none of what it sends, the offloaded field being
// recognised too; and the segment is no longer than the MSS its receiver
// announced: a receiving host's capture shows segments GRO merged, whose
// checksum is the first one's).
func (u *sumHistory) judge(f *Frame, d int, s TCPSumStatus, ok bool) bool {
	switch {
	case !ok:
	case s.OK:
		u.sumOK[d] = true
		f.TCPSum = s
	case (u.sumOK[d] || u.sumOK[1-d]) && len(f.TCP.Payload) <= u.sentMSS(d):
		f.TCPSum = s
		return true
	}
	return false
}

// judgeIP says in f.TCPSum whether the IPv4 header checksum of f, a
// segment of direction d, fails where that is damage: the direction's
// headers verified before (GRO and TSO leave a header whose checksum
// verifies: inet_gro_complete mends it, ip_send_check makes it for the
// whole segment), or those of its link-layer source did (senders: a
// header whose addresses or ports the capture damaged names no
// connection seen), and one of 0 was not filled in.
func (u *sumHistory) judgeIP(f *Frame, d int, senders *ipSenders) {
	if f.IPv4 == nil {
		return
	}
	ip := f.IPv4.Contents
	switch {
	case !decode.IPv4HeaderSumOK(ip):
		f.TCPSum.IPSumBad = u.ipSumOK[d] || senders.vouched(f)
	case len(ip) >= 20 && ip[10]|ip[11] != 0 && !u.ipSumOK[d]:
		// (A direction's sender is noted once.)
		u.ipSumOK[d] = true
		senders.see(f)
	}
}

// ipSenders are the link-layer sources whose IPv4 headers, their
// checksums filled in, verified in a segment judged: a header from one of
// them whose checksum fails is a damaged copy (a Linux sender makes every
// header's checksum, ip_send_check in net/ipv4/ip_output.c, and a
// receiver drops one that fails, ip_rcv_core in net/ipv4/ip_input.c), its
// addresses and ports not to be believed. A sender whose headers were
// never seen verifying may leave them to its adapter (z/OS's OSA checksum
// offload): its headers are taken as they are. Frames without a
// link-layer source count as one sender.
type ipSenders struct {
	seen map[[6]byte]struct{}
}

// linkSource is f's link-layer source address: the Ethernet source, a
// Linux cooked capture's address, or zeros where the frame has none.
func linkSource(f *Frame) (a [6]byte) {
	switch {
	case f.Eth != nil && len(f.Eth.SrcMAC) == 6:
		a = [6]byte(f.Eth.SrcMAC)
	case f.SLL != nil && len(f.SLL.Addr) == 6:
		a = [6]byte(f.SLL.Addr)
	}
	return a
}

// maxSenders bounds the sources kept: more than a capture's hosts (one
// whose damaged copy kept a verifying header adds one).
const maxSenders = 4096

// see notes f's link-layer source as one whose IPv4 headers verify.
// (judgeIP asks it once per connection direction.)
func (v *ipSenders) see(f *Frame) {
	if v.seen == nil {
		v.seen = make(map[[6]byte]struct{})
	}
	if len(v.seen) < maxSenders {
		v.seen[linkSource(f)] = struct{}{}
	}
}

// vouched reports whether f's link-layer source is one whose IPv4 headers
// verified.
func (v *ipSenders) vouched(f *Frame) bool {
	_, ok := v.seen[linkSource(f)]
	return ok
}

// sentMSS is the largest segment direction d sends: the MSS its receiver's
// SYN announced, or, where the capture lacks that SYN (or damaged it past
// reading as SMC's), the 536 bytes a sender assumes without one (RFC 9293
// section 3.7.1). A segment GRO merged holds two at least.
func (u *sumHistory) sentMSS(d int) int {
	if m := u.mss[1-d]; m != 0 {
		return int(m)
	}
	return 536
}

// maxAfter bounds the connections whose checksums are judged past their
// handshake (clcAssembler.after): beyond it, those seen least recently
// are forgotten (afterEvict). A connection then goes on unjudged, as
// every TCP segment of a connection not followed as SMC is.
const maxAfter = 16384

// afterFlow is a connection followed as SMC from its SYN whose handshake
// ended: its segments' checksums are still judged, so that a damaged copy
// of its data (a fallback's), of a FIN or of an ACK is known as such (a
// receiving host drops it, tcp_v4_rcv in net/ipv4/tcp_ipv4.c) and not
// taken for the segment sent. Its directions are afterKey's: 0 from the
// lower end. fin[d]: direction d sent its FIN, which takes sequence
// number finEnd[d]-1, and acked[d]: the other acknowledged it (segments
// whose checksums did not fail).
type afterFlow struct {
	sumHistory
	lastSeen   time.Time
	fin, acked [2]bool
	finEnd     [2]uint32
}

// afterKey names a connection by its two ends (address family, address,
// port), the lower first, so that a segment of either direction finds it
// in one lookup of a short key.
type afterKey [2][19]byte

// afterKeyOf is the afterKey of the segment src:sport -> dst:dport, and
// the direction it goes in (0: from the key's first end).
func afterKeyOf(src, dst []byte, sport, dport uint16) (k afterKey, d int) {
	end := func(e *[19]byte, ip []byte, port uint16) {
		e[0] = byte(len(ip))
		copy(e[1:17], ip)
		binary.BigEndian.PutUint16(e[17:], port)
	}
	end(&k[0], src, sport)
	end(&k[1], dst, dport)
	if bytes.Compare(k[0][:], k[1][:]) > 0 {
		k[0], k[1], d = k[1], k[0], 1
	}
	return k, d
}

// after judges the checksums of f, a TCP segment that no handshake being
// followed holds, where its connection's handshake was followed from the
// SYN and has ended (remember). A SYN on the 4-tuple begins another
// connection and a RST ends this one: either ends the judging, unless its
// checksums fail (its flags may be the damage), as does the segment that
// acknowledges the second FIN (the last ACK).
func (a *clcAssembler) after(f *Frame) {
	var src, dst []byte
	switch {
	case f.IPv4 != nil:
		src, dst = f.IPv4.SrcIP, f.IPv4.DstIP
	case f.IPv6 != nil:
		src, dst = f.IPv6.SrcIP, f.IPv6.DstIP
	default:
		return
	}
	t := f.TCP
	var k afterKey
	var d int
	fl, c := (*afterFlow)(nil), &a.lastAfter
	switch {
	case c.fl != nil && c.sport == t.SrcPort && c.dport == t.DstPort && bytes.Equal(c.src, src) && bytes.Equal(c.dst, dst):
		fl, k, d = c.fl, c.k, c.d
	case c.fl != nil && c.sport == t.DstPort && c.dport == t.SrcPort && bytes.Equal(c.src, dst) && bytes.Equal(c.dst, src):
		fl, k, d = c.fl, c.k, 1-c.d
	default:
		// A connection's segments mostly follow each other: the last
		// one found is compared before the key is built and hashed.
		k, d = afterKeyOf(src, dst, uint16(t.SrcPort), uint16(t.DstPort))
		if fl = a.done[k]; fl == nil {
			return
		}
		*c = lastAfter{fl: fl, k: k, d: d, sport: t.SrcPort, dport: t.DstPort,
			src: append(c.src[:0], src...), dst: append(c.dst[:0], dst...)}
	}
	s, sumOK := tcpSum(f)
	fl.judge(f, d, s, sumOK)
	fl.judgeIP(f, d, &a.senders)
	fl.lastSeen = f.CI.Timestamp
	if f.TCPSum.Damaged() {
		return
	}
	if t.FIN && !fl.fin[d] {
		fl.fin[d], fl.finEnd[d] = true, t.Seq+uint32(f.TCPWireLen())+1
	}
	if o := 1 - d; t.ACK && fl.fin[o] && int32(t.Ack-fl.finEnd[o]) >= 0 {
		fl.acked[o] = true
	}
	if t.SYN || t.RST || fl.acked[0] && fl.acked[1] {
		a.forget(k)
	}
}

// lastAfter is the connection after found last (after), with the
// segment's addresses, ports and direction that found it.
type lastAfter struct {
	fl           *afterFlow
	k            afterKey
	d            int
	sport, dport layers.TCPPort
	src, dst     []byte
}

// forget ends the judging of connection k. Its afterFlow serves a later
// connection: a capture of short connections allocates none each.
func (a *clcAssembler) forget(k afterKey) {
	fl := a.done[k]
	if fl == nil {
		return
	}
	if a.lastAfter.fl == fl {
		a.lastAfter.fl = nil
	}
	delete(a.done, k)
	if len(a.afterFree) < 256 {
		a.afterFree = append(a.afterFree, fl)
	}
}

// remember keeps what judging fl's checksums needs once its handshake,
// followed from the SYN, ends (after).
func (a *clcAssembler) remember(fl *clcFlow) {
	if !fl.smcSYN {
		return
	}
	if len(a.done) >= maxAfter {
		a.afterEvict()
	}
	net, ports := fl.key[0], fl.key[1]
	sp, dp := ports.Endpoints()
	k, d := afterKeyOf(net.Src().Raw(), net.Dst().Raw(), binary.BigEndian.Uint16(sp.Raw()), binary.BigEndian.Uint16(dp.Raw()))
	h := fl.sumHistory
	if d == 1 {
		// Direction 0 of fl is the key's second end's.
		h = sumHistory{[2]bool{h.sumOK[1], h.sumOK[0]}, [2]bool{h.ipSumOK[1], h.ipSumOK[0]}, [2]uint16{h.mss[1], h.mss[0]}}
	}
	a.forget(k) // a connection on the 4-tuple before
	x := reuse(&a.afterFree)
	*x = afterFlow{sumHistory: h, lastSeen: fl.lastSeen}
	a.done[k] = x
}

// afterEvict forgets the quarter of the connections after their
// handshake that were seen least recently (by capture time, so that the
// same capture forgets the same ones).
func (a *clcAssembler) afterEvict() {
	seen := make([]time.Time, 0, len(a.done))
	for _, fl := range a.done {
		seen = append(seen, fl.lastSeen)
	}
	slices.SortFunc(seen, time.Time.Compare)
	cut := seen[len(seen)/4]
	for k, fl := range a.done {
		if !fl.lastSeen.After(cut) {
			a.forget(k)
		}
	}
}
