package track

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/netip"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/textcache"
)

// Feed runs one decoded frame through the tracker. Frames must come in
// capture order; f is only read during the call. The steady RoCE frames
// take fastRoCE, the rest the general path (feedMiss, feedFrame).
func (t *Tracker) Feed(f *capture.Frame) {
	if !t.opts.Unshared {
		t.feedLocked(f)
		return
	}
	if f == nil {
		return
	}
	t.feedOne(f)
}

// feedOne is Feed's work.
func (t *Tracker) feedOne(f *capture.Frame) {
	// A mirror's sequence is stepped before anything else: a copy the
	// capture holds twice has its own number, and a change is a finding
	// of feed's.
	mirror := t.mirrorStep(f)
	if len(t.ahead.held) > 0 {
		t.releaseHeld(f.UnixNano() - crossPathWindow)
	}
	if t.captureDup(f) {
		s := &t.seenCopies
		if s.cutFirst {
			t.uncut(s.cutNumber)
		}
		switch {
		case (s.otherPath || s.cutFirst) && len(t.ahead.held) > 0 && t.takeTwin(f):
		case s.cutFirst && f.TCP != nil:
			t.feedCLCOfCut(f)
		case s.cutFirst && f.BTH != nil:
			t.feedRoCEOfCut(f)
		default:
			t.feedDup(f)
		}
		return
	}
	if len(t.ahead.held) > 0 && f.BTH != nil && t.takeTwin(f) {
		// A copy held whose slot in captureDup's memory another packet
		// took. (A packet with no copy held still ends the wait of its
		// queue pair's earlier copies.)
		return
	}
	if t.ahead.on && t.hold(f) {
		return
	}
	if mirror != mirrorSame {
		t.feedFrame(f)
		return
	}
	if r := t.fastRoCE(f); r != fastDone {
		t.feedMiss(f, r)
	}
}

// FeedFast follows f when the fast path can (the commonest frames of a
// link: ACKs, WRITE Onlys and CDCs that continue what is known), as Feed
// would, and reports whether it did; otherwise it changes nothing Feed
// depends on and f is to be given to Feed, decoded whole. f needs only
// the layers that path reads (capture.Reader.SetDirectFeed fills them).
// A tracker shared with readers (Options.Unshared false) follows nothing
// this way.
func (t *Tracker) FeedFast(f *capture.Frame) bool {
	if !t.opts.Unshared || f == nil || t.ahead.on || t.mirrorStep(f) != mirrorSame || t.captureDup(f) {
		return false
	}
	r := t.fastRoCE(f)
	// As feedMiss: at most the link and then the connection miss.
	for range 3 {
		if r == fastDone {
			return true
		}
		if r == fastNo || !t.warm(f, r) {
			return false
		}
		r = t.fastRoCE(f)
	}
	return r == fastDone
}

// feedLocked is Feed under the mutex, in a function of its own so that
// Feed itself has no deferred call.
func (t *Tracker) feedLocked(f *capture.Frame) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f == nil {
		return
	}
	t.feedOne(f)
}

// seenCopies is what captureDup remembers of the capture's recent RoCE
// packets and dump-device frames.
type seenCopies struct {
	// recent holds a packet's fingerprint in the slot its queue pair and
	// PSN pick: a copy the capture made lands on its original's slot.
	recent [dupSlots]packetSeen
	// segs holds the TCP segments' fingerprints apart from recent, whose
	// slots the RoCE packets take in a millisecond: the copy of a
	// handshake's segment that comes seconds later is found here.
	segs [segSlots]packetSeen
	// gone are the last packets whose slots in recent others took, in the
	// order they went (goneNext counts them), up to goneFor after a SYN
	// (synNS): those whose copies are still to come when the SYN's copy
	// tells apart go to owed.
	gone     [goneSlots]packetSeen
	goneNext uint32
	synNS    int64
	// apart are the times between a packet and its copy where the
	// capture is two captures of the same packets merged (each host's,
	// its clock apart from the other's), one for each direction (the
	// clocks' offset plus or minus the path's delay); 0: none learned.
	apart [2]int64
	// byApart: the last copy found was found by apart, d after its
	// original (captureCopy's count).
	byApart bool
	d       int64
	// replayOf is, for the frame last asked about, the frame of the SYN
	// it repeats byte for byte after that SYN's connection ended (0:
	// none), replayAfter nanoseconds later: the capture played again.
	replayOf    uint32
	replayAfter int64
	// owed holds, once apart is known, the packets whose copies are still
	// to come and whose slots in recent others took (another packet, or
	// the same one sent again), by key and ICRC.
	owed map[owedKey]packetSeen
	// sweptNS is when owe last swept owed for room.
	sweptNS int64
	// naks counts the NAKs and RNR NAKs seen: a packet sent again after
	// one is the transport's, not the capture's.
	naks uint32
	// dumpCDCs counts the dump device's CDC frames of the connection
	// directions whose ports hash to each place (dumpDup).
	dumpCDCs [64]uint32
	// number and duplicate are the last frame asked about and the answer
	// (FeedFast, then Feed, ask about the same frame).
	number    int
	duplicate bool
	// otherPath: the copy came by another path than its original
	// (capturePath).
	otherPath bool
	// cutFirst: a cut copy came before the TCP segment or RoCE packet
	// whole (feedCLCOfCut, feedRoCEOfCut), frame cutNumber; a TCP
	// segment's by cutPath (aheadCopies learns another path).
	cutFirst  bool
	cutPath   uint32
	cutNumber uint32
}

// packetSeen is one RoCE packet captureDup remembers: its queue pair,
// opcode and PSN in key (0: none), its length and ICRC.
type packetSeen struct {
	ns     int64
	key    uint64
	icrc   uint32
	length uint32
	naks   uint32 // seenCopies.naks when it went by
	path   uint32 // the capture path it came by (capturePath)
	head   uint32 // a TCP segment's digest without its payload (tcpDup)
	number uint32 // its frame's number (seenCopies.cutNumber)
}

// apartNear is the index of the time apart d is within w of; -1 where
// none is.
func (s *seenCopies) apartNear(d, w int64) int {
	for i, a := range s.apart {
		if a != 0 && d-a <= w && a-d <= w {
			return i
		}
	}
	return -1
}

// apartCopy reports whether a packet like one seen d nanoseconds before
// is its copy by the times two merged captures are apart (apart), and
// follows that time as the clocks drift.
func (s *seenCopies) apartCopy(d int64) bool {
	i := s.apartNear(d, captureDupWindow)
	if i < 0 {
		return false
	}
	s.apart[i] = d
	s.byApart, s.d = true, d
	return true
}

// apartOf is apartCopy for a packet like e seen at ns by path: one that
// came by another path than e may be its other path's copy (within),
// the two merged captures apart.
func (s *seenCopies) apartOf(e *packetSeen, ns int64, path uint32) bool {
	d := ns - e.ns
	if e.path == path {
		return s.apartCopy(d)
	}
	if s.apartNear(d, crossPathWindow) < 0 {
		return false
	}
	s.byApart, s.d = true, d
	return true
}

// owedKey is what a packet in seenCopies.owed is found by: its key and
// ICRC (a TCP segment's digest).
type owedKey struct {
	key  uint64
	icrc uint32
}

// owedCopy reports whether a packet with key, its ICRC (or a TCP
// segment's digest) and length, seen at ns, is the copy of one owed
// holds.
func (s *seenCopies) owedCopy(key uint64, icrc, length uint32, ns int64, path uint32) bool {
	// The entry stays till its time is over (owe): a packet the capture
	// held twice before has two copies to come.
	o, ok := s.owed[owedKey{key, icrc}]
	if !ok || o.length != length || !s.apartOf(&o, ns, path) {
		return false
	}
	s.otherPath = o.path != path
	return true
}

// letGo notes e, whose slot a packet seen at ns takes: before apart is
// known in gone, after it in owed while its copy is still to come.
func (s *seenCopies) letGo(e *packetSeen, ns int64) {
	switch {
	case e.key == 0:
	case s.apart[0] == 0:
		if ns-s.synNS <= goneFor {
			s.gone[s.goneNext%goneSlots] = *e
			s.goneNext++
		}
	case ns-e.ns <= max(s.apart[0], s.apart[1])+captureDupWindow:
		s.owe(e, ns)
	}
}

