package track

import (
	"bytes"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/expert"
)

// A segment whose address or port the capture damaged names a 4-tuple no
// connection has: it would start a connection of its own (a SYN, a
// SYN-ACK, a CLC message) that never goes on, and leave its own
// connection without it. What tells it from a real one is both at once:
// the checksum that covers the damaged field fails (the TCP checksum
// covers the addresses through the pseudo-header and the ports, the IPv4
// header's the addresses, RFC 9293 3.1 and RFC 791), and its sequence
// numbers are a connection's whose 4-tuple is one field away (the
// initial sequence number its SYN-ACK acknowledges, the bytes next in its
// stream): a 32-bit number no other connection shares by chance.

// tupleScan bounds the connections, newest first, a damaged segment is
// compared with: its own began shortly before it.
const tupleScan = 1024

// maxDamagedSYNs bounds the connections kept that began at a SYN whose
// checksum failed, waiting for a SYN-ACK that shows their true 4-tuple.
const maxDamagedSYNs = 16

// damagedSYN is a connection that began at a SYN whose checksum failed
// (Tracker.damagedSYNs): if its SYN-ACK names another 4-tuple one field
// away, the SYN's copy was damaged and the connection is the SYN-ACK's.
type damagedSYN struct {
	c     *Conn
	id    int // c's ID when kept: a connection's memory is used again
	frame int
	ns    int64
	sum   capture.TCPSumStatus
	src   netip.AddrPort // the SYN's damaged endpoints
	dst   netip.AddrPort
	hdr   []byte // the SYN's TCP header, to verify with other fields
	// answered: a SYN-ACK two fields off answered it, both damaged past
	// telling by their checksums which held each field (mixedTuple);
	// synAck is the client's and server's endpoints it named. The next
	// segment that goes on from the two decides (outvoted).
	answered bool
	synAck   [2]netip.AddrPort
}

// tupleOff counts the fields (address, port) in which the endpoints a, b
// differ from x, y.
func tupleOff(a, b, x, y netip.AddrPort) int {
	n := 0
	for _, p := range [2][2]netip.AddrPort{{a, x}, {b, y}} {
		if p[0].Addr() != p[1].Addr() {
			n++
		}
		if p[0].Port() != p[1].Port() {
			n++
		}
	}
	return n
}

// near reports whether sequence number a is within a window of b.
func near(a, b uint32) bool {
	d := int32(a - b)
	return d >= -1<<16 && d <= 1<<16
}

// tupleFits reports whether s, a segment whose 4-tuple is one field away
// from c's in direction d, carries c's sequence numbers.
func tupleFits(c *Conn, d Dir, s *tcpIn) bool {
	f, o := &c.Flow[d], &c.Flow[1-d]
	if f.haveTCPNext && s.seq == f.tcpNext && s.payload > 0 {
		// The bytes next in its stream, to the number: its
		// acknowledgement number and flags may be damaged as well (1 in
		// 2^32 by chance).
		return true
	}
	switch {
	case s.syn && !s.ack:
		return d == DirC2S && (c.SeenSYN || c.SeenSYNACK) && s.seq == c.synSeq
	case s.syn:
		return d == DirS2C && (c.SeenSYN || c.SeenSYNACK) && s.ackNum == c.synSeq+1
	case !s.ack:
		return false // a sequence number alone: 2^17 of 2^32
	}
	return f.haveTCPNext && near(s.seq, f.tcpNext) && o.haveTCPNext && near(s.ackNum, o.tcpNext)
}

