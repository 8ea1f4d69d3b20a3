package capture

import (
	"slices"
	"time"

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
// whole segment), and one of 0 was not filled in.
func (u *sumHistory) judgeIP(f *Frame, d int) {
	if f.IPv4 == nil {
		return
	}
	ip := f.IPv4.Contents
	switch {
	case !decode.IPv4HeaderSumOK(ip):
		f.TCPSum.IPSumBad = u.ipSumOK[d]
	case len(ip) >= 20 && ip[10]|ip[11] != 0:
		u.ipSumOK[d] = true
	}
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
// taken for the segment sent.
type afterFlow struct {
	sumHistory
	lastSeen time.Time
}

// after judges the checksums of f, a segment of key k that no handshake
// being followed holds, where its connection's handshake was followed
// from the SYN and has ended (remember). A SYN on the 4-tuple begins
// another connection and a RST ends this one: either ends the judging,
// unless its checksums fail (its flags may be the damage).
func (a *clcAssembler) after(f *Frame, k flowKey) {
	d := 0
	fl, ok := a.done[k]
	if !ok {
		k = flowKey{k[0].Reverse(), k[1].Reverse()}
		if fl, ok = a.done[k]; !ok {
			return
		}
		d = 1
	}
	t := f.TCP
	s, sumOK := tcpSum(f)
	fl.judge(f, d, s, sumOK)
	fl.judgeIP(f, d)
	fl.lastSeen = f.CI.Timestamp
	if (t.SYN || t.RST) && !f.TCPSum.Damaged() {
		delete(a.done, k)
		return
	}
	a.done[k] = fl
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
	a.done[fl.key] = afterFlow{fl.sumHistory, fl.lastSeen}
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
			delete(a.done, k)
		}
	}
}