// owe puts e in owed, making room for it among those whose copies'
// time is over. Full of packets still owed, owed drops e: it sweeps
// again once an eighth of that time went by, not for every packet.
func (s *seenCopies) owe(e *packetSeen, ns int64) {
	if s.owed == nil {
		s.owed = make(map[owedKey]packetSeen)
	}
	if len(s.owed) >= maxOwed {
		horizon := max(s.apart[0], s.apart[1]) + captureDupWindow
		if ns-s.sweptNS < horizon/8 {
			return
		}
		s.sweptNS = ns
		for k, o := range s.owed {
			if ns-o.ns > horizon {
				delete(s.owed, k)
			}
		}
		if len(s.owed) >= maxOwed {
			return
		}
	}
	s.owed[owedKey{e.key, e.icrc}] = *e
}

// learnApart notes that the capture holds a packet and its copy d
// nanoseconds apart, seen at ns, farther than any capture point or path
// makes them: two captures of the same packets merged. The packets gone
// from recent since d before are owed their copies.
func (s *seenCopies) learnApart(d, ns int64) {
	if s.apartCopy(d) {
		return
	}
	s.byApart, s.d = true, d
	if s.apart[0] != 0 {
		s.apart[1] = d
		return
	}
	s.apart[0] = d
	for i := s.goneNext - min(s.goneNext, goneSlots); i != s.goneNext; i++ {
		if e := &s.gone[i%goneSlots]; ns-e.ns <= d+captureDupWindow {
			s.owe(e, ns)
		}
	}
}

// within reports whether a packet like e that came by path at ns is e's
// copy by its time: up to captureDupWindow from it on the same path, up
// to crossPathWindow on another. Before it too: a capture writes frames
// in the order it takes them, which is not always their times' (the
// queues of a NIC, the interfaces of tcpdump -i any, a mirror session's
// copy stamped by the collector's queue). A resend is never the earlier
// of the two: it comes a NAK or the ACK timeout after the packet.
func (e *packetSeen) within(ns int64, path uint32) bool {
	d := ns - e.ns
	if d < 0 {
		d = -d
	}
	return d <= captureDupWindow || e.path != path && d <= crossPathWindow
}

// dupSlots is how many recent packets captureDup remembers: the copies of
// a capture made at two points (each host's, merged) come up to a
// millisecond apart, hundreds of packets between them at full rate.
const dupSlots = 1024

// goneSlots is how many packets seenCopies.gone remembers: over two
// seconds of the lab's ping-pong (some 1,500 packets a second), a few
// milliseconds of a busy link.
const goneSlots = 4096

// goneFor is how long after a SYN seenCopies.gone remembers: two hosts'
// clocks a second apart.
const goneFor = int64(time.Second)

// maxOwed is the most packets seenCopies.owed holds: a tenth of a second
// of a link at a million packets a second, some 10 MiB.
const maxOwed = 1 << 17

// segSlots is how many TCP segments captureDup remembers apart from the
// RoCE packets: an SMC connection's handshake and close are a few
// dozen, seconds apart at most.
const segSlots = 256

// captureDupWindow: a copy the capture point makes comes microseconds
// after the frame (a merge of two hosts' captures: their clocks' skew).
// The RC transport sends a packet again only after a NAK or RNR NAK or
// once its ACK timeout is over (SMC's queue pairs: smc_ib.c's timeout 15,
// about 134 ms), and a responder repeats an ACK only for a request sent
// again.
const captureDupWindow = int64(time.Millisecond)

// crossPathWindow: a packet the capture holds as it came by two paths (the
// wire and a mirror session that copies it to the same capture point,
// two switches' ERSPAN sessions to one collector) comes the second time
// after the mirror's own way there, milliseconds in the lab's emulated
// NICs. On each path a resend comes only after a NAK or the ACK timeout
// (134 ms), as for captureDupWindow; a packet seen on one path and then
// on the other 50 ms later is the same packet. (The copy is found
// while its original's slot in seenCopies.recent holds it: at a few
// thousand packets a second, tens of milliseconds.)
const crossPathWindow = int64(50 * time.Millisecond)

// capturePath names the way f came to the capture point: 0 as it was on
// the wire, else the tunnel that carried it (mirror session, overlay).
func capturePath(f *capture.Frame) uint32 {
	t := f.Tunnel
	if t == nil {
		return 0
	}
	h := uint64(t.Kind)<<32 | uint64(t.ID)
	for _, a := range [...]netip.Addr{t.Src, t.Dst} {
		b := a.As16()
		h = dupMix(dupMix(h, binary.LittleEndian.Uint64(b[:])), binary.LittleEndian.Uint64(b[8:]))
	}
	if t.Outer() {
		// An overlay's frame mirrored by a session around it came by
		// another way than the overlay's frame itself.
		s := &t.Session
		h = dupMix(h, uint64(s.Kind)<<32|uint64(s.ID))
		for _, a := range [...]netip.Addr{s.Src, s.Dst} {
			b := a.As16()
			h = dupMix(dupMix(h, binary.LittleEndian.Uint64(b[:])), binary.LittleEndian.Uint64(b[8:]))
		}
	}
	return uint32(h>>32) | 1
}

// captureDup reports whether f is a RoCE packet the capture already holds,
// its copy: the same queue pair, PSN, opcode, length and ICRC (which
// covers the rest) within captureDupWindow and with no NAK seen between,
// as a mirror session that copies both directions of a port, a capture
// on a bond and its member, or two hosts' captures merged make.
func (t *Tracker) captureDup(f *capture.Frame) bool {
	b := f.BTH
	if b == nil && (f.Dump == nil || f.UDP == nil) && f.TCP == nil {
		return false
	}
	s := &t.seenCopies
	if f.Number != 0 && f.Number == s.number {
		return s.duplicate
	}
	s.number = f.Number
	s.cutFirst, s.byApart, s.replayOf = false, false, 0
	switch {
	case b != nil:
	case f.TCP != nil:
		s.duplicate = s.tcpDup(f, t.byTuple)
		if s.duplicate && s.cutFirst && s.otherPath {
			t.ahead.learn(s.cutPath)
		}
		return s.duplicate
	default:
		s.duplicate = s.dumpDup(f)
		switch {
		case s.duplicate && f.CDC == nil:
			t.keepTwin(f, s.otherPath)
		case s.duplicate:
			t.copiedCDC(f)
		}
		return s.duplicate
	}
	ns := f.UnixNano()
	key := uint64(b.DestQP)<<40 | uint64(b.Opcode)<<32 | uint64(b.PSN) | 1<<63
	// A response (ACK, read response) takes the slot across the table
	// from its request's: the two carry the same PSN, and where both
	// sides' queue pairs have the same number (as Linux numbers them) the
	// ACK took the request's slot before the request's copy came by
	// another path. A run of PSNs takes a run of slots.
	slot := (b.DestQP*0x9E3779B1 ^ b.PSN) % dupSlots
	if b.Opcode >= decode.OpReadResponseFirst {
		slot ^= dupSlots / 2
	}
	e := &s.recent[slot]
	icrc, length := b.ICRC, roceLength(f)
	if b.TrailerCut {
		icrc, length = cutDigest(f)
	}
	path := capturePath(f)
	// The same packet cut and whole (a mirror session that truncates
	// its copies, ERSPAN's T bit, beside the packet as it went; two
	// interfaces captured with two snap lengths) has digests that cannot
	// agree: its length says it, and the windows (within) that no resend
	// comes so soon after it without a NAK.
	// Two captures merged hold every packet twice, its times apart
	// (apart), NAKs between them or not.
	s.duplicate = length != 0 && e.key == key && (e.icrc == icrc && e.length == length || e.length^length == lengthCut) &&
		(e.naks == s.naks && e.within(ns, path) || s.apart[0] != 0 && s.apartOf(e, ns, path))
	if s.duplicate {
		s.otherPath = e.path != path
		// (Two merged captures apart: the cut copy was followed as it
		// came, the capture's first; the packet whole is its copy.)
		if e.length&lengthCut != 0 && length&lengthCut == 0 && !s.byApart {
			// The copy came cut before the packet whole: what the cut
			// left unread is read from the packet (feedRoCEOfCut).
			s.cutFirst, s.cutNumber = true, e.number
			switch {
			case s.otherPath:
				t.ahead.learn(e.path)
			case path == 0:
				// Two interfaces captured with two snap lengths, the
				// shorter one's copies first.
				t.ahead.learn(cutWirePath)
			}
		}
		return true
	}
	if len(s.owed) > 0 && length != 0 && s.owedCopy(key, icrc, length, ns, path) {
		s.duplicate = true
		return true
	}
	// A NAK counts before it is remembered: its own copy is a copy.
	if a := f.AETH; a != nil {
		if ty := a.Syndrome.Type(); ty == decode.AETHNak || ty == decode.AETHRNRNak {
			s.naks++
		}
	}
	// Field by field: a composite literal is built on the stack and
	// copied in 16-byte moves that wait on its narrower stores (the most
	// of captureDup's time in a profile of smcdump -Y with a tracker field).
	s.letGo(e, ns)
	e.ns, e.key, e.icrc, e.length, e.naks, e.path, e.number = ns, key, icrc, length, s.naks, path, uint32(f.Number)
	return false
}