// damagedTuple finds the connection of s, a segment no connection's
// 4-tuple matches, where the capture damaged its address or port; s is
// then followed as that connection's (its endpoints made the
// connection's, what they were kept for the finding). A SYN-ACK whose
// SYN was the damaged copy moves that SYN's connection to its 4-tuple.
func (t *Tracker) damagedTuple(in *input) *Conn {
	s := &in.tcp
	if t.endpoints[s.src] == 0 && t.endpoints[s.dst] == 0 {
		// One field damaged leaves one end whole; a SYN-ACK may have a
		// field of each end damaged (damagedCopyOf), or answer a
		// damaged SYN with one in each (damagedSYNOf).
		if !s.syn || !s.ack {
			// Three fields damaged between a SYN and its SYN-ACK leave
			// the ends the segment after them names unseen. (Every
			// segment of a connection not followed comes here: none
			// is asked of where no damaged SYN waits.)
			if len(t.damagedSYNs) == 0 {
				return nil
			}
			return t.outvoted(in)
		}
		if sum := s.sums(); sum.Damaged() {
			if c := t.damagedCopyOf(in, sum, false); c != nil {
				return c
			}
		}
		if len(t.damagedSYNs) > 0 {
			return t.damagedSYNOf(in)
		}
		return nil
	}
	if c := t.outvoted(in); c != nil {
		return c
	}
	// A checksum left to the NIC vouches for the addresses alone: a port
	// the capture damaged is found out by the sequence numbers as well.
	if sum := s.sums(); sum.Damaged() || sum.Offload {
		if c := t.damagedCopyOf(in, sum, false); c != nil {
			return c
		}
		if c := t.damagedCopyOf(in, sum, true); c != nil {
			return c
		}
	}
	if (s.ack || s.syn) && !s.rst && len(t.damagedSYNs) > 0 {
		return t.damagedSYNOf(in)
	}
	return nil
}

// damagedCopyOf finds the connection one field away whose damaged copy
// s is, its checksums sum; or two fields away, s the SYN-ACK of its SYN;
// with far, the one two fields away whose stream's next bytes s carries
// (nextBytes), asked where none nearer is.
func (t *Tracker) damagedCopyOf(in *input, sum capture.TCPSumStatus, far bool) *Conn {
	s := &in.tcp
	for i := len(t.conns) - 1; i >= max(0, len(t.conns)-tupleScan); i-- {
		c := t.conns[i]
		if t.byTuple[makeTCPKey(c.Client, c.Server)] != c {
			continue
		}
		d, off := orient(s, c)
		// Two fields off, a SYN-ACK answers the SYN's number: 1 in 2^32
		// by chance. Where the SYN failed its checksum too, which of
		// the two held each field whole is damagedSYNOf's to tell.
		fits := off == 1 || off == 2 && s.syn && s.ack && d == DirS2C && t.damagedSYNAt(c) < 0
		if far {
			fits = off == 2 && nextBytes(c, d, s)
		}
		if !fits || !tupleFits(c, d, s) {
			continue
		}
		if i := t.damagedSYNAt(c); s.syn && s.ack && i >= 0 {
			// Its SYN failed its checksum too: which of the two names
			// the 4-tuple the hosts used is told by the SYN-ACK's
			// checksums with the SYN's 4-tuple in place of its own.
			if !t.asConn(s, c, d) {
				continue
			}
			y := t.damagedSYNs[i]
			t.settleSYN(i, c.Client, c.Server, func(what string) string {
				return fmt.Sprintf("the SYN (frame %d), which its SYN-ACK (frame %d) answers, is a damaged copy (its %s fails)", y.frame, in.number, what)
			})
		}
		if i := t.damagedSYNAt(c); i >= 0 && !s.syn && d == DirC2S && s.seq == c.synSeq+1 &&
			(addrOff(s, c) && s.frame != nil && s.frame.IPv4 != nil && ipv4Vouches(s.frame.IPv4.Contents) ||
				capture.SYNSumAs(t.damagedSYNs[i].hdr, s.src, s.dst, c.synSeq)) {
			// The client's next segment after a SYN whose checksum
			// failed, damaged elsewhere, where its IPv4 header verifies
			// (and so vouches for its addresses, where only an address
			// differs) or the SYN's checksum verifies with its 4-tuple:
			// the SYN's copy held those they differ in damaged.
			y := t.damagedSYNs[i]
			t.settleSYN(i, s.src, s.dst, func(what string) string {
				return fmt.Sprintf("the SYN (frame %d) names %s -> %s, the client's next segment (frame %d) %s -> %s, which its IPv4 header or the SYN's checksum vouches for: the SYN's copy is damaged (its %s fails)",
					y.frame, y.src, y.dst, in.number, s.src, s.dst, what)
			})
			return c
		}
		e := c.ends(d)
		s.nameAs(e[0], e[1], sum)
		return c
	}
	return nil
}

// nextBytes reports whether s carries the bytes next in direction d of
// c's stream, to the sequence number: two fields of its 4-tuple damaged
// (an address and a port of one end) still leave 32 bits that no other
// connection shares by chance.
func nextBytes(c *Conn, d Dir, s *tcpIn) bool {
	f := &c.Flow[d]
	return !s.syn && s.payload > 0 && f.haveTCPNext && s.seq == f.tcpNext
}