// dumpDup reports whether f, a frame of ANCK's dump device, is one the
// capture already holds: the same addresses, ports and bytes within
// captureDupWindow, and no CDC frame of that connection direction between
// (a write of the same bytes again comes with a CDC of its own,
// smc_tx_rdma_writes then smc_cdc_msg_send in net/smc/smc_tx.c; a CDC
// frame is never the same twice, its sequence number moving). The dump
// device's frames carry nothing else to tell a copy by: no IP
// identification, no UDP checksum (smc_dump_fill_skb_header, ANCK
// net/smc/smc_stats.c).
func (s *seenCopies) dumpDup(f *capture.Frame) bool {
	src, dst := ipAddrs(f)
	a, b := src.As16(), dst.As16()
	digest := crc32.Update(crc32.Update(crc32.ChecksumIEEE(a[:]), crc32.IEEETable, b[:]), crc32.IEEETable, f.UDP.Payload)
	key := uint64(f.UDP.SrcPort)<<48 | uint64(f.UDP.DstPort)<<32 | 1<<31
	h := (uint32(f.UDP.SrcPort)*31 + uint32(f.UDP.DstPort)) % uint32(len(s.dumpCDCs))
	e := &s.recent[(digest^uint32(key>>32))%dupSlots]
	ns, length := f.UnixNano(), uint32(len(f.UDP.Payload))
	path := capturePath(f)
	if e.key == key && e.icrc == digest && e.length == length && (e.naks == s.dumpCDCs[h] && e.within(ns, path) &&
		(f.CDC != nil || ns-e.ns <= dumpDataCopyWindow && e.ns-ns <= dumpDataCopyWindow) || s.apart[0] != 0 && s.apartOf(e, ns, path)) {
		s.otherPath = e.path != path
		return true
	}
	if len(s.owed) > 0 && s.owedCopy(key, digest, length, ns, path) {
		return true
	}
	if f.CDC != nil {
		s.dumpCDCs[h]++
	}
	s.letGo(e, ns)
	e.ns, e.key, e.icrc, e.length, e.naks, e.path = ns, key, digest, length, s.dumpCDCs[h], path
	return false
}

// dumpDataCopyWindow: a dump device's data frame the capture holds twice
// is one frame seen twice at once (the device is the host's own, no
// mirror or merge of two hosts doubles the data only its receiver dumps,
// smc_cdc_msg_recv_action); the same bytes again a CDC later, that CDC
// missed by the capture, are the next write (a ping-pong of one message).
const dumpDataCopyWindow = int64(10 * time.Microsecond)

// tcpDup reports whether f, a TCP segment, is one the capture already
// holds: the same addresses, ports, sequence and acknowledgement numbers,
// flags, window, checksum, IPv4 identification and first payload bytes
// within captureDupWindow, as tcpdump -i any makes of loopback traffic (out and
// in) or of a bond and its member. A segment sent again is a datagram of
// its own: Linux numbers a connection's datagrams (ip_select_ident_segs
// in include/net/ip.h), and it comes a retransmission timeout
// (TCP_RTO_MIN, 200 ms) or a round trip of duplicate ACKs later with a
// new timestamp. A copy the capture damaged differs in its bytes or fails
// its checksum, where the checksum is computed (the handshake's segments),
// and is no copy.
func (s *seenCopies) tcpDup(f *capture.Frame, conns map[tcpKey]*Conn) bool {
	tc := f.TCP
	if len(tc.Contents) < 20 || f.TCPSum.Damaged() {
		// A segment whose checksums fail is no copy and no original: of
		// two copies, one damaged, the other is followed.
		return false
	}
	// A hash of what a copy shares (a CRC of it cost a fallback capture's
	// TCP frames a third of their time): the header from the sequence
	// number to the urgent pointer (flags, window and checksum among
	// them), the addresses and IPv4 identification, the length, and the
	// payload's first bytes (the checksum covers the rest, and a bulk
	// flow's segments are not read whole for this).
	h := dupMix(dupMix(0, binary.LittleEndian.Uint64(tc.Contents[4:12])), binary.LittleEndian.Uint64(tc.Contents[12:20]))
	switch ip4, ip6 := f.IPv4, f.IPv6; {
	case ip4 != nil && len(ip4.SrcIP) == 4 && len(ip4.DstIP) == 4:
		h = dupMix(h, uint64(binary.LittleEndian.Uint32(ip4.SrcIP))<<32|uint64(binary.LittleEndian.Uint32(ip4.DstIP)))
		h = dupMix(h, uint64(ip4.Id))
	case ip6 != nil && len(ip6.SrcIP) == 16 && len(ip6.DstIP) == 16:
		for _, a := range [...][]byte{ip6.SrcIP, ip6.DstIP} {
			h = dupMix(dupMix(h, binary.LittleEndian.Uint64(a)), binary.LittleEndian.Uint64(a[8:]))
		}
	default:
		return false
	}
	// head is the segment but its payload: a copy a mirror cut (ERSPAN's
	// T bit) beside the segment whole shares it, and its length on the
	// wire (the IP length's), not its payload.
	head := uint32(h ^ h>>32)
	wire := f.TCPWireLen()
	p := tc.Payload[:min(len(tc.Payload), 64)]
	h = dupMix(h, uint64(len(tc.Payload)))
	for ; len(p) >= 8; p = p[8:] {
		h = dupMix(h, binary.LittleEndian.Uint64(p))
	}
	for _, b := range p {
		h = dupMix(h, uint64(b))
	}
	digest := uint32(h ^ h>>32)
	key := uint64(tc.SrcPort)<<48 | uint64(tc.DstPort)<<32 | uint64(tc.Seq)
	hash := head ^ tc.Seq
	e := &s.recent[hash%dupSlots]
	ns, length := f.UnixNano(), uint32(wire)+1
	if wire > len(tc.Payload) {
		length |= lengthCut
	}
	path := capturePath(f)
	if e.key == key && e.within(ns, path) &&
		(e.icrc == digest && e.length == length || e.head == head && e.length^length == lengthCut) {
		s.otherPath = e.path != path
		if e.length&lengthCut != 0 && length&lengthCut == 0 {
			s.cutFirst, s.cutPath, s.cutNumber = true, e.path, e.number
		}
		return true
	}
	// Two captures merged hold every segment twice, its times apart.
	if s.apart[0] != 0 {
		if e.key == key && e.icrc == digest && e.length == length && s.apartOf(e, ns, path) {
			s.otherPath = e.path != path
			return true
		}
		if len(s.owed) > 0 && s.owedCopy(key, digest, length, ns, path) {
			return true
		}
	}
	// A handshake's or close's segment and its copy seconds later: two
	// captures merged, their clocks apart. A segment sent again differs
	// from it where it can be told (identified): a new IPv4
	// identification, a new TCP timestamp once a millisecond went by.
	// The first such copy is the handshake's while the connection it
	// opened runs (running): the same handshake after its connection
	// ended is the capture played again (tcpreplay, a benchmark's
	// rounds), not a copy: replayOf says it (whatever the times, a
	// capture clock's step back between them too). (The segments between
	// them, a fallback's data among them, do not take its slot.)
	var g *packetSeen
	if tc.SYN || tc.FIN || tc.RST {
		g = &s.segs[hash%segSlots]
		if d := ns - g.ns; g.key == key && g.icrc == digest && g.length == length && g.path == path && g.number != uint32(f.Number) {
			switch {
			case d > 0 && (s.apart[0] != 0 && s.apartCopy(d) || tc.SYN && identified(f) && running(f, conns, g.number)):
				s.otherPath = false
				s.learnApart(d, ns)
				return true
			case tc.SYN && !tc.ACK && identified(f) && !running(f, conns, g.number):
				s.replayOf, s.replayAfter = g.number, d
			}
		}
	}
	s.letGo(e, ns)
	e.ns, e.key, e.icrc, e.length, e.naks, e.path, e.head, e.number = ns, key, digest, length, 0, path, head, uint32(f.Number)
	if g != nil {
		*g = *e
		if tc.SYN {
			s.synNS = ns
		}
	}
	return false
}

// running reports whether the connection of f, a TCP segment, is known
// since frame since (its original's) and has not ended: not closed
// (Conn.Closed), its TCP not either (a FIN each way, or a RST).
func running(f *capture.Frame, conns map[tcpKey]*Conn, since uint32) bool {
	src, dst := ipAddrs(f)
	c := conns[makeTCPKey(netip.AddrPortFrom(src, uint16(f.TCP.SrcPort)), netip.AddrPortFrom(dst, uint16(f.TCP.DstPort)))]
	return c != nil && c.FirstFrame != 0 && c.FirstFrame <= int(since) && !c.Closed() && !(c.Flow[0].FIN && c.Flow[1].FIN) && !c.Flow[0].RST && !c.Flow[1].RST
}

// identified reports whether f, a TCP segment, differs from the same
// segment sent again more than a millisecond later: Linux gives every
// datagram of a connection its own IPv4 identification
// (ip_select_ident_segs), and a TCP timestamp option its sender's clock
// in milliseconds (tcp_options_write).
func identified(f *capture.Frame) bool {
	if f.IPv4 != nil && f.IPv4.Id != 0 {
		return true
	}
	o := f.TCP.Contents[20:min(int(f.TCP.DataOffset)*4, len(f.TCP.Contents))]
	for len(o) > 0 {
		switch o[0] {
		case 0: // end of options
			return false
		case 1: // no-operation
			o = o[1:]
			continue
		case 8: // timestamps
			return true
		}
		if len(o) < 2 || o[1] < 2 || int(o[1]) > len(o) {
			return false
		}
		o = o[o[1]:]
	}
	return false
}

// dupMix folds v into the hash h (a multiply and a shift: tcpDup's).
func dupMix(h, v uint64) uint64 {
	h = (h ^ v) * 0x9E3779B97F4A7C15
	return h ^ h>>29
}

// cutDigest stands for the ICRC and length of a RoCEv2 packet whose
// trailer the snap length cut: a CRC of its IPv4 identification and its
// first payload bytes, and the BTH payload length its UDP length claims
// (marked lengthCut); 0, 0 where there is no UDP layer. A resend is a
// new IP datagram (Linux's rxe gives it a new identification, as for
// every packet); the copies of one packet a mirror makes keep it, and the
// snap length may keep fewer of their bytes (a VLAN tag takes four).
func cutDigest(f *capture.Frame) (digest, length uint32) {
	if f.UDP == nil || f.UDP.Length < roceOverhead {
		return 0, 0
	}
	var id [2]byte
	if f.IPv4 != nil {
		id = [2]byte{byte(f.IPv4.Id >> 8), byte(f.IPv4.Id)}
	}
	p := f.BTH.Payload
	digest = crc32.Update(crc32.ChecksumIEEE(id[:]), crc32.IEEETable, p[:min(len(p), 16)])
	return digest, uint32(f.UDP.Length-roceOverhead) | lengthCut
}

// roceOverhead is what a RoCEv2 packet's UDP length counts beside its
// BTH payload: the UDP header, the BTH and the ICRC.
const roceOverhead = 8 + 12 + 4

// lengthCut marks a packetSeen length as a cut packet's (cutDigest): the
// length its UDP header claims, which the whole packet's BTH payload has.
const lengthCut = 1 << 31

// roceLength is the length of a RoCE packet's BTH payload, not the
// frame's: the two copies a mirror of both directions of a port makes may
// differ in what comes before the packet (one tagged with a VLAN, the
// other not), never in the packet itself. The direct path's frames have
// their BTH, not their UDP layer (capture.Reader.SetDirectFeed).
func roceLength(f *capture.Frame) uint32 {
	return uint32(len(f.BTH.Payload))
}

// feedDup counts f, a copy captureDup found, and notes it: nothing in it
// is followed again.
func (t *Tracker) feedDup(f *capture.Frame) {
	in := &t.in
	in.number, in.ns = f.Number, f.UnixNano()
	in.isTCP, in.isRoCE, in.isDump, in.isCopy = false, false, false, true
	// What feed notes of any frame is the copy's own, not left from the
	// frame fill last read (the fast path's frames are not read into in):
	// a damaged record before it; not its cut, which nothing follows.
	in.clcN, in.snapCut, in.skip, in.clocked = 0, 0, nil, false
	if f.RecordErr != nil {
		in.skip, _ = f.RecordErr.(*capture.SkipError)
	}
	t.feed(in)
}

// feedFrame is the general path: the frame copied into t.in, then feed.
func (t *Tracker) feedFrame(f *capture.Frame) {
	in := &t.in
	t.fillFrame(in, f)
	t.feed(in)
	in.tcp.frame = nil
}

// fillFrame copies what the tracker follows of f into in (fill), with
// what a RoCE packet's mended byte and its WRITE's bytes need of f.
func (t *Tracker) fillFrame(in *input, f *capture.Frame) {
	fill(in, f)
	if in.isRoCE {
		r := &in.roce
		if r.icrcBad && !r.ipSumBad && !r.mended && !r.zeroed && !r.lengthBad && isRequest(r.opcode) {
			t.mendExpected(in, f)
		}
		r.data, r.dataLen, r.dataCut = nil, 0, false
		if r.opcode >= opWriteFirst && r.opcode <= opWriteOnlyImm {
			d := f.BTH.Data()
			// Its length on the wire: a FIRST's is the path MTU its
			// MIDDLEs' places follow from (placeWriteNext), also where
			// the snap length cut it.
			r.dataLen = uint32(f.BTH.DataWireLen())
			if r.opMended {
				// The data after the RETH and immediate data the opcode
				// sent names (mendOpcode): the frame is whole, its ICRC
				// verifying with that opcode.
				d = afterBTH(f)
				n := 0
				switch r.opcode {
				case opWriteFirst, opWriteOnly:
					n = 16
				case opWriteOnlyImm:
					n = 16 + 4
				case opWriteLastImm:
					n = 4
				}
				d = d[min(n, len(d)):]
				r.dataLen = uint32(len(d))
			}
			r.dataCut = uint32(len(d)) < r.dataLen
			if t.opts.Stream != nil {
				r.data = d
				if o := r.mend.Off - (cap(f.Data) - cap(d)); r.mended && o >= 0 && o < len(d) {
					r.data = bytes.Clone(d)
					r.data[o] = r.mend.Sent
				}
			}
		}
	}
}

// ipAddrs returns f's IP addresses, IPv4 unmapped; invalid without an IP layer.
func ipAddrs(f *capture.Frame) (src, dst netip.Addr) {
	switch {
	case f.IPv4 != nil && len(f.IPv4.SrcIP) == 4 && len(f.IPv4.DstIP) == 4:
		return netip.AddrFrom4([4]byte(f.IPv4.SrcIP)), netip.AddrFrom4([4]byte(f.IPv4.DstIP))
	case f.IPv4 != nil:
		src, _ = netip.AddrFromSlice(f.IPv4.SrcIP)
		dst, _ = netip.AddrFromSlice(f.IPv4.DstIP)
		return src.Unmap(), dst.Unmap()
	case f.IPv6 != nil:
		src, _ = netip.AddrFromSlice(f.IPv6.SrcIP)
		dst, _ = netip.AddrFromSlice(f.IPv6.DstIP)
	}
	return src, dst
}

// What the snap length cut of a frame the tracker follows (input.snapCut).
const (
	snapCutCLC  = 1 + iota // CLC bytes of an SMC connection's TCP segment
	snapCutRoCE            // a RoCEv2 packet's headers, or a SEND's SMC message
	snapCutSYN             // a SYN's TCP options, where the SMC option would be
)