// addrOff reports whether s, a client's segment one field off c's
// 4-tuple, differs from it in an address (which an IPv4 header's checksum
// covers), not a port.
func addrOff(s *tcpIn, c *Conn) bool {
	return s.src.Port() == c.Client.Port() && s.dst.Port() == c.Server.Port()
}

// damagedSYNOf finds the connection begun at a damaged SYN that s, a
// segment no connection's 4-tuple matches, goes on from: its SYN-ACK, or
// the client's next segment (its sequence number the one after the SYN's,
// its checksum not failing: where the SYN-ACK is not in the capture or
// damaged past knowing), and moves it to s's 4-tuple.
func (t *Tracker) damagedSYNOf(in *input) *Conn {
	s := &in.tcp
	for i := range t.damagedSYNs {
		y := t.damagedSYNs[i] // a copy: the entry is deleted below
		c := y.c
		if t.damagedSYNAt(c) != i {
			continue
		}
		client, server := s.dst, s.src
		off := tupleOff(s.src, s.dst, c.Server, c.Client)
		switch {
		case s.syn && s.ack && s.ackNum == c.synSeq+1 && off == 1:
		case s.syn && s.ack && tupleOff(s.src, s.dst, c.Server, c.Client) == 1 && capture.SYNSumAs(y.hdr, s.dst, s.src, s.ackNum-1):
			// Its sequence number damaged as well: the SYN's checksum
			// verifies with the SYN-ACK's 4-tuple and the number it
			// acknowledges in place of its own.
			c.synSeq, c.Flow[DirC2S].tcpNext = s.ackNum-1, s.ackNum
		case s.syn && s.ack && tupleOff(s.src, s.dst, c.Server, c.Client) == 1 && capture.SYNSumAs(y.hdr, s.dst, s.src, c.synSeq):
			// Its acknowledgement number damaged instead: the SYN's
			// checksum verifies with the SYN-ACK's 4-tuple and its own
			// number.
		case s.syn && s.ack && s.ackNum == c.synSeq+1 && (off == 2 || off == 3):
			// Two fields damaged between them (or three): the 4-tuple
			// sent takes each from the segment that held it whole,
			// which the SYN's or the SYN-ACK's checksum says
			// (mixedTuple).
			var n int
			client, server, n = mixedTuple(&y, c.synSeq, s)
			if n == 0 {
				// Neither checksum tells: the SYN-ACK is the SYN's all
				// the same (it answers its number), on the SYN's
				// 4-tuple until a segment after them says (outvoted).
				t.damagedSYNs[i].answered, t.damagedSYNs[i].synAck = true, [2]netip.AddrPort{s.dst, s.src}
				s.nameAs(c.Server, c.Client, s.sums())
				return c
			}
			if n > 1 {
				continue
			}
			s.nameAs(server, client, s.sums())
		case !s.syn && s.seq == c.synSeq+1 && tupleOff(s.src, s.dst, c.Client, c.Server) == 1:
			if sum := s.sums(); sum.Damaged() {
				continue
			}
			client, server = s.src, s.dst
		case s.syn && !s.ack && s.seq == c.synSeq && tupleOff(s.src, s.dst, c.Client, c.Server) == 1:
			// The SYN sent again, or the capture's other copy of it
			// (a mirror's beside the host's), its checksums verifying:
			// the damaged one's 4-tuple is this one's.
			if sum := s.sums(); sum.Damaged() {
				continue
			}
			client, server = s.src, s.dst
		default:
			continue
		}
		t.settleSYN(i, client, server, func(what string) string {
			next := fmt.Sprintf("its SYN-ACK (frame %d) answers", in.number)
			switch {
			case s.syn && !s.ack:
				next = fmt.Sprintf("its copy sent again or captured again (frame %d) names", in.number)
			case !s.syn:
				next = fmt.Sprintf("the client's next segment (frame %d), going on from it, names", in.number)
			case s.namedSrc.IsValid():
				next = fmt.Sprintf("its SYN-ACK (frame %d, damaged too: it names %s -> %s) answers", in.number, s.namedSrc, s.namedDst)
			}
			return fmt.Sprintf("the SYN (frame %d) names %s -> %s, %s %s -> %s: the SYN's copy is damaged (its %s fails)",
				y.frame, y.src, y.dst, next, c.Client, c.Server, what)
		})
		return c
	}
	return nil
}