// snapCutOf tells what the snap length cut of f (f.Cut) that the tracker
// reads: the CLC bytes of a segment of a connection followed as SMC; a
// SYN's options, the SMC option perhaps among them; of a RoCE packet its
// BTH or extension headers (RETH, AETH, ImmDt), or of a SEND Only's
// message what the tracker takes from it: an LLC message's fields for its
// step (decode.LLC.StepCaptured), a CDC's fields, an unknown message
// whole. A WRITE's payload cut is not: its length is in the RETH.
func snapCutOf(f *capture.Frame) uint8 {
	switch {
	case f.TCP != nil:
		if f.SMCFlow && f.TCPWireLen() > len(f.TCP.Payload) {
			return snapCutCLC
		}
	case f.IPv4 != nil && f.IPv4.Protocol == layers.IPProtocolTCP && f.IPv4.FragOffset == 0:
		return synCut(f.IPv4.Payload)
	case f.IPv6 != nil && f.IPv6.NextHeader == layers.IPProtocolTCP:
		return synCut(f.IPv6.Payload)
	case f.BTH != nil || f.GRH != nil || f.UDP != nil && f.UDP.DstPort == 4791:
		switch b := f.BTH; {
		case b == nil, b.ExtCut: // no BTH, or the extension headers after it cut (decode.BTH.DecodeCut)
			return snapCutRoCE
		case f.LLC != nil:
			if !f.LLC.StepCaptured() {
				return snapCutRoCE
			}
		case f.CDC == nil && (b.Opcode == decode.OpSendOnly || b.Opcode == decode.OpSendOnlyImm):
			// Neither an LLC nor a CDC message (a CDC decodes only
			// with its fields, decode.CDC.DecodeCut): too little of it
			// was kept to tell which.
			if len(b.Data()) < min(44, b.DataWireLen()) {
				return snapCutRoCE
			}
		}
	}
	return 0
}

// cutSYNOf reads the ports and sequence number of the SYN or SYN-ACK in
// f, whose TCP header the snap length cut inside its options (synCut).
func cutSYNOf(f *capture.Frame, ns int64) cutSYN {
	var tcp []byte
	if f.IPv4 != nil {
		tcp = f.IPv4.Payload
	} else if f.IPv6 != nil {
		tcp = f.IPv6.Payload
	}
	if len(tcp) < 14 {
		return cutSYN{}
	}
	src, dst := ipAddrs(f)
	be := binary.BigEndian
	from := netip.AddrPortFrom(src, be.Uint16(tcp[0:]))
	return cutSYN{key: makeTCPKey(from, netip.AddrPortFrom(dst, be.Uint16(tcp[2:]))), client: from, seq: be.Uint32(tcp[4:]), ns: ns,
		ack: tcp[13]&0x10 != 0}
}

// synCut tells a TCP header cut inside its options (the frame has no
// TCP layer then) whose flags say SYN: the SMC option (kind 254) that
// makes a connection SMC's may be among the options cut.
func synCut(tcp []byte) uint8 {
	if len(tcp) >= 14 && tcp[13]&0x02 != 0 && len(tcp) < int(tcp[12]>>4)*4 {
		return snapCutSYN
	}
	return 0
}

// snapCutText says what the snap length cut of in's frame, the finding's
// first (the finding's own line names the frames).
func snapCutText(in *input) string {
	what := "a RoCE packet's headers or the LLC or CDC message of its SEND"
	switch in.snapCut {
	case snapCutCLC:
		what = "CLC bytes of an SMC connection's segment"
	case snapCutSYN:
		what = "a SYN's TCP options, where the SMC option would be"
	}
	if in.snapKept >= in.snapWire {
		// Whole in the file: the mirror session that carried it cut
		// the frame inside (ERSPAN's T bit, or an IP length that claims
		// more than the tunnel carried: capture.Tunnel.Truncated).
		return "the first was truncated by the mirror session that carried it (an ERSPAN T bit, or an IP length claiming more than the tunnel carried), cutting " + what
	}
	return fmt.Sprintf("the first kept %d of its %d bytes, cutting %s", in.snapKept, in.snapWire, what)
}

// roceAddrs returns the addresses that key a RoCE frame's queue pair: for
// RoCEv1 the GRH's GIDs, which CLC and LLC announce, else the IP ones.
func roceAddrs(f *capture.Frame) (src, dst addr) {
	switch {
	case f.GRH != nil:
		return addrOf(f.GRH.SGID), addrOf(f.GRH.DGID)
	case f.IPv4 != nil:
		return addrOfIP(f.IPv4.SrcIP), addrOfIP(f.IPv4.DstIP)
	case f.IPv6 != nil:
		return addrOfIP(f.IPv6.SrcIP), addrOfIP(f.IPv6.DstIP)
	}
	return addr{}, addr{}
}

// zeroedSMC takes a CDC or LLC frame whose ICRC fails, no one byte
// explaining it, for one whose damage lies in the bytes its sender sends
// as zeros, where its ICRC verifies with those zeroed
// (capture.Frame.ICRCMendSMC):
// every other byte is the sender's (mendWhole, zeroed); or with those and
// one byte more, which is mended as mendRoCE mends one alone.
func zeroedSMC(r *roceIn, f *capture.Frame) {
	m, exact, ok := f.ICRCMendSMC()
	switch {
	case !ok:
		return
	case !exact:
		// One byte more, outside them: mended as one byte alone is (the
		// message decoded again from the frame's bytes, whose reserved
		// ones shape nothing of it).
		mendRoCE(r, f, m)
		r.zeroed = true
		return
	}
	// The message as decoded (fill) is the one sent: its reserved bytes
	// shape nothing of it.
	r.mendWhole, r.zeroed = true, true
}

// mendRoCE takes the one byte that explains why a RoCE frame fails its
// ICRC (capture.Frame.ICRCMend): every other byte is the sender's, so the
// request is placed by its wire key and PSN as sent (the byte mended in
// them where it is theirs). mendWhole says that the content decoded is
// the sender's too: the byte is in a field that shapes none of it (the
// ICRC itself, a source port, an identification, a partition key) or in
// one taken as mended here.
func mendRoCE(r *roceIn, f *capture.Frame, m decode.ICRCMend) {
	r.mended, r.mend = true, m
	at := func(c []byte) int { return cap(f.Data) - cap(c) }
	var ip []byte
	// The addresses' offsets in the IP header, its length, the packet's.
	var src, dst, hdr, end int
	switch {
	case f.IPv4 != nil:
		ip, src, dst, hdr, end = f.Data[at(f.IPv4.Contents):], 12, 16, len(f.IPv4.Contents), int(f.IPv4.Length)
	case f.IPv6 != nil:
		ip, src, dst, hdr, end = f.Data[at(f.IPv6.Contents):], 8, 24, 40, 40+int(f.IPv6.Length)
	default:
		return
	}
	n := dst - src
	sent := func(b []byte, off int) []byte {
		b = bytes.Clone(b)
		b[off] = m.Sent
		return b
	}
	o := m.Off - at(ip)
	b := m.Off - at(f.BTH.Contents)
	whole, key := true, false
	switch {
	case o >= src && o < src+n:
		r.key.src, r.mendField, key = addrOfIP(sent(ip[src:src+n], o-src)), "IP source address", true
	case o >= dst && o < dst+n:
		r.key.dst, r.mendField, key = addrOfIP(sent(ip[dst:dst+n], o-dst)), "IP destination address", true
	case b >= 5 && b <= 7:
		r.key.qpn, r.mendField, key = uint64(binary.BigEndian.Uint32(sent(f.BTH.Contents[4:8], b-4))&0xFFFFFF), "BTH DestQP", true
	case b == 8:
		r.ackReq, r.mendField = m.Sent&0x80 != 0, "BTH AckReq"
	case b >= 9 && b <= 11:
		r.psn, r.mendField = binary.BigEndian.Uint32(sent(f.BTH.Contents[8:12], b-8))&0xFFFFFF, "BTH PSN"
	case b == 2 || b == 3:
		r.mendField = "BTH partition key"
	case o >= 4 && o <= 7 && f.IPv4 != nil:
		r.mendField = "IPv4 identification and fragment fields"
	case o == hdr || o == hdr+1:
		r.mendField = "UDP source port"
	case o == hdr+2 || o == hdr+3:
		r.mendField = "UDP destination port" // capture.roceByICRC read it as RoCEv2's
	case o >= end-4 && o < end:
		r.mendField = "ICRC"
	case f.RETH != nil && len(f.RETH.Contents) == 16 && m.Off >= at(f.RETH.Contents) && m.Off < at(f.RETH.Contents)+16:
		h := sent(f.RETH.Contents, m.Off-at(f.RETH.Contents))
		r.va, r.rkey, r.dmaLen = binary.BigEndian.Uint64(h[0:8]), binary.BigEndian.Uint32(h[8:12]), binary.BigEndian.Uint32(h[12:16])
		r.mendField = "RETH"
	case f.AETH != nil && len(f.AETH.Contents) == 4 && m.Off >= at(f.AETH.Contents) && m.Off < at(f.AETH.Contents)+4:
		h := sent(f.AETH.Contents, m.Off-at(f.AETH.Contents))
		r.syndrome, r.msn = h[0], binary.BigEndian.Uint32(h)&0xFFFFFF
		r.mendField = "AETH"
	case f.CDC != nil && f.CDC.Cut == 0 && m.Off >= at(f.CDC.Contents) && m.Off < at(f.CDC.Contents)+len(f.CDC.Contents):
		// The CDC message as sent, decoded again; the link's kind (ANCK's
		// credits byte) is the frame's.
		var c decode.CDC
		r.mendField = "CDC message"
		if c.DecodeFromBytes(sent(f.CDC.Contents, m.Off-at(f.CDC.Contents)), gopacket.NilDecodeFeedback) != nil {
			whole = false
			break
		}
		c.ANCK = f.CDC.ANCK
		fillCDC(&r.cdc, &c)
	case f.LLC != nil && f.LLC.Cut == 0 && inFrame(f, f.LLC.Contents) && m.Off >= at(f.LLC.Contents) && m.Off < at(f.LLC.Contents)+len(f.LLC.Contents):
		// The LLC message as sent, decoded again (one that the frame
		// holds whole: not one put together from several SENDs).
		var l decode.LLC
		r.mendField = "LLC message"
		if l.DecodeFromBytes(sent(f.LLC.Contents, m.Off-at(f.LLC.Contents)), gopacket.NilDecodeFeedback) != nil || !l.StepCaptured() {
			whole = false
			break
		}
		fillLLC(&r.llc, &l)
	case f.SMCMalformed && r.opcode == opSendOnly && m.Off >= at(f.BTH.Data()):
		// A SEND on an SMC-R queue pair that did not decode because of
		// the byte: the message as sent, classified and decoded again.
		whole = decodeSMC(r, sent(f.BTH.Data(), m.Off-at(f.BTH.Data())), f.SMCCredits)
		switch {
		case r.hasCDC:
			r.mendField = "CDC message"
		case r.hasLLC:
			r.mendField = "LLC message"
		default:
			r.mendField = "SEND payload"
		}
	case r.opcode >= opWriteFirst && r.opcode <= opWriteOnlyImm && m.Off >= at(f.BTH.Data()):
		// Bytes for the peer's RMBE: the tracker reads their length, and
		// with Options.Stream the bytes, mended there (Tracker.Feed).
		r.mendField = "RDMA WRITE data"
	case b < 0:
		r.mendField, whole = "IP or UDP header", false
	case b == 0:
		whole = mendOpcode(r, f, m.Sent)
		r.mendField = "BTH opcode"
	case b < 2:
		r.mendField, whole = "BTH opcode or flags", false
	default:
		r.mendField, whole = "transport headers or payload", false
	}
	r.mendWhole = whole
	if key {
		placedSMC(r, f)
	}
}