// outvoted finds the connection begun at a damaged SYN whose damaged
// SYN-ACK answered it two or three fields off, neither checksum telling
// which held each (damagedSYN.answered), that s goes on from: its
// sequence numbers the connection's (tupleFits), each field in which the
// two differ the SYN's or the SYN-ACK's: two segments of three name each
// field, the SYN's copy held those s takes from the SYN-ACK damaged, and
// the connection moves to the 4-tuple s names. So it does where s's
// checksum verifies (sumVerifies), its 4-tuple at most two fields from
// each of theirs (the two damaged in one field, unlike).
func (t *Tracker) outvoted(in *input) *Conn {
	s := &in.tcp
	if s.syn || !s.ack {
		return nil
	}
	for i := range t.damagedSYNs {
		y := t.damagedSYNs[i]
		c := y.c
		if !y.answered || y.id != c.ID || t.byTuple[makeTCPKey(c.Client, c.Server)] != c {
			continue
		}
		d, off := orient(s, c)
		client, server := s.src, s.dst
		if d == DirS2C {
			client, server = s.dst, s.src
		}
		// Each field the two hold apart s takes from one of them; or s's
		// checksum verifies with its own 4-tuple, which then needs no
		// vote (the SYN and SYN-ACK damaged in one field alike).
		toAck := tupleOff(client, server, y.synAck[0], y.synAck[1])
		voted := off+toAck == tupleOff(y.src, y.dst, y.synAck[0], y.synAck[1])
		if off == 0 || !voted && (off > 2 || toAck > 2 || !sumVerifies(s)) || !tupleFits(c, d, s) {
			continue
		}
		t.settleSYN(i, client, server, func(what string) string {
			return fmt.Sprintf("the SYN (frame %d) names %s -> %s, its SYN-ACK (damaged too) %s -> %s, the segment after them (frame %d) %s -> %s: the SYN's copy is damaged (its %s fails)",
				y.frame, y.src, y.dst, y.synAck[0], y.synAck[1], in.number, c.Client, c.Server, what)
		})
		return c
	}
	return nil
}

// sumVerifies reports whether s's TCP checksum verifies as held and its
// IPv4 header's does not fail: its 4-tuple is the one sent.
func sumVerifies(s *tcpIn) bool {
	sum := s.sums()
	return sum.Checked && sum.OK && !sum.IPSumBad
}

// mixedTuple returns the 4-tuple of a connection whose SYN y (sequence
// number seq) and SYN-ACK s hold two fields of it damaged between them,
// the two fields in which they differ: of the four 4-tuples that take
// each of those from either (the SYN's, the SYN-ACK's, and the two that
// take one from each), the one with which the SYN's checksum or the
// SYN-ACK's verifies, and how many do (it is told where exactly one
// does). (A segment's checksum fails with its own 4-tuple: it is a
// damaged copy.)
func mixedTuple(y *damagedSYN, seq uint32, s *tcpIn) (client, server netip.AddrPort, found int) {
	// The SYN-ACK's fields, as the client's and server's.
	syn, synAck := [2]netip.AddrPort{y.src, y.dst}, [2]netip.AddrPort{s.dst, s.src}
	for m := range 16 { // bit i: field i (client address, port, server address, port) from the SYN-ACK
		f := func(i int) bool { return m&(1<<i) != 0 }
		e := [2]netip.AddrPort{
			netip.AddrPortFrom(either(f(0), syn[0].Addr(), synAck[0].Addr()), either(f(1), syn[0].Port(), synAck[0].Port())),
			netip.AddrPortFrom(either(f(2), syn[1].Addr(), synAck[1].Addr()), either(f(3), syn[1].Port(), synAck[1].Port())),
		}
		if tupleOff(e[0], e[1], syn[0], syn[1]) != bits.OnesCount(uint(m)) {
			continue // a field the two hold alike: that 4-tuple is another m's
		}
		if capture.SYNSumAs(y.hdr, e[0], e[1], seq) || s.frame != nil && s.frame.TCPSumAs(e[1], e[0]) {
			client, server = e[0], e[1]
			found++
		}
	}
	return client, server, found
}

// either is b where second, else a.
func either[T any](second bool, a, b T) T {
	if second {
		return b
	}
	return a
}