// mendOpcode reads the packet of f, whose BTH opcode the capture's copy
// damaged, as sent with opcode op (the byte mend found): an RDMA WRITE
// Only's RETH and data, or a SEND Only's SMC message, are the bytes after
// the BTH (the extension headers the damaged opcode named are not
// there), up to its pad and ICRC. It reports whether the content is
// known so: for other opcodes, only the request's place is.
func mendOpcode(r *roceIn, f *capture.Frame, op uint8) bool {
	r.opcode, r.opMended = op, true
	r.hasRETH, r.hasAETH, r.hasCDC, r.hasLLC, r.hasRWWI = false, false, false, false, false
	r.va, r.rkey, r.dmaLen = 0, 0, 0
	p := afterBTH(f)
	switch op {
	case opWriteOnly:
		if len(p) < 16 {
			return false
		}
		r.hasRETH = true
		r.va, r.rkey, r.dmaLen = binary.BigEndian.Uint64(p[0:8]), binary.BigEndian.Uint32(p[8:12]), binary.BigEndian.Uint32(p[12:16])
		return true
	case opSendOnly:
		return decodeSMC(r, p, f.SMCCredits)
	}
	return false
}

// afterBTH is the bytes of f's RoCE packet after its BTH, up to its pad
// and ICRC, whatever extension headers its opcode names.
func afterBTH(f *capture.Frame) []byte {
	b := f.BTH
	from, to := cap(f.Data)-cap(b.Contents)+12, cap(f.Data)-cap(b.Payload)+len(b.Payload)
	if len(b.Contents) < 12 || from > to || to > len(f.Data) {
		return nil
	}
	return f.Data[from:to]
}

// mendExpected takes a damaged request that no one byte explains (its
// ICRC fails, capture.Frame.ICRCMend found none) as the request its
// link direction expected next where its ICRC verifies with that
// direction's addresses, DestQP and next PSN in place of those it holds
// (capture.Frame.ICRCMendAs), or does with one byte more changed: the
// damage hit those fields, in more bytes than one. The directions tried
// are its queue pair's, else those with two of the three it holds; one
// must verify.
func (t *Tracker) mendExpected(in *input, f *capture.Frame) {
	r := &in.roce
	var (
		found   qpKey
		psn     uint32
		m       decode.ICRCMend
		exact   bool
		matches int
	)
	try := func(l *Link, d Dir) {
		rc := &l.RC[d]
		if l.retired || !l.keyed[d] || !rc.havePSN {
			return
		}
		k := l.keys[d]
		n := 4
		if f.IPv6 != nil {
			n = 16
		}
		km, ke, ok := f.ICRCMendAs(decode.ICRCKey{Src: addrBytes(k.src, n), Dst: addrBytes(k.dst, n), QPN: uint32(k.qpn), PSN: rc.nextPSN})
		if ok && !ke && rc.lastFirst.holds(rc.nextPSN) {
			// The expected PSN is a later packet of the WRITE whose
			// FIRST came last: a requester sends a message's packets
			// one after the other (IBA Vol. 1 9.5), so only a MIDDLE or
			// LAST may be it. A byte more changed makes a CRC match in
			// a few of 10^6 packets by chance; this rules most out.
			op := r.opcode
			if km.Off == cap(f.Data)-cap(f.BTH.Contents) {
				op = km.Sent
			}
			ok = op == opWriteMiddle || op == opWriteLast || op == opWriteLastImm
		}
		if ok {
			found, psn, m, exact = k, rc.nextPSN, km, ke
			matches++
		}
	}
	if ref, ok := t.lookupQP(&r.key); ok {
		try(ref.link, ref.dir)
	} else {
		for _, l := range t.links {
			for d := range l.keys {
				if sameOfKey(&l.keys[d], &r.key) >= 2 {
					try(l, Dir(d))
				}
			}
		}
	}
	if matches != 1 {
		return
	}
	var what []string
	if found.src != r.key.src || found.dst != r.key.dst {
		what = append(what, "addresses")
	}
	if found.qpn != r.key.qpn {
		what = append(what, fmt.Sprintf("DestQP 0x%06x", found.qpn))
	}
	if psn != r.psn {
		what = append(what, fmt.Sprintf("PSN 0x%06x", psn))
	}
	if exact {
		r.mendWhole = true
	} else {
		mendRoCE(r, f, m)
	}
	if found != r.key {
		placedSMC(r, f)
	}
	r.key, r.psn = found, psn
	r.mendAs = strings.Join(what, " and ")
}

// decodeSMC decodes p, the payload of a SEND Only as sent on an SMC-R
// link, as capture's decoder does (decode.DecodeSMCSend; ANCK's where
// credits): the LLC or CDC message it is, else the malformed message its
// first byte names (r.whyBad the error). It reports whether p is an LLC or
// CDC message.
func decodeSMC(r *roceIn, p []byte, credits bool) bool {
	var (
		c decode.CDC
		l decode.LLC
	)
	isCDC, err := decode.DecodeSMCSend(p, len(p), &c, &l)
	switch {
	case err != nil:
	case isCDC:
		c.ANCK = credits
		fillCDC(&r.cdc, &c)
		r.hasCDC = true
	case l.StepCaptured():
		l.ANCK = credits
		fillLLC(&r.llc, &l)
		r.hasLLC = true
	}
	r.malformed = err != nil
	if !r.lengthBad {
		r.whyBad = err
	}
	return r.hasCDC || r.hasLLC
}