// orient returns the direction of c in which s, a segment near c's
// 4-tuple, goes, and how many fields of that 4-tuple s holds apart.
func orient(s *tcpIn, c *Conn) (Dir, int) {
	off := tupleOff(s.src, s.dst, c.Client, c.Server)
	if o := tupleOff(s.src, s.dst, c.Server, c.Client); o < off {
		return DirS2C, o
	}
	return DirC2S, off
}

// settleSYN takes damaged SYN i off the list, the segments after it
// having shown its connection's 4-tuple (client, server): the connection
// goes on on that 4-tuple, and the SYN's findings are raised on it
// (damagedSYNFindings, with text).
func (t *Tracker) settleSYN(i int, client, server netip.AddrPort, text func(what string) string) {
	y := t.damagedSYNs[i]
	t.damagedSYNs = slices.Delete(t.damagedSYNs, i, i+1)
	if c := y.c; client != c.Client || server != c.Server {
		t.untuple(c)
		c.Client, c.Server = client, server
		t.tuple(c)
	}
	damagedSYNFindings(y.c, &y, text)
}

// damagedSYNFindings raises on c the findings of y, its SYN, whose
// checksums failed; text says, of the first of each kind on c, which
// checksum (what) and how the segments after it showed the SYN damaged.
func damagedSYNFindings(c *Conn, y *damagedSYN, text func(what string) string) {
	for _, w := range [...]struct {
		id   expert.ID
		on   bool
		what string
	}{{expert.BadTCPSum, y.sum.Checked && !y.sum.OK, "TCP checksum"}, {expert.BadTCPIPSum, y.sum.IPSumBad, "IPv4 header checksum"}} {
		if !w.on {
			continue
		}
		s := ""
		if c.expert.find(w.id) == nil {
			s = text(w.what)
		}
		c.expert.add(w.id, y.frame, y.ns, s)
	}
}

// keepDamagedSYN notes c, begun at the SYN being fed, where its checksum
// failed: a SYN-ACK may show its address or port was damaged.
func (t *Tracker) keepDamagedSYN(c *Conn, in *input) {
	s := &in.tcp
	if !s.syn || s.ack {
		return
	}
	sum := s.sums()
	if !sum.Damaged() {
		return
	}
	if len(t.damagedSYNs) == maxDamagedSYNs {
		t.damagedSYNs = t.damagedSYNs[1:]
	}
	y := damagedSYN{c: c, id: c.ID, frame: in.number, ns: in.ns, sum: sum, src: s.src, dst: s.dst}
	if f := s.frame; f != nil && f.TCP != nil && len(f.TCP.Payload) == 0 {
		y.hdr = bytes.Clone(f.TCP.Contents)
	}
	t.damagedSYNs = append(t.damagedSYNs, y)
}

// namedText is what a segment followed as another 4-tuple's named.
func (s *tcpIn) namedText() string {
	if !s.namedSrc.IsValid() {
		return ""
	}
	return fmt.Sprintf("the segment names %s -> %s, a damaged copy of this connection's %s -> %s; ", s.namedSrc, s.namedDst, s.src, s.dst)
}

// sums is the segment's checksums verified whatever its flow: the
// capture's verdict where it gave one (capture.Frame.TCPSum), else
// capture.Frame.TCPSumAnyway's.
func (s *tcpIn) sums() capture.TCPSumStatus {
	switch {
	case s.frame == nil:
		return capture.TCPSumStatus{}
	case s.frame.TCPSum.Damaged():
		return s.frame.TCPSum
	}
	return s.frame.TCPSumAnyway()
}

// endpointsDrop takes c's ends out of Tracker.endpoints.
func (t *Tracker) endpointsDrop(c *Conn) {
	for _, e := range [2]netip.AddrPort{c.Client, c.Server} {
		if t.endpoints[e]--; t.endpoints[e] <= 0 {
			delete(t.endpoints, e)
		}
	}
}

// damagedSYNAt is the index in Tracker.damagedSYNs of c, a connection
// still waiting for the SYN-ACK of its damaged SYN, or -1.
func (t *Tracker) damagedSYNAt(c *Conn) int {
	if c.SeenSYNACK || t.byTuple[makeTCPKey(c.Client, c.Server)] != c {
		return -1
	}
	for i := range t.damagedSYNs {
		if y := &t.damagedSYNs[i]; y.c == c && y.id == c.ID {
			return i
		}
	}
	return -1
}

// asConn reports whether s's TCP checksum verifies with c's 4-tuple (in
// direction d) in place of its own, or its IPv4 header's, which fails as
// held, with c's addresses (the rest of the segment may be damaged too).
func (t *Tracker) asConn(s *tcpIn, c *Conn, d Dir) bool {
	e := c.ends(d)
	return s.frame != nil && (s.frame.TCPSumAs(e[0], e[1]) || s.frame.IPv4SumAs(e[0].Addr(), e[1].Addr()))
}

// nameAs follows s as the segment src -> dst sent, the 4-tuple it named
// kept for the finding (namedText), sum its checksums' verdict (judged).
func (s *tcpIn) nameAs(src, dst netip.AddrPort, sum capture.TCPSumStatus) {
	s.namedSrc, s.namedDst = s.src, s.dst
	s.src, s.dst = src, dst
	s.judged(sum)
}

// judged takes sum, the checksums verified whatever the segment's flow
// (sums), as the capture's verdict on the segment: a damaged copy, the
// findings to say which checksum.
func (s *tcpIn) judged(sum capture.TCPSumStatus) {
	s.sumBad, s.sum = sum.Checked && !sum.OK, [2]uint16{sum.Got, sum.Want}
	if s.ipSumBad = sum.IPSumBad; s.ipSumBad {
		s.ipSum = s.frame.IPv4Sum()
	}
}

// damagedFlags takes back the flags of s, a SYN on c's 4-tuple, where its
// checksum fails and a SYN there is not what the peers send: the server's
// SYN-ACK with its ACK flag damaged, or a later segment's flags.
func damagedFlags(c *Conn, s *tcpIn) {
	if s.syn && !s.ack && s.src == c.Server && (s.ackNum == c.synSeq+1 || !c.SeenSYNACK) && (c.SeenSYN || c.SeenSYNACK) && !c.Closed() {
		if sum := s.sums(); sum.Damaged() {
			// The server's SYN-ACK, its flags damaged (its checksum
			// fails; its acknowledgement number the client's SYN's, or
			// none shown yet: a listening server answers a SYN with a
			// SYN-ACK, never a SYN of its own): no new connection the
			// other way round, and no reset.
			s.ack, s.rst, s.fin, s.payload = true, false, false, 0
			s.judged(sum)
		}
	}
	if s.syn && (c.SeenSYN || c.SeenSYNACK) && !c.Closed() && (s.seq != c.synSeq || s.src != c.Client) &&
		(!s.ack || s.src == c.Client) {
		if sum := s.sums(); sum.Damaged() {
			// A SYN on a live connection that is neither its SYN nor its
			// SYN-ACK, its checksum failing: its flags are damage (a copy
			// of a later segment), it begins no new connection.
			s.syn, s.fin, s.rst, s.flagsLost = false, false, false, true
			s.judged(sum)
		}
	}
}

// synFlagsTurned handles s, a SYN-ACK whose checksum verifies, on c,
// whose one segment so far was a SYN-ACK the other way whose checksum
// failed: where s acknowledges that segment's sequence number, it was the
// client's SYN with its flags damaged (a server answers a SYN, and only
// one side's SYN-ACK verifies). c is turned round to be that SYN's
// connection before s is followed as its SYN-ACK.
func (t *Tracker) synFlagsTurned(c *Conn, s *tcpIn) {
	if !s.syn || !s.ack || !c.damagedStart || c.Frames != 1 || !c.SeenSYNACK || c.SeenSYN ||
		s.src != c.Client || s.ackNum != c.Flow[DirS2C].tcpNext {
		return
	}
	if sum := s.sums(); sum.Damaged() {
		return
	}
	t.untuple(c)
	c.Client, c.Server = c.Server, c.Client
	// The server's direction begins at s: what the damaged segment's
	// acknowledgement number claimed of it was damage.
	c.Flow[DirC2S], c.Flow[DirS2C] = c.Flow[DirS2C], Flow{}
	c.SeenSYN, c.OptionSYN, c.synSeq = true, c.OptionSYNACK, c.Flow[DirC2S].tcpNext-1
	c.SeenSYNACK, c.OptionSYNACK = false, false
	if c.TSYN.IsZero() {
		c.TSYN = c.Start
	}
	if c.Outcome == OutcomeFallback && c.Fallback.Cause == CauseNoOptionSYNACK {
		c.Outcome, c.Fallback = OutcomePending, Fallback{}
		c.expert.unmark(expert.Fallback)
	}
	t.tuple(c)
}