// placedSMC decodes the SEND Only of f, whose key the capture's copy held
// damaged (its source, destination or DestQP, mended), as the message it
// is: capture's classifier looked its queue pair up by the damaged key,
// found no SMC-R link and left it unclassified.
func placedSMC(r *roceIn, f *capture.Frame) {
	if r.opcode == opSendOnly && f.CDC == nil && f.LLC == nil && !f.SMCMalformed && len(f.BTH.Data()) > 0 {
		p := f.BTH.Data()
		if o := r.mend.Off - (cap(f.Data) - cap(p)); r.mended && o >= 0 && o < len(p) {
			p = bytes.Clone(p)
			p[o] = r.mend.Sent
		}
		decodeSMC(r, p, false)
	}
}

// addrBytes is address a as a packet carries it in n (4 or 16) bytes.
func addrBytes(a addr, n int) []byte {
	b := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), a.hi), a.lo)
	return b[16-n:]
}

// fillCDC copies what the tracker needs of CDC c into m, field by field: a
// composite literal is built on the stack and copied in wider moves than
// it was written with, a store-forwarding stall on every CDC.
func fillCDC(m *cdcIn, c *decode.CDC) {
	m.seq, m.token = c.Seq, c.Token
	m.prod.Wrap, m.prod.Count = c.Prod.Wrap, c.Prod.Count
	m.cons.Wrap, m.cons.Count = c.Cons.Wrap, c.Cons.Count
	m.prodFlags, m.connFlags = uint8(c.ProdFlags), uint8(c.ConnFlags)
	m.credits, m.anck, m.noSeq = c.Credits, c.ANCK, false
	m.creditsCut = c.Cut > 0 && !c.Captured(decode.CDCCreditsEnd)
}

// inFrame reports whether b lies in f's frame buffer (not in one a
// decoder put together from several frames).
func inFrame(f *capture.Frame, b []byte) bool {
	if len(b) == 0 || cap(b) > cap(f.Data) {
		return false
	}
	return &f.Data[:cap(f.Data)][cap(f.Data)-cap(b)] == &b[0]
}

// fill copies what the tracker needs from f into in, reusing in's memory.
func fill(in *input, f *capture.Frame) {
	in.number = f.Number
	in.ns = f.UnixNano()
	in.isTCP, in.isRoCE, in.isDump, in.isCopy = false, false, false, false
	in.clcN, in.snapCut, in.skip, in.clocked = 0, 0, nil, false
	in.carried = f.Tunnel != nil
	in.wire, in.unread = f.CI.Length, false
	if f.RecordErr != nil {
		in.skip, _ = f.RecordErr.(*capture.SkipError)
	}
	if f.Cut {
		in.snapCut, in.snapKept, in.snapWire = snapCutOf(f), f.CI.CaptureLength, f.CI.Length
		in.cutSYN = cutSYN{}
		if in.snapCut == snapCutSYN {
			in.cutSYN = cutSYNOf(f, in.ns)
		}
	}
	switch {
	case f.TCP != nil && (f.IPv4 != nil || f.IPv6 != nil):
		in.isTCP = true
		src, dst := ipAddrs(f)
		s := &in.tcp
		tc := f.TCP
		s.src = netip.AddrPortFrom(src, uint16(tc.SrcPort))
		s.dst = netip.AddrPortFrom(dst, uint16(tc.DstPort))
		s.syn, s.ack, s.fin, s.rst = tc.SYN, tc.ACK, tc.FIN, tc.RST
		s.oddRST = tc.RST && (tc.SYN || tc.FIN || tc.PSH || tc.URG)
		s.seq, s.ackNum = tc.Seq, tc.Ack
		s.smcOpt = f.SMCOption
		// The segment's length on the wire: the sequence space it takes,
		// whatever the capture kept of it.
		s.payload = f.TCPWireLen()
		s.cut = s.payload - len(tc.Payload)
		s.hdr = int(tc.DataOffset) * 4
		s.notCLC = f.NotCLC
		s.sumBad = f.TCPSum.Checked && !f.TCPSum.OK
		s.sum = [2]uint16{f.TCPSum.Got, f.TCPSum.Want}
		s.ipSumBad = f.TCPSum.IPSumBad
		if s.ipSumBad {
			s.ipSum = f.IPv4Sum()
		}
		for i, c := range f.CLC {
			if in.clcN == len(in.clc) {
				in.clc = append(in.clc, clcIn{})
			}
			fillCLC(&in.clc[in.clcN], c, &in.eids)
			in.clc[in.clcN].inside = f.CLCInside[i]
			in.clc[in.clcN].malformed = c.Malformed != nil
			in.clc[in.clcN].raw = c.Contents
			in.clcN++
		}
		s.clcErrs, s.retyped = 0, 0
		for _, e := range f.CLCErr {
			if errors.Is(e, capture.ErrSwallowed) || errors.Is(e, capture.ErrMended) {
				continue // a note on a message that decoded, not an error
			}
			if s.clcErrs == 0 {
				s.clcErr = e.Error()
			}
			s.clcErrs++
		}
		s.frame, s.namedSrc, s.namedDst = f, netip.AddrPort{}, netip.AddrPort{}
		s.away, s.flagsLost = false, false
	case f.BTH != nil:
		in.isRoCE = true
		r := &in.roce
		r.key.src, r.key.dst = roceAddrs(f)
		b := f.BTH
		r.opcode = uint8(b.Opcode)
		r.key.qpn, r.psn, r.ackReq = uint64(b.DestQP), b.PSN, b.AckReq
		r.hasRETH = f.RETH != nil
		if r.hasRETH {
			r.va, r.rkey, r.dmaLen = f.RETH.VA, f.RETH.RKey, f.RETH.DMALen
		} else {
			// A WRITE whose RETH the snap length cut (BTH.ExtCut) names
			// no RMB: not the last WRITE's.
			r.va, r.rkey, r.dmaLen = 0, 0, 0
		}
		r.hasAETH = f.AETH != nil
		if r.hasAETH {
			r.syndrome, r.msn = uint8(f.AETH.Syndrome), f.AETH.MSN
		}
		r.hasCDC = f.CDC != nil
		if r.hasCDC {
			fillCDC(&r.cdc, f.CDC)
		}
		r.hasRWWI = f.RWWI != nil
		if r.hasRWWI {
			w := f.RWWI
			r.rwwi = rwwiIn{token: w.Token, op: w.Op, diffCons: w.DiffCons, credits: w.Credits, hasCredits: w.HasCredits,
				prodFlags: uint8(w.ProdFlags), connFlags: uint8(w.ConnFlags)}
		}
		r.malformed = f.SMCMalformed
		r.whyBad = nil
		if r.malformed || f.LengthBad {
			r.whyBad = f.Err
		}
		r.icrcOK, r.icrcBad = f.ICRC.Checked && f.ICRC.OK, f.ICRC.Checked && !f.ICRC.OK
		r.ipSumBad, r.ipSum = f.ICRC.IPSumBad, f.ICRC.IPSum
		r.cutSumOK, r.shownLate = false, false
		r.icrcCut = !f.ICRC.Checked && f.Cut
		if r.icrcCut && f.IPv4 != nil {
			// The snap length cut the ICRC: the IPv4 header's checksum
			// is all that judges the packet, as where the ICRC matches
			// (ipSumBad), but for its addresses, which no ICRC vouches
			// for (icrcCut).
			if ip := f.IPv4.Contents; !decode.IPv4HeaderSumOK(ip) {
				r.icrcBad, r.ipSumBad = true, true
				r.ipSum = f.IPv4Sum()
			} else {
				r.cutSumOK = len(ip) >= 20 && ip[10]|ip[11] != 0
			}
		}
		r.lengthBad = f.LengthBad
		if r.icrcBad {
			r.icrcGot, r.icrcWant = f.ICRC.Got, f.ICRC.Want
		}
		if r.hasMAC = f.Eth != nil && len(f.Eth.DstMAC) == 6; r.hasMAC {
			r.dstMAC = [6]byte(f.Eth.DstMAC)
		}
		r.ipHdrOK = false
		if (r.icrcBad || r.lengthBad) && f.IPv4 != nil {
			r.ipHdrOK = ipv4Vouches(f.IPv4.Contents)
		}
		// An LLC message the snap length cut before the fields a link
		// takes from it is followed as a SEND of no known content.
		r.hasLLC = f.LLC != nil && f.LLC.StepCaptured()
		if r.hasLLC {
			fillLLC(&r.llc, f.LLC)
		}
		// Last: a mended byte may be in what the lines above read.
		r.mended, r.mendWhole, r.mendAs, r.opMended, r.zeroed = false, false, "", false, false
		if r.icrcBad && !r.ipSumBad {
			if m, ok := f.ICRCMend(); ok {
				mendRoCE(r, f, m)
			} else {
				zeroedSMC(r, f)
			}
		}
		if r.lengthBad && f.LengthMend() {
			// Only a length was damaged: the rest is the sender's.
			r.mendWhole = true
		}
	case f.Dump != nil && f.UDP != nil:
		// ANCK's dump device: the UDP ports are the TCP connection's,
		// from the sender's side (smc_dump_fill_skb_header).
		in.isDump = true
		src, dst := ipAddrs(f)
		in.dumpFrom = netip.AddrPortFrom(src, uint16(f.UDP.SrcPort))
		in.dumpTo = netip.AddrPortFrom(dst, uint16(f.UDP.DstPort))
		in.dumpCDC = f.CDC != nil
		if !in.dumpCDC {
			// Data: it belongs to the connection, the CDC after it says
			// how much (the stream keeps the bytes till then).
			in.dumpData = f.Dump.Payload
			break
		}
		c, m := f.CDC, &in.roce.cdc
		m.seq, m.token = c.Seq, c.Token
		m.prod.Wrap, m.prod.Count = c.Prod.Wrap, c.Prod.Count
		m.cons.Wrap, m.cons.Count = c.Cons.Wrap, c.Cons.Count
		m.prodFlags, m.connFlags = uint8(c.ProdFlags), uint8(c.ConnFlags)
		// A dump of a write-with-immediate is a CDC made up with seqno 0
		// (smc_dump_cdc_msg_rwwi): no sequence to follow.
		m.credits, m.anck, m.noSeq = c.Credits, true, c.Seq == 0
	default:
		if in.unread = unreadable(f); in.unread {
			in.unreadFrom(f)
		}
	}
}

// fillCLC copies what the tracker follows of c into m. EIDs come from
// eids: a capture has a few, and a string per Proposal and Accept was
// most of the tracker's garbage on short connections.
func fillCLC(m *clcIn, c *decode.CLC, eids *textcache.Cache) {
	*m = clcIn{typ: c.Type, version: c.Version, flag: c.Flag, anck: c.ANCK}
	m.uncaptured = !c.StepCaptured()
	switch c.Type {
	case decode.CLCTypeProposal:
		if c.Proposal.HasV2Ext && c.Proposal.V2Ext.EIDs() > 0 {
			m.eid = eids.String(c.Proposal.V2Ext.EID(0))
		}
		m.offered = offered(c)
		m.gids[0] = c.Proposal.GID
		if c.Proposal.HasV2Ext {
			m.gids[1] = c.Proposal.V2Ext.RoCEv2GID
		}
	case decode.CLCTypeAccept, decode.CLCTypeConfirm:
		a := &c.Accept
		m.smcd = c.TypeV1 == decode.SMCTypeD
		m.eid = eids.String(a.EID)
		if m.smcd {
			m.ep = Endpoint{RMBESize: uint32(decode.RMBESizeBytes(a.DMBESize)), Valid: true}
			break
		}
		m.ep = Endpoint{
			PeerID: a.PeerID, GID: a.GID, MAC: a.MAC, QPN: a.QPN, RKey: a.RKey,
			RMBEIdx: a.RMBEIdx, Token: a.AlertToken,
			RMBESize: uint32(decode.RMBESizeBytes(a.RMBESize)),
			MTU:      uint32(decode.QPMTUBytes(a.QPMTU)),
			VA:       a.RMBVA, PSN: a.PSN, Valid: true,
		}
		if a.HasGIDList && a.GIDs() > 0 {
			m.gids[1] = a.ListGID(0)
		}
		if a.FCECaptured() {
			m.maxLinks, m.maxConns = a.FCE.MaxLinks, a.FCE.MaxConns
			m.ep.HasFCE, m.ep.Direct, m.ep.OS, m.ep.Release = true, a.FCE.Direct, a.FCE.OSType, a.FCE.Release
			m.ep.Host = eids.String(bytes.TrimRight(a.FCE.Hostname, " \x00"))
		}
		if c.ANCK {
			m.ep.ANCK, m.ep.InitCredits = true, a.InitCredits
			m.ep.Vendor, m.ep.VendorAgreed = a.Alibaba(c)
		}
	case decode.CLCTypeDecline:
		m.decline = uint32(c.Decline.Diagnosis)
	}
}

func fillLLC(m *llcIn, l *decode.LLC) {
	*m = llcIn{typ: l.Type, resp: l.Response, anck: l.ANCK}
	switch l.Type.Base() {
	case decode.LLCConfirmLink:
		b := &l.ConfirmLink
		m.mac, m.gid, m.qpn, m.linkID, m.uid = b.MAC, b.GID, b.QPN, b.LinkID, b.LinkUID
		m.maxLinks, m.maxConns = b.MaxLinks, b.MaxConns
		// What the snap length cut decoded as zeros: a UID, max links
		// and max conns are then absent (0 is none of theirs).
		m.uidCut = !l.Captured(34)
		if m.uidCut {
			m.uid = 0
		}
		if !l.Captured(35) {
			m.maxLinks = 0
		}
		if !l.Captured(36) {
			m.maxConns = 0
		}
	case decode.LLCAddLink:
		b := &l.AddLink
		m.mac, m.gid, m.qpn, m.linkID, m.psn = b.MAC, b.GID, b.QPN, b.LinkID, b.PSN
		if !l.Captured(36) {
			m.psn = 0 // absent: the link's first packets give it (LinkEnd.PSN)
		}
		m.reject = b.Rejected
		m.initCredits = b.InitCredits
		trips := b.Triplets()
		m.listN = min(len(trips), len(m.trip))
		if b.V2Ext && !l.Captured(72) {
			m.listN = -1
		}
		for i, tr := range trips {
			// struct smc_llc_msg_add_link_v2_ext: rt[] from byte 72.
			if m.nTrip == len(m.trip) || !l.Captured(72+16*(i+1)) {
				break
			}
			m.trip[m.nTrip] = triplet{tr.RKey, tr.RKeyNew, tr.VANew}
			m.nTrip++
		}
	case decode.LLCAnnounceCredits:
		m.credits = l.AnnounceCredits.Credits
	case decode.LLCDeleteLink:
		b := &l.DeleteLink
		m.linkID, m.reason, m.all, m.orderly = b.LinkID, uint32(b.Reason), b.All, b.Orderly
	case decode.LLCConfirmRKey:
		b := &l.ConfirmRKey
		m.rkey, m.va = b.RKey, b.VA
		m.listN = len(b.OtherLinks())
		for i, o := range b.OtherLinks() {
			// struct smc_llc_msg_confirm_rkey: rtoken[] from byte 17.
			if !l.Captured(17 + 13*(i+1)) {
				break
			}
			m.others[m.nOthers] = rkeyOther{o.LinkID, o.RKey, o.VA}
			m.nOthers++
		}
	case decode.LLCDeleteRKey:
		m.listN = min(len(l.DeleteRKey.RKeyList()), len(m.delRKeys))
		for i, rk := range l.DeleteRKey.RKeyList() {
			// struct smc_llc_msg_delete_rkey: rkey[] from byte 8.
			if m.nDel == len(m.delRKeys) || !l.Captured(8+4*(i+1)) {
				break
			}
			m.delRKeys[m.nDel] = rk
			m.nDel++
		}
	}
}

// offered names what a Proposal offers, e.g. "SMC-Rv2" or "SMC-Rv1+SMC-Dv1".
func offered(c *decode.CLC) string {
	i := 0
	if c.Version >= 2 {
		i = 1 + int(c.TypeV2&3)
	}
	return offeredNames[i][c.TypeV1&3] // 2-bit fields (smc_clc.h)
}

// offeredNames are offered's texts by 1 + the v2 type (0: a v1 message)
// and the v1 type, made once: a string per Proposal was garbage.
var offeredNames = func() (names [5][4]string) {
	for i := range names {
		for v1 := range names[i] {
			var parts []string
			add := func(t decode.SMCType, v string) {
				if t.HasR() {
					parts = append(parts, "SMC-R"+v)
				}
				if t.HasD() {
					parts = append(parts, "SMC-D"+v)
				}
			}
			if i > 0 {
				add(decode.SMCType(i-1), "v2")
			}
			add(decode.SMCType(v1), "v1")
			names[i][v1] = strings.Join(parts, "+")
		}
	}
	return names
}()
