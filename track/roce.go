package track

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
)

func (t *Tracker) newLGR(in *input, inferred bool) *LinkGroup {
	t.nextLGR++
	if n := len(t.spareLGRs); n > 0 {
		// A folded group that nothing points to (recycle): its maps and
		// lists serve again, emptied.
		g := t.spareLGRs[n-1]
		t.spareLGRs = t.spareLGRs[:n-1]
		clear(g.tokens[0])
		clear(g.tokens[1])
		clear(g.pendingRKeys)
		clear(g.links)
		clear(g.conns)
		*g = LinkGroup{
			ID: t.nextLGR, Inferred: inferred, FirstFrame: in.number, Start: in.ts(),
			tokens: g.tokens, pendingRKeys: g.pendingRKeys, expert: g.expert[:0],
			Links: g.Links[:0], Conns: g.Conns[:0], links: g.links[:0], conns: g.conns[:0],
		}
		t.lgrs = append(t.lgrs, g)
		return g
	}
	g := &LinkGroup{
		ID: t.nextLGR, Inferred: inferred, FirstFrame: in.number, Start: in.ts(),
		tokens:       [2]map[uint32]*Conn{{}, {}},
		pendingRKeys: make(map[rkeyKey]pendingRKey),
	}
	t.lgrs = append(t.lgrs, g)
	return g
}

func (t *Tracker) newLink(g *LinkGroup, in *input, inferred bool) *Link {
	t.nextLink++
	var l *Link
	if n := len(t.spareLinks); n > 0 {
		// A folded link that nothing points to (recycle): its history and
		// rkey maps serve again, emptied.
		l = t.spareLinks[n-1]
		t.spareLinks = t.spareLinks[:n-1]
		clear(l.hist)
		clear(l.rkeys[0])
		clear(l.rkeys[1])
		*l = Link{hist: l.hist[:0], rkeys: l.rkeys, Conns: l.Conns[:0], expert: l.expert[:0]}
	} else {
		l = &Link{}
	}
	l.ID, l.LGR, l.lgr, l.Inferred, l.FirstFrame, l.Start, l.lastNS, l.history = t.nextLink, g.ID, g, inferred, in.number, in.ts(), in.ns, &t.history
	g.links = append(g.links, l)
	g.Links = append(g.Links, l.ID)
	t.links = append(t.links, l)
	return l
}

// keyLink makes frames with wire key k resolve to direction d of l. The
// expected first PSN comes from the sender's CLC/ADD_LINK value.
func (t *Tracker) keyLink(l *Link, d Dir, k qpKey) {
	t.byQP[k] = linkRef{l, d}
	t.clearQPCache()
	l.keys[d], l.keyed[d] = k, true
	if u := t.unknownQP[k]; u != nil {
		l.RC[d].Untied += u.writes
	}
	delete(t.unknownQP, k)
	if e := l.end(d); e.PSN != 0 && !l.RC[d].havePSN {
		l.RC[d].nextPSN, l.RC[d].havePSN = e.PSN, true
		l.RC[d].hiShown = (e.PSN - 1) & 0xFFFFFF // none sent before the first
	}
}

// end returns the sending side of direction d.
func (l *Link) end(d Dir) *LinkEnd {
	if d == DirC2S {
		return &l.Client
	}
	return &l.Server
}

// linkByID finds the newest link of g with the given link number.
func (g *LinkGroup) linkByID(id uint8) *Link {
	for i := len(g.links) - 1; i >= 0; i-- {
		if g.links[i].LinkID == id {
			return g.links[i]
		}
	}
	return nil
}

// raiseDropped raises what makes the receiver drop the packet in in: its
// lengths, its IPv4 header checksum, or its ICRC; it returns the finding.
func (t *Tracker) raiseDropped(ms *marks, in *input) expert.ID {
	id := droppedID(&in.roce)
	if id == expert.BadLength {
		t.raiseText(ms, id, in, func() string { return damageText(id, &in.roce, in.roce.whyBad) })
	} else {
		t.raise(ms, id, in)
	}
	return id
}

// droppedID is the finding of what makes the receiver drop r: its
// lengths, else its IPv4 header checksum (the ICRC matching), else its
// ICRC.
func droppedID(r *roceIn) expert.ID {
	switch {
	case r.lengthBad:
		return expert.BadLength
	case r.ipSumBad:
		return expert.BadIPSum
	}
	return expert.BadICRC
}

// roce handles one RoCE packet: find the link direction by (IP src, IP
// dst, DestQP), follow the RC PSN sequence, then the SMC content.
func (t *Tracker) roce(in *input) {
	r := &in.roce
	t.stats.RoCE++
	ref, ok := t.lookupQP(&r.key)
	if ok && (ref.link.State == LinkDeleted || ref.link.lgr.Deleted) && reusedQP(ref.link, ref.dir, in) {
		// The deleted link's queue pairs are destroyed; the numbers
		// name a new link whose setup the capture missed (or damaged):
		// it is resolved as one it joined.
		t.retire(ref.link)
		ok = false
	}
	if !ok && (r.icrcBad && (!r.ipSumBad || r.icrcCut) || r.lengthBad) {
		// (A packet the snap length cut, its IPv4 header checksum
		// failing, may have its addresses damaged: no ICRC says not.)
		if ref, ok = t.damagedQP(in); !ok {
			// Nothing is learned from a packet the receiver drops: not
			// even a link joined mid-stream. Should a responder's ACK
			// cover a request the capture showed nowhere else, this
			// was its copy, damaged (unreadRoCE).
			t.cur.unattached = true
			id := t.raiseDropped(&t.expert, in)
			// Its addresses are the sender's where its IPv4 header
			// verifies (the ICRC may fail for its DestQP or PSN).
			in.unreadAddrs = r.ipHdrOK
			in.unreadSrc, in.unreadDst = r.key.src, r.key.dst
			in.unreadMAC, in.unreadHasMAC = r.dstMAC, r.hasMAC
			in.unreadBTH = false
			t.keepUnread(in, id)
			return
		}
	}
	if !ok && (!r.icrcBad || r.ipSumBad && !r.icrcCut) && !r.lengthBad {
		// A packet whose IPv4 header checksum alone fails has the key
		// its sender gave it too: the ICRC covers its addresses and QP.
		ref, ok = t.firstOfKey(in)
	}
	if !ok && r.icrcCut && !r.icrcBad && !r.lengthBad {
		// The snap length cut the ICRC, which would have shown a DestQP
		// damaged in the capture's copy: a request with its link
		// direction's addresses and the PSN its responder expects next
		// (24 random bits at the start) is that direction's, not a link
		// of its own joined mid-stream.
		if ref, ok = t.damagedQP(in); ok {
			t.raiseText(&ref.link.expert, expert.CaptureCopyDamaged, in, func() string {
				return fmt.Sprintf("DestQP 0x%06x is none of its link's, whose addresses and next PSN 0x%06x it carries; the snap length cut its ICRC", r.key.qpn, r.psn)
			})
		}
	}
	if !ok {
		if ref, ok = t.resolveUnknown(in, r.key); !ok {
			t.cur.unattached = true
			return
		}
	}
	l, d := ref.link, ref.dir
	t.cur.setLink(l)
	t.cur.dir = d
	l.LastFrame, l.lastNS = in.number, in.ns
	if isRequest(r.opcode) {
		l.RC[d].noteAfter(in, t.lastUnread())
	}
	if r.ipSumBad && !r.lengthBad && !l.RC[d].ipSumOK {
		// An IPv4 header checksum that fails where none of the
		// direction's packets showed one that verifies is the capture
		// point's copy (a checksum left to the RNIC, as a host's
		// transmit offload leaves TCP's), not damage: the packet is
		// followed on its ICRC's word, as clcFlow.checkSum follows a
		// handshake segment's. Should a later packet of the direction
		// verify, it was damage after all (sumUnsure).
		if isRequest(r.opcode) {
			l.RC[d].unsureSum(in)
		}
		r.icrcBad, r.ipSumBad = false, false
	}
	if r.icrcBad || r.lengthBad {
		// The receiving RNIC drops a packet whose ICRC does not match
		// (IBA Vol. 1, 9.8.3.1), the receiver's IP layer one whose
		// header checksum fails, and its IP or UDP layer one
		// whose length claims more than it holds: its PSN, ACK and
		// content change nothing at the responder, so they change
		// nothing here. A request is sent again; its copy is followed.
		l.RC[d].damagedShown++
		if isRequest(r.opcode) && l.RC[d].late.take(r.psn, in.ns) {
			t.damagedLate(l, d, in)
			return
		}
		if r.icrcBad && !r.ipSumBad {
			l.RC[d].ICRCBad++
		}
		id := t.raiseDropped(&l.expert, in)
		if wholeCopy(id, r) {
			// Its content is the sender's: the frame is its
			// connection's, whether the responder took it or not.
			t.attributeAhead(l, d, in)
		}
		l.RC[d].holdDamaged(in, id)
		return
	}
	rc := &l.RC[d]
	if (r.icrcOK || r.cutSumOK) && !rc.ipSumOK {
		rc.ipSumOK = true
		t.settleSums(l, d)
	}
	if !isRequest(r.opcode) {
		if r.hasAETH {
			t.ack(l, d, in)
		}
		return
	}
	if len(rc.sumUnsure) > 0 {
		// A copy sent again: the responder dropped the one before.
		rc.sumUnsure = slices.DeleteFunc(rc.sumUnsure, func(u sumUnsure) bool { return u.psn == r.psn && u.number != in.number })
		rc.syncDamaged()
	}
	if rc.damaged && t.damagedResent(l, d, in) {
		return
	}
	if rc.havePSN && rc.Packets == 0 {
		t.firstPSNOff(l, d, in)
	}
	if rc.havePSN && !t.inSequence(l, d, in) {
		return
	}
	if !rc.havePSN {
		rc.hiShown = r.psn
	}
	rc.havePSN, rc.nextPSN = true, (r.psn+1)&0xFFFFFF
	if rc.damaged {
		// The PSN sent again: the responder dropped the damaged copy;
		// unless a pass sent it again with PSNs the responder had taken.
		if g := &rc.goBack; g.passing && g.resent && g.from != r.psn {
			rc.keepPassDamaged(r.psn, in.number, in.ns)
		}
		rc.forgetDamaged(func(psn uint32) bool { return psn != r.psn })
	}
	if !rc.ahead.idle() {
		// The responder takes a request: a run out of sequence ends
		// (the next one gets its own NAK), and what it dropped comes
		// again. The PSN it waited for is on the wire after later ones:
		// sent again after a loss, or, soon after them with no NAK
		// between, possibly put out of order by the capture point (one
		// RC flow takes one path; a tap aggregating links does not keep
		// its order). Then the wire decides (pendingLoss): the
		// responder's NAK, or the PSN that opened the run sent again
		// (the window may still hold an earlier run's PSNs), shows the
		// loss; its ACK of the run with neither, the capture's order.
		if w := &rc.ahead; w.run && !w.shown && in.ns-w.since <= int64(lateMax) {
			upTo := (r.psn + uint32(w.missing)) & 0xFFFFFF
			rc.openGap(pendingLoss{on: true, frame: w.frame, since: w.since, missing: w.missing, lo: rc.nextPSN, upTo: upTo, fresh: !rc.lastDup, carried: in.carried,
				onResend: rc.lastDup, held: w.has(0), requests: w.requests,
				number: in.number, ns: in.ns, takenAgain: rc.goBack.takenAgain})
		} else if !w.goBack {
			t.lossShown(l, d, in)
		}
		rc.ahead.run = false
		rc.ahead.shift(1)
		if rc.ahead.empty() {
			rc.endRun()
		} else {
			rc.dropKept(rc.nextPSN)
		}
	}
	rc.Packets++
	rc.lastPSN, rc.lastFrame = r.psn, in.number
	if !rc.haveMAC && r.hasMAC {
		rc.mac, rc.haveMAC = r.dstMAC, true
	}
	t.content(l, d, in)
}

// reusedQP reports whether the request in in, on the wire key of direction
// d of l, a deleted link (its caller asks first), is one of a new link whose queue pairs got the
// same numbers: an RNIC may hand out a destroyed QP's number again, and
// Linux destroys a link's QP once a DELETE_LINK ends it (smc_link_clear in
// net/smc/smc_core.c). The old QP sends nothing new after that: a
// CONFIRM_LINK, the first message of every link, or a PSN further from
// the one its responder expects than a requester goes back or ahead (a new
// link starts at a random PSN, smcr_link_init), is the new link's. A
// packet the capture damaged proves nothing.
func reusedQP(l *Link, d Dir, in *input) bool {
	r := &in.roce
	if !isRequest(r.opcode) || r.icrcBad || r.lengthBad || r.ipSumBad {
		return false
	}
	if confirmLink(r) {
		return true
	}
	rc := &l.RC[d]
	if !rc.havePSN {
		return false
	}
	dd := psnDiff(r.psn, rc.nextPSN)
	return dd <= -aheadBits || dd >= aheadBits
}

// inSequence follows the RC PSN sequence of direction d of l as its
// responder does, and reports whether the request in in is the one the
// responder takes now (PSN the one expected), whose content is followed.
//
// RC delivers in PSN order (IBA Vol. 1, 9.7.5.1.1-2): a responder takes
// the PSN it expects, acknowledges a PSN before it again (a duplicate, sent
// again after a lost ACK) without acting on it, and drops a PSN ahead of it:
// it NAKs the first of such a run with a PSN sequence error and drops the
// rest until the expected PSN comes, and the requester goes back to that
// PSN and sends on from there. A capture point before the responder shows
// all of it in the responder's order: a request lost before the capture
// point, or one overtaken (reordering), makes the requests after it a run
// out of sequence, which the wire shows again later. The tracker follows
// the content of the copies the responder takes, once each, in PSN order,
// as the responder does: Linux's rxe counts the same runs and duplicates
// (out_of_seq_request, duplicate_request; lab sample lossy.pcap).
//
// A capture that only missed frames looks the same at first: a run out of
// sequence. The responder's ACK (or NAK) of a PSN at or past the expected
// one says that it took the missing ones, and so does a run that lasts
// longer than a requester could wait or that outgrows the window: the
// tracker then goes on from there and follows the run's requests it kept
// (resync), and the PSNs it never saw are not captured (RC.NotCaptured),
// not lost. So the run's finding (roce.rc.psn_gap) waits for the network's
// word: the responder's NAK of the PSN it expects, or that PSN on the wire
// after later ones (lossShown).
func (t *Tracker) inSequence(l *Link, d Dir, in *input) bool {
	r := &in.roce
	rc := &l.RC[d]
	dd := psnDiff(r.psn, rc.nextPSN)
	if dd != 0 {
		rc.lastDup = dd < 0
	} else if rc.ahead.has(0) {
		// The expected PSN sent again after the responder dropped its
		// copy held out of sequence: a resend as a duplicate is.
		rc.lastDup = true
	}
	g := &rc.goBack
	g.follow(r.psn)
	if dd < 0 && rc.late.take(r.psn, in.ns) {
		next := g.passing && (g.last+1)&0xFFFFFF == r.psn
		g.step(r.psn, true, true, rc.hiShown)
		rc.shown(r.psn)
		if len(g.late) > 0 {
			// A late step of a pass settles what a duplicate would
			// (one sent alone that this step passes over).
			t.settleGoBack(l, d, in)
		}
		g.noteLate(lateReq{psn: r.psn, number: in.number, ns: in.ns, carried: in.carried, pass: g.id, lone: !next})
		g.noted = len(g.late)
		t.reordered(l, d, in)
		return false
	}
	// The pass goes on, past its duplicates or not. A PSN the
	// capture showed before (one the responder took, or one it
	// dropped out of sequence) is sent again.
	seen := dd < 0 || dd < aheadBits && rc.ahead.has(uint32(dd))
	if dd < 0 {
		g.unanswered++
		if g.acked && psnDiff(r.psn, g.ackPSN) <= 0 {
			g.dupReqs++ // one the responder's next ACK answers (dupACK)
		}
	}
	onPass := g.passing && g.resent && psnDiff(r.psn, g.last) > 0
	g.step(r.psn, seen, false, rc.hiShown)
	rc.shown(r.psn)
	if g.passing && dd >= 0 && r.psn == g.nak && g.nakNS != 0 && in.ns-g.nakNS <= int64(lateMax) {
		// The PSN the responder NAKed, as a step of the pass: a copy
		// sent again by its nature (the responder NAKs the PSN it
		// waits for when a later one comes), so the pass sends again.
		g.resent, onPass = true, true
	}
	if len(g.late) > 0 && (seen || onPass) {
		t.settleGoBack(l, d, in)
	}
	if !seen && dd != 0 || !rc.ahead.idle() {
		// maxPSN is kept while PSNs ahead are seen; in a plain
		// sequence the highest PSN is the one before the expected.
		hi := rc.maxPSN
		if rc.ahead.idle() {
			hi = (rc.nextPSN - 1) & 0xFFFFFF
		}
		if !seen && psnDiff(r.psn, hi) < 0 {
			// First seen after later PSNs: lost before the capture point
			// and sent again, or overtaken.
			rc.Late++
			t.cur.outOfOrder = true
		} else if !seen {
			hi = r.psn
		}
		rc.maxPSN = hi
	}
	for i := range rc.gapPend {
		p := &rc.gapPend[i]
		fresh := p.fresh
		p.fresh = false
		if !seen || !p.on {
			continue
		}
		switch {
		case psnDiff(r.psn, p.late()) < 0:
			// The requester went back past the late PSN (a timeout, or
			// a NAK of an earlier run): what it sends again of the
			// gap's run says nothing of it.
			p.wentBack = true
		case r.psn == p.late():
			p.again = true
		case p.holds(r.psn) && !p.wentBack && (p.again || fresh):
			// A PSN of the pending gap's run sent again from the late
			// PSN on (the requester went back to it: the late one sent
			// again, or its one copy the first of the resend): the
			// responder dropped it, the loss was the network's. (A
			// resend that does not begin at the late PSN answers no
			// NAK of it: a responder that got the run first would have
			// NAKed the late PSN, and the requester gone back to that.)
			t.pendShown(l, d, i, in)
		}
	}
	if seen && dd == 0 {
		g.takenAgain++
	}
	if seen {
		rc.Retrans++
		t.stats.Retrans++
		t.cur.retrans = true
		t.raise(&l.expert, expert.RCRetransmission, in)
		switch {
		case r.hasLLC:
			// The same message on the same PSN: the transport sent it
			// again; the peer acts on one copy only.
			t.raiseText(&l.expert, expert.LLCRetransmitted, in, func() string { return llcName(&r.llc) })
		case in.snapCut == snapCutRoCE && r.opcode == opSendOnly:
			// Which message it sent again its whole copy may say, should
			// the capture hold one after it (feedRoCEOfCut).
			rc.cutPSN, rc.cut = r.psn, cutResent
		}
	}
	switch {
	case dd == 0:
		return true
	case dd < 0:
		// A duplicate: the responder acknowledges it again and leaves it.
		rc.Dups++
		c := rc.connOf(r.psn)
		if c == nil {
			// Older than the PSNs remembered: a pass sent again after a
			// loss, or a copy the capture showed late.
			c = t.requestConn(l, d, in, false)
		}
		if c != nil {
			t.touchConn(c, in, d)
			if t.recording(c) {
				t.note(c, in, d, "RoCE", fmt.Sprintf("retransmission PSN %#06x", r.psn))
			}
		}
		return false
	case dd < aheadBits && (!rc.ahead.run || in.ns-rc.ahead.since < int64(runLife)):
		// Ahead of the expected PSN: the responder drops it.
		rc.OutOfSeq++
		t.cur.outOfSeq = true
		if !rc.ahead.run {
			rc.ahead.open(in.ns, in.number, int(dd), rc.nextPSN)
			t.cur.psnGap = int(dd)
		}
		if !seen {
			rc.ahead.set(uint32(dd))
		}
		rc.ahead.requests++
		rc.keep(in)
		t.attributeAhead(l, d, in)
		return false
	}
	// Beyond the window, or a run older than a requester waits: the
	// capture missed frames the responder took. Follow the run's kept
	// requests, then this one.
	if !rc.ahead.run {
		t.cur.psnGap = int(dd)
	}
	t.resync(l, d, r.psn, in)
	return psnDiff(r.psn, rc.nextPSN) == 0
}

// resync makes next the PSN that the responder of direction d of l
// expects, when the capture shows that it took the PSNs before it (an ACK
// or NAK of the responder, or a run out of sequence that cannot be one):
// the requests kept from the run are followed in PSN order (their frames
// went by: the findings they raise are on their objects, with their frame
// numbers, not on a frame), the others are missing from the capture.
func (t *Tracker) resync(l *Link, d Dir, next uint32, in *input) {
	rc := &l.RC[d]
	n := psnDiff(next, rc.nextPSN)
	if n <= 0 || rc.resyncing {
		return
	}
	// What the run held before next the responder took: not out of
	// sequence after all. The rest the capture never showed.
	held := rc.ahead.count(uint32(min(n, aheadBits)))
	rc.OutOfSeq -= held
	missed := int(n) - held
	if rc.damaged {
		missed -= t.damagedTaken(l, d, next, in)
	}
	if missed > 0 && len(rc.unplaced) > 0 {
		missed -= t.unplacedTaken(l, d, missed, in)
	}
	unread := 0
	if missed > 0 && len(t.unread) > 0 {
		unread = t.unreadRoCE(l, d, missed, uint32(n), in)
		missed -= unread
	}
	if missed > 0 {
		t.notCaptured(l, d, missed, in)
	}
	if missed > 0 || unread > 0 {
		// Dated by the newest frame so far: an ACK stamped before the
		// frames before it (a clock stepped back) came after them.
		rc.late.open(rc.nextPSN, uint32(n), &rc.ahead, t.lastNS)
	}
	kept := rc.kept
	sort.SliceStable(kept, func(i, j int) bool { return psnDiff(kept[i].roce.psn, kept[j].roce.psn) < 0 })
	saved := t.cur
	// A request followed here may settle another link's run (a failover
	// CDC, a DELETE_LINK: settleRun), which is followed in turn, inside
	// this one, with an input of its own.
	outer := t.replaying
	t.replaying, rc.resyncing = true, true
	rin := &t.replayIn
	if outer {
		rin = new(input)
	}
	expect := rc.nextPSN
	for i := range kept {
		k := &kept[i]
		if psnDiff(k.roce.psn, rc.nextPSN) < 0 || psnDiff(k.roce.psn, next) >= 0 {
			continue
		}
		if k.roce.psn != expect && expect != rc.nextPSN {
			// Another hole in the run: notCaptured said so of the
			// first; a CDC after this one explains its gap too.
			t.uncaptured(l, d)
		}
		expect = (k.roce.psn + 1) & 0xFFFFFF
		rin.number, rin.ns, rin.isTCP, rin.isRoCE, rin.roce, rin.snapCut = k.number, k.ns, false, true, k.roce, k.snapCut
		t.cur.reset(k.number)
		t.cur.setLink(l)
		t.cur.dir = d
		rc.Packets++
		rc.lastPSN, rc.lastFrame = k.roce.psn, k.number
		t.content(l, d, rin)
	}
	t.replaying, rc.resyncing = outer, false
	*rin = input{}
	t.cur = saved
	if expect != next && expect != rc.nextPSN {
		t.uncaptured(l, d) // a hole between the run's last and next
	}
	rc.nextPSN = next
	rc.ahead.run = false
	rc.ahead.shift(uint32(n))
	if rc.ahead.empty() {
		rc.endRun()
	} else {
		rc.dropKept(next)
	}
}

// lossShown raises roce.rc.psn_gap for the open run out of sequence of
// direction d of l, once, when the wire shows that the responder did not
// get the PSN it waits for (its NAK, or that PSN sent again): the frames
// were lost on the way, not by the capture. The finding names the run's
// first frame; the frame that shows it carries it.
func (t *Tracker) lossShown(l *Link, d Dir, in *input) bool {
	w := &l.RC[d].ahead
	if !w.run || w.shown {
		return false
	}
	w.shown = true
	rc := &l.RC[d]
	for i := range rc.gapPend {
		if p := &rc.gapPend[i]; p.on && !p.shown {
			p.shown, p.takenShown = true, rc.goBack.takenAgain
		}
	}
	if t.heldDamaged(l, d) {
		return false
	}
	rc.PSNGaps++
	rc.PSNMissing += w.missing
	t.cur.expert |= 1 << expert.PSNGap
	l.expert.add(expert.PSNGap, w.frame, w.since, "")
	return true
}

// pendingLoss is a run out of sequence whose first PSN came soon after
// it with no NAK between (roce): lost and sent again, or put out of
// order by the capture point, until the wire says which.
type pendingLoss struct {
	on             bool
	frame, missing int
	since          int64
	lo, upTo       uint32 // from the PSN after the late one to the one that opened the run
	// wentBack: the requester sent again a PSN before the late one
	// meanwhile (inSequence); again: it sent the late one again; fresh:
	// no request came since the late one, and the one before it was no
	// duplicate (the late one does not go on a resend already under way).
	wentBack, again, fresh bool
	carried                bool // a tunnel carried the late one (input.carried)
	// onResend: the late one came right after a duplicate, as a step of
	// a resend under way (go-back-N) rather than on its own; held: a
	// copy of it was held out of sequence before (the one sent first,
	// this one counted its retransmission); number and ns are its
	// frame's.
	onResend, held bool
	// requests: how many the run held when the late one came, each
	// counted dropped out of sequence.
	requests int
	number   int
	ns       int64
	// takenAgain: goBack.takenAgain when it opened; takenShown, when the
	// wire first showed a loss after (shown): the requests taken again
	// since are resends of that loss.
	takenAgain, takenShown int
	shown                  bool
}

// late is the PSN that came late, filling the run's hole.
func (p *pendingLoss) late() uint32 { return (p.lo - 1) & 0xFFFFFF }

// keptFrom is the first PSN from psn on that rc keeps no request of (the
// requests of a run out of sequence, resync).
func (rc *RC) keptFrom(psn uint32) uint32 {
	for slices.ContainsFunc(rc.kept, func(k keptReq) bool { return k.roce.psn == psn }) {
		psn = (psn + 1) & 0xFFFFFF
	}
	return psn
}

// named reports whether a NAK of psn is about the gap: psn is the late
// PSN or one of the run's after it.
func (p *pendingLoss) named(psn uint32) bool {
	return psnDiff(psn, p.late()) >= 0 && psnDiff(psn, p.upTo) <= 0
}

// holds reports whether psn is among the run's first PSNs after the late
// one: requests the responder dropped, were the late one lost.
func (p *pendingLoss) holds(psn uint32) bool {
	return psnDiff(psn, p.lo) >= 0 && psnDiff(psn, p.upTo) <= 0
}

// maxPendingGaps bounds the gaps of a direction pending at once: a
// go-back-N burst can open one before the responder's word on the one
// before it has been shown.
const maxPendingGaps = 3

// openGap adds p to rc's pending gaps, in place of the oldest when they
// are as many as maxPendingGaps (that one then says nothing).
func (rc *RC) openGap(p pendingLoss) {
	at := 0
	for i := range rc.gapPend {
		if !rc.gapPend[i].on {
			at = i
			break
		}
		if rc.gapPend[i].since < rc.gapPend[at].since {
			at = i
		}
	}
	rc.gapPend[at] = p
}

// gapsPending reports whether a gap of rc is pending: an ACK may settle
// it (ack).
func (rc *RC) gapsPending() bool {
	for i := range rc.gapPend {
		if rc.gapPend[i].on {
			return true
		}
	}
	return false
}

// pendingLate reports whether psn is the late PSN of a pending gap of rc.
func (rc *RC) pendingLate(psn uint32) bool {
	for i := range rc.gapPend {
		if rc.gapPend[i].on && rc.gapPend[i].late() == psn {
			return true
		}
	}
	return false
}

// pendShown raises pending gap i of direction d of l as lossShown
// would have, now that the wire shows the loss (a NAK, a resend).
func (t *Tracker) pendShown(l *Link, d Dir, i int, in *input) {
	rc := &l.RC[d]
	p := rc.gapPend[i]
	rc.gapPend[i] = pendingLoss{}
	rc.PSNGaps++
	rc.PSNMissing += p.missing
	t.cur.expert |= 1 << expert.PSNGap
	l.expert.add(expert.PSNGap, p.frame, p.since, "")
}

// damagedQP finds the link direction of a damaged request or
// acknowledgement whose queue pair no link has (the damage hit its DestQP
// or an address): the one link direction with two of its three (source,
// destination, DestQP) whose responder expects the request's PSN or one
// shortly after, or, for an ACK or NAK, whose requester sent the PSN it
// names shortly before. None, or more than one, leaves it with no link.
func (t *Tracker) damagedQP(in *input) (linkRef, bool) {
	r := &in.roce
	req := isRequest(r.opcode)
	if !r.icrcBad && !r.icrcCut || !req && !r.hasAETH {
		return linkRef{}, false
	}
	var found linkRef
	n := 0
	for _, l := range t.links {
		if l.retired {
			continue
		}
		for d := range l.keys {
			rc := &l.RC[d]
			same := sameOfKey(&l.keys[d], &r.key)
			if !req {
				// The ACK travels on the key of its direction; it
				// answers the requests of the other.
				rc = &l.RC[Dir(d).Reverse()]
			}
			if !l.keyed[d] || same < 2 || !rc.havePSN {
				continue
			}
			if dd := psnDiff(r.psn, rc.nextPSN); req && dd >= 0 && dd < aheadBits || !req && dd < 0 && dd >= -aheadBits {
				found = linkRef{l, Dir(d)}
				n++
			}
		}
	}
	return found, n == 1
}

// firstOfKey finds the link direction of a request whose wire key no
// link has where it is the direction's first packet as the CLC messages
// announced it but for one of the three parts of its key: the one
// direction with two of them (an address no RoCE device has, which only
// a damaged CLC copy gives, stands for any: unknownEnds) that has seen
// no packet and whose first PSN
// (the sender's CLC or ADD_LINK value) is the request's, or one shortly
// before it (the requests between the capture holds damaged, or missed
// them: 24 random bits at the start leave no doubt). The CLC copy that
// keyed it was damaged in the capture (a byte of its QPN or GID; the hosts
// went on): the direction is keyed again by the request, whose ICRC
// verifies.
func (t *Tracker) firstOfKey(in *input) (linkRef, bool) {
	r := &in.roce
	if !isRequest(r.opcode) {
		return linkRef{}, false
	}
	var found linkRef
	var first uint32
	n := 0
	for _, l := range t.links {
		if l.retired || l.State == LinkDeleted {
			continue
		}
		for d := range l.keys {
			rc := &l.RC[d]
			if !l.keyed[d] || rc.Packets > 0 || !rc.havePSN {
				continue
			}
			switch same := sameOfKey(&l.keys[d], &r.key) + unknownEnds(&l.keys[d], &r.key); {
			case same >= 2:
				if dd := psnDiff(r.psn, rc.nextPSN); dd >= 0 && dd < aheadBits {
					found, first = linkRef{l, Dir(d)}, rc.nextPSN
					n++
				} else if p, ok := psnByteOff(r.psn, rc.nextPSN, confirmLink(r)); ok && rc.nextPSN == l.end(Dir(d)).PSN {
					found, first = linkRef{l, Dir(d)}, p
					n++
				}
			case same == 1 && r.psn == rc.nextPSN && confirmLink(r) &&
				r.llc.qpn == l.end(Dir(d)).QPN:
				// The link's CONFIRM_LINK at its first PSN, naming its
				// sender's queue pair as the Accept or Confirm did: the
				// first message on a new link (smcr_serv_conf_first_link,
				// smcr_clnt_conf_first_link), where that CLC copy had
				// two parts of the key damaged (a GID and the peer's QP).
				found = linkRef{l, Dir(d)}
				n++
			}
		}
	}
	if n != 1 {
		return linkRef{}, false
	}
	t.rekey(found.link, found.dir, r.key, in, "its first packet")
	if first != found.link.RC[found.dir].nextPSN {
		t.psnOff(found.link, found.dir, first, in)
	}
	return found, true
}

// firstPSNOff: the first request direction d of l takes, whose ICRC
// verifies, is none of those the first PSN its CLC or ADD_LINK value
// announced leads to, but psnByteOff finds that value one byte off the
// PSN its requests began at: the copy the capture holds was damaged there
// (its key whole). The direction's first PSN is that one, and the
// damaged requests held against the announced one are held against it.
func (t *Tracker) firstPSNOff(l *Link, d Dir, in *input) {
	rc := &l.RC[d]
	if dd := psnDiff(in.roce.psn, rc.nextPSN); dd >= 0 && dd < aheadBits || rc.nextPSN != l.end(d).PSN {
		// (A responder's ACK moved it from the announced one: its word
		// that the announced one was the sender's.)
		return
	}
	p, ok := psnByteOff(in.roce.psn, rc.nextPSN, confirmLink(&in.roce))
	if !ok {
		return
	}
	t.psnOff(l, d, p, in)
}

// psnOff makes p the first PSN of direction d of l in place of the one a
// damaged copy announced, and says so in the link's history.
func (t *Tracker) psnOff(l *Link, d Dir, p uint32, in *input) {
	rc := &l.RC[d]
	l.addHistory(in, textEvent(fmt.Sprintf("%s first PSN 0x%06x where its CLC or ADD_LINK message announced 0x%06x: a byte of its copy damaged", d, p, rc.nextPSN)))
	t.firstPSN(l, d, p)
}

// announcedAgain takes the first PSN of direction d of c's link from ep,
// what a verified copy of the CLC message of its sender says, where the
// copy c was placed from is damaged (its checksum failing) and the
// direction has sent nothing yet: the segment sent again, or the
// capture's other copy of it.
func (t *Tracker) announcedAgain(c *Conn, d Dir, ep *Endpoint, in *input) {
	l := c.link
	if l == nil {
		return
	}
	e, rc := l.end(d), &l.RC[d]
	if e.PSN == ep.PSN || rc.Packets != 0 || !rc.havePSN || rc.nextPSN != e.PSN {
		return
	}
	l.addHistory(in, textEvent(fmt.Sprintf("%s first PSN 0x%06x, as a verified copy of its CLC message says, where the damaged copy read 0x%06x", d, ep.PSN, e.PSN)))
	e.PSN = ep.PSN
	t.firstPSN(l, d, ep.PSN)
}

// firstPSN makes p the first PSN direction d of l is expected to send.
func (t *Tracker) firstPSN(l *Link, d Dir, p uint32) {
	rc := &l.RC[d]
	for i := range rc.unplaced {
		if rc.unplaced[i].at == rc.nextPSN {
			rc.unplaced[i].at = p
		}
	}
	rc.nextPSN, rc.hiShown = p, (p-1)&0xFFFFFF
}

// psnByteOff reports whether psn is the first PSN, or one of the
// psnOffAhead after it, of a direction whose CLC copy announced a first
// PSN one byte off it, and returns that first PSN: the copy's damage hit
// a byte of its PSN as well as its key. Only a high or middle byte,
// unless the request is a CONFIRM_LINK (first: a link's first message,
// smcr_serv_conf_first_link and smcr_clnt_conf_first_link in
// net/smc/af_smc.c, so at the first PSN): a low byte damaged leaves the
// first PSN among those before psn, not known. The two other bytes (16
// random bits) and how near psn is leave little doubt.
func psnByteOff(psn, announced uint32, first bool) (uint32, bool) {
	for dd := range uint32(psnOffAhead) {
		p := (psn - dd) & 0xffffff
		x := p ^ announced
		if x != 0 && (x&0xff00ff == 0 || x&0x00ffff == 0 || first && dd == 0 && x&0xffff00 == 0) {
			return p, true
		}
	}
	return 0, false
}

// confirmLink reports whether r carries a CONFIRM_LINK message.
func confirmLink(r *roceIn) bool { return r.hasLLC && r.llc.typ.Base() == decode.LLCConfirmLink }

// psnOffAhead: see psnByteOff. The first requests of a link are few (its
// CONFIRM_LINK, ADD_LINK, the first CDCs and writes), and a capture that
// damaged its CLC copies damaged some of them too.
const psnOffAhead = 16

// rekey keys direction d of l by k, which its packets carry, in place of
// the key a damaged CLC copy gave it (by: what told k), the ends'
// addresses and the responder's queue pair with it, and says so in the
// link's history. The other direction, no packet of it seen yet, carries
// the same two addresses the other way round: it had the damaged one too.
func (t *Tracker) rekey(l *Link, d Dir, k qpKey, in *input, by string) {
	old := t.keyAgain(l, d, k)
	l.end(d).Addr, l.end(d.Reverse()).Addr = k.src.netip(), k.dst.netip()
	l.end(d.Reverse()).QPN = uint32(k.qpn)
	l.addHistory(in, textEvent(fmt.Sprintf("%s keyed by %s: %s", d, by, keyChange(old, k))))
	o := d.Reverse()
	if !l.keyed[o] || l.RC[o].Packets > 0 {
		return
	}
	if nk := makeQPKey(k.dst.netip(), k.src.netip(), uint32(l.keys[o].qpn)); nk != l.keys[o] {
		old := t.keyAgain(l, o, nk)
		l.addHistory(in, textEvent(fmt.Sprintf("%s keyed by the other direction's: %s", o, keyChange(old, nk))))
	}
}

// keyAgain keys direction d of l by k in place of its key, which it
// returns (keyLink, the old key no longer resolving to l).
func (t *Tracker) keyAgain(l *Link, d Dir, k qpKey) qpKey {
	old := l.keys[d]
	if ref, ok := t.byQP[old]; ok && ref == (linkRef{l, d}) {
		delete(t.byQP, old)
	}
	t.keyLink(l, d, k)
	return old
}

// keyChange says what of wire key old differs in k (the queue pair, the
// addresses), for a link's history.
func keyChange(old, k qpKey) string {
	var what []string
	if k.qpn != old.qpn {
		what = append(what, fmt.Sprintf("QP %#06x where the CLC message named %#06x", k.qpn, old.qpn))
	}
	if k.src != old.src || k.dst != old.dst {
		what = append(what, fmt.Sprintf("%v -> %v where the CLC message named %v -> %v", k.src.netip(), k.dst.netip(), old.src.netip(), old.dst.netip()))
	}
	return strings.Join(what, ", ")
}

// unknownEnds counts the addresses of link key k that o does not carry
// and no RoCE device has (addr.wellFormed): the damaged copy of a CLC
// message gave them, and they stand for whatever o carries.
func unknownEnds(k, o *qpKey) int {
	n := 0
	for _, a := range [2][2]addr{{k.src, o.src}, {k.dst, o.dst}} {
		if a[0] != a[1] && a[0] != (addr{}) && !a[0].wellFormed() {
			n++
		}
	}
	return n
}

// sameOfKey counts the parts of k (source, destination, DestQP) that o
// has too.
func sameOfKey(k, o *qpKey) int {
	n := 0
	for _, eq := range [3]bool{k.src == o.src, k.dst == o.dst, k.qpn == o.qpn} {
		if eq {
			n++
		}
	}
	return n
}

// holdDamaged keeps the request in in, which the capture holds damaged
// (finding id raised for it), where the responder of direction rc has yet
// to take its PSN: the wire says later whether the responder took it
// (damagedTaken) or the network's packet was damaged (the PSN sent again,
// or NAKed). Its content is kept where the damage leaves it the sender's:
// the ICRC matches, and only the IPv4 header's checksum fails, in the
// fields the ICRC leaves out (the TTL, the type of service).
func (rc *RC) holdDamaged(in *input, id expert.ID) {
	r := &in.roce
	if !isRequest(r.opcode) || !rc.havePSN {
		return
	}
	dd := psnDiff(r.psn, rc.nextPSN)
	if out := dd < 0 || dd >= aheadBits; out || dd > 0 && !r.mended && !wholeCopy(id, r) {
		// Its PSN is what the damage hit, as likely as not: one of the
		// PSNs the responder takes next, should its word say that the
		// capture never showed them (unplacedTaken). One shortly ahead
		// that nothing vouches for is that or its own, held as both
		// till the responder's word tells which.
		rc.unplaced = slices.DeleteFunc(rc.unplaced, func(u unplacedReq) bool { return u.at != rc.nextPSN })
		if len(rc.unplaced) < maxDamaged {
			u := unplacedReq{at: rc.nextPSN, id: id, number: in.number, ns: in.ns, why: r.whyBad}
			u.icrcGot, u.icrcWant = r.icrcGot, r.icrcWant
			rc.unplaced = append(rc.unplaced, u)
		}
		if out {
			return
		}
	}
	i := slices.IndexFunc(rc.dmg, func(m damagedReq) bool { return m.req.roce.psn == r.psn })
	if i < 0 {
		if len(rc.dmg) >= maxDamaged {
			return
		}
		rc.dmg = append(rc.dmg, damagedReq{})
		i = len(rc.dmg) - 1
	}
	m := damagedReq{id: id, whole: wholeCopy(id, r), req: keptOf(in)}
	if m.whole {
		m.req.roce.icrcBad, m.req.roce.ipSumBad, m.req.roce.lengthBad = false, false, false
	}
	rc.dmg[i] = m
	rc.syncDamaged()
}

// syncDamaged sets damaged, the fast path's word that the direction holds
// damaged requests (dmg, dmgTaken).
func (rc *RC) syncDamaged() { rc.damaged = len(rc.dmg)+len(rc.dmgTaken)+len(rc.sumUnsure) > 0 }

// sumUnsure is a request whose IPv4 header checksum alone failed while no
// packet of its direction had shown one that verifies, followed on its
// ICRC's word as a checksum the capture point's copy left unfilled (roce).
// Once a packet of the direction verifies, the failing one was damage:
// where the responder took it (taken: its ACK or NAK covers the PSN, and
// no copy came again) the damage is the capture's copy (settleSums).
type sumUnsure struct {
	psn    uint32
	number int
	ns     int64
	ipSum  [2]uint16 // the checksum carried and the one computed
	taken  bool
}

// unsureSum remembers the request of in (sumUnsure). Once
// sumsUnfilledAfter requests of the direction failed so, none of its
// packets verifying, the direction's checksums are the capture point's habit, not
// damage (no byte error hits those few bytes of every packet while the
// ICRC verifies): they are no longer remembered, and the fast path, which
// steps aside while any are, takes the direction again.
func (rc *RC) unsureSum(in *input) {
	if rc.sumsUnfilled {
		return
	}
	if len(rc.sumUnsure) >= sumsUnfilledAfter {
		rc.sumUnsure, rc.sumsUnfilled = nil, true
		rc.syncDamaged()
		return
	}
	rc.sumUnsure = append(rc.sumUnsure, sumUnsure{psn: in.roce.psn, number: in.number, ns: in.ns, ipSum: in.roce.ipSum})
	rc.syncDamaged()
}

// sumsUnfilledAfter: see unsureSum.
const sumsUnfilledAfter = 8

// sumsTaken marks the requests of sumUnsure of direction d of l before
// PSN next taken, the responder's word, and settles them (settleSums).
func (t *Tracker) sumsTaken(l *Link, d Dir, next uint32) {
	rc := &l.RC[d]
	for i := range rc.sumUnsure {
		if dd := psnDiff(rc.sumUnsure[i].psn, next); dd < 0 && dd > -aheadBits {
			rc.sumUnsure[i].taken = true
		}
	}
	t.settleSums(l, d)
}

// settleSums makes the requests of sumUnsure of direction d of l that the
// responder took the capture's damage (roce.capture.damaged), once a
// packet of the direction showed a checksum that verifies. Their content
// was followed as sent.
func (t *Tracker) settleSums(l *Link, d Dir) {
	rc := &l.RC[d]
	if !rc.ipSumOK || len(rc.sumUnsure) == 0 {
		return
	}
	rc.sumUnsure = slices.DeleteFunc(rc.sumUnsure, func(u sumUnsure) bool {
		if !u.taken {
			return false
		}
		rc.Damaged++
		t.cur.expert |= 1 << expert.CaptureCopyDamaged
		text := ""
		if l.expert.find(expert.CaptureCopyDamaged) == nil {
			text = "the first: " + damageText(expert.BadIPSum, &roceIn{ipSum: u.ipSum}, nil) +
				", where later packets of its direction verify (its content followed)"
		}
		l.expert.add(expert.CaptureCopyDamaged, u.number, u.ns, text)
		return true
	})
	rc.syncDamaged()
}

// maxDamaged bounds the damaged requests held per direction: every one
// the window can hold (random byte errors in a capture of 1 KiB WRITEs
// hit a third of them at one error in 2,000 bytes).
const maxDamaged = aheadBits

// forgetDamaged forgets the damaged requests held whose PSN keep does
// not accept: the network's packet was damaged (the responder dropped
// it, and the PSN came again, or it NAKed it), as the finding its frame
// raised says.
func (rc *RC) forgetDamaged(keep func(psn uint32) bool) {
	rc.dmg = slices.DeleteFunc(rc.dmg, func(m damagedReq) bool { return !keep(m.req.roce.psn) })
	rc.syncDamaged()
}

// forgetDamagedFrame forgets the damaged request of frame number held.
func (rc *RC) forgetDamagedFrame(number int) {
	rc.dmg = slices.DeleteFunc(rc.dmg, func(m damagedReq) bool { return m.req.number == number })
	rc.syncDamaged()
}

// unplacedReq is a damaged request whose PSN is no PSN the responder
// could take next (behind, or past the window), or one shortly ahead that
// nothing vouches for: the damage hit its PSN, as likely as not. at is
// the PSN the responder expected then.
type unplacedReq struct {
	at                uint32
	id                expert.ID
	number            int
	ns                int64
	icrcGot, icrcWant uint32
	why               error
}

// unplacedTaken settles the damaged requests of direction d of l whose
// PSN was damaged (unplacedReq) when the responder's word in in says it
// took missed PSNs the capture never showed: one that came while the
// responder still expected the first of them was one of them, its copy
// damaged in the capture (roce.capture.damaged, as damagedTaken), its
// content unknown; so was one that came while it expected an earlier
// PSN that the capture holds damaged too, taken since (damagedTaken),
// where no request followed came after it. It returns how many were.
func (t *Tracker) unplacedTaken(l *Link, d Dir, missed int, in *input) int {
	rc := &l.RC[d]
	n := 0
	for _, u := range rc.unplaced {
		if psnDiff(u.at, rc.nextPSN) > 0 || u.at != rc.nextPSN && u.number < rc.lastFrame || n == missed {
			continue
		}
		n++
		rc.Packets++ // its content unknown
		t.copyDamaged(l, d, u.id, u.number, u.ns, &roceIn{icrcGot: u.icrcGot, icrcWant: u.icrcWant}, u.why)
		// Not also the request of the PSN it holds (holdDamaged).
		rc.forgetDamagedFrame(u.number)
	}
	rc.unplaced = rc.unplaced[:0]
	if n > 0 {
		t.contentUnknown(l, d, in)
	}
	return n
}

// copyDamaged takes back finding id of the request of direction d of l
// at frame number (time ns), whose copy the capture damaged (r, why: what
// its frame showed), for roce.capture.damaged, carried by the frame that
// tells it.
func (t *Tracker) copyDamaged(l *Link, d Dir, id expert.ID, number int, ns int64, r *roceIn, why error) {
	rc := &l.RC[d]
	l.expert.unmark(id)
	if id == expert.BadICRC {
		rc.ICRCBad--
	}
	rc.Damaged++
	t.cur.expert |= 1 << expert.CaptureCopyDamaged
	text := ""
	if l.expert.find(expert.CaptureCopyDamaged) == nil {
		text = damagedText(id, r, why)
	}
	l.expert.add(expert.CaptureCopyDamaged, number, ns, text)
}

// damagedReq is a request that the capture holds damaged, its PSN not yet
// taken by the responder (RC.holdDamaged).
type damagedReq struct {
	id    expert.ID // what its frame raised: BadICRC, BadIPSum or BadLength
	whole bool      // its content is the sender's: req is followed if the responder took it
	req   keptReq
	// after: the PSN of the direction's next request the capture showed
	// (haveAfter), where its ICRC vouches for it (afterOK: it verifies,
	// or one byte explains its failing).
	after              uint32
	haveAfter, afterOK bool
	// lossShown: the responder's word showed its PSN lost while the
	// capture held this copy (Tracker.heldDamaged).
	lossShown bool
}

// noteAfter gives the newest damaged request held, where the direction's
// next request shown is in's, that request's PSN (damagedReq.after). A
// frame damaged past reading between the two (the newest, unread) may
// have been that next request: then what came after it is not known.
func (rc *RC) noteAfter(in *input, unread int) {
	if n := len(rc.dmg); n > 0 {
		if m := &rc.dmg[n-1]; !m.haveAfter && m.req.number < in.number {
			r := &in.roce
			m.after, m.haveAfter = r.psn, true
			m.afterOK = unread < m.req.number && (!r.icrcBad && !r.ipSumBad && !r.lengthBad && !r.icrcCut || r.mended)
		}
	}
}

// damagedTaken settles the damaged requests held for direction d of l
// when the responder's word in in says that it took the PSNs before next:
// one among them that the capture showed no other copy of was damaged in
// the capture's copy alone, not on the way. Its frame's finding is taken
// back for roce.capture.damaged, and its content is followed with the
// requests kept (resync), or, damaged, is unknown as a missed request's
// is. It returns how many were among them.
func (t *Tracker) damagedTaken(l *Link, d Dir, next uint32, in *input) int {
	rc := &l.RC[d]
	n, unknown := 0, false
	for _, m := range rc.dmg {
		i := psnDiff(m.req.roce.psn, rc.nextPSN)
		if i < 0 || psnDiff(m.req.roce.psn, next) >= 0 || i >= aheadBits {
			continue
		}
		if rc.ahead.has(uint32(i)) {
			if n := uint32(min(psnDiff(next, rc.nextPSN), aheadBits)); m.afterOK && m.after != (m.req.roce.psn+1)&0xFFFFFF &&
				rc.ahead.count(n) < int(n) && slices.ContainsFunc(rc.unplaced, func(u unplacedReq) bool { return u.number == m.req.number }) {
				// The RC transport resends from a PSN on, every packet
				// after it again (go-back-N): a resend of this PSN is
				// followed by the next. Followed by another, while a
				// PSN before next the capture showed nowhere may be the
				// one it holds, its PSN is the damage (unplacedTaken
				// settles it).
				continue
			}
			if k := slices.IndexFunc(rc.kept, func(k keptReq) bool {
				return k.roce.psn == m.req.roce.psn && k.number < m.req.number && sameRequest(&k.roce, &m.req.roce)
			}); k >= 0 {
				// Held in an earlier copy, which the responder dropped
				// (the requester sent it again: keep): this one is the
				// copy it took, damaged in the capture alone, and a
				// retransmission (the earlier copy's content is this
				// one's, followed as of this one's frame and time).
				t.damagedCopyTaken(l, d, &m)
				t.retransAt(l, d, m.req.number, m.req.ns)
				rc.kept[k].number, rc.kept[k].ns = m.req.number, m.req.ns
			}
			continue
		}
		// Among the PSNs held: not missed, and not to come late
		// (lateWindow).
		rc.ahead.set(uint32(i))
		n++
		t.damagedCopyTaken(l, d, &m)
		if len(rc.dmgTaken) < maxDamaged {
			rc.dmgTaken = append(rc.dmgTaken, takenDamaged{damagedReq: m, ns: t.lastNS})
		}
		if m.whole {
			rc.kept = append(rc.kept, m.req)
		} else {
			// A packet of the direction all the same, its content
			// unknown (a whole one is counted as it is followed).
			rc.Packets++
			unknown = true
		}
	}
	// What is left is at or past next, still to be settled.
	rc.forgetDamaged(func(psn uint32) bool { return psnDiff(psn, next) >= 0 })
	if unknown {
		t.contentUnknown(l, d, in)
	}
	return n
}

// sameRequest reports whether damaged copy b can be a copy of request a
// sent again: the RC transport resends the same packet, so its opcode,
// length and what the tracker reads of it (a CDC's sequence number and
// token, an LLC message's type, a RETH) are a's, as far as the damage left
// them. A copy that differs there had its PSN damaged into a's, or its
// content past telling: no resend is claimed of it (not its ICRC, which
// covers the IPv4 identification a resend may change).
func sameRequest(a, b *roceIn) bool {
	switch {
	case a.opcode != b.opcode || a.dataLen != b.dataLen || a.hasCDC != b.hasCDC || a.hasLLC != b.hasLLC || a.hasRETH != b.hasRETH:
		return false
	case a.hasCDC && (a.cdc.seq != b.cdc.seq || a.cdc.token != b.cdc.token):
		return false
	case a.hasLLC && a.llc.typ != b.llc.typ:
		return false
	}
	return !a.hasRETH || a.rkey == b.rkey && a.va == b.va && a.dmaLen == b.dmaLen
}

// damagedCopyTaken takes the damaged request m of direction d of l for
// the copy the responder took: the capture's damage (copyDamaged), and
// not also one of the PSNs the responder expected then (unplaced).
func (t *Tracker) damagedCopyTaken(l *Link, d Dir, m *damagedReq) {
	rc := &l.RC[d]
	t.copyDamaged(l, d, m.id, m.req.number, m.req.ns, &m.req.roce, m.req.roce.whyBad)
	rc.unplaced = slices.DeleteFunc(rc.unplaced, func(u unplacedReq) bool { return u.number == m.req.number })
}

// damagedOriginal counts the copy at frame number (ns) of the PSN of m,
// a damaged request the responder took after all: a retransmission (a
// duplicate there), and m the capture's damage.
func (t *Tracker) damagedOriginal(l *Link, d Dir, m *damagedReq, number int, ns int64) {
	l.RC[d].Dups++
	t.retransAt(l, d, number, ns)
	t.copyDamaged(l, d, m.id, m.req.number, m.req.ns, &m.req.roce, m.req.roce.whyBad)
}

// retransAt counts the request of direction d of l at frame number (ns),
// an earlier frame than the one being fed, a retransmission.
func (t *Tracker) retransAt(l *Link, d Dir, number int, ns int64) {
	l.RC[d].Retrans++
	t.stats.Retrans++
	l.expert.add(expert.RCRetransmission, number, ns, "")
}

// passDamaged is a damaged request whose PSN came again as a step of a
// go-back pass that sends again PSNs the responder had taken (copy: the
// frame of that copy, followed in its place): the pass sends it whatever
// became of the damaged copy, so the copy tells nothing of it, until the
// copy is shown to be a retransmission (resentNotCaptured): then the
// damaged copy was its original, which the responder took.
type passDamaged struct {
	damagedReq
	copy   int
	copyNS int64
}

// passDamagedTaken settles dmgPass[i] of direction d of l: the pass's
// copy was a retransmission, the damaged copy the original (damagedOriginal).
func (t *Tracker) passDamagedTaken(l *Link, d Dir, i int) {
	rc := &l.RC[d]
	m := rc.dmgPass[i]
	rc.dmgPass = slices.Delete(rc.dmgPass, i, i+1)
	t.damagedOriginal(l, d, &m.damagedReq, m.copy, m.copyNS)
}

// keepPassDamaged keeps the damaged request of psn, which the copy at frame
// number sent again as a step of a pass (passDamaged).
func (rc *RC) keepPassDamaged(psn uint32, number int, ns int64) {
	i := slices.IndexFunc(rc.dmg, func(m damagedReq) bool { return m.req.roce.psn == psn })
	if i < 0 {
		return
	}
	if len(rc.dmgPass) >= maxDamaged {
		rc.dmgPass = slices.Delete(rc.dmgPass, 0, 1)
	}
	rc.dmgPass = append(rc.dmgPass, passDamaged{damagedReq: rc.dmg[i], copy: number, copyNS: ns})
}

// takenDamaged is a damaged request that the responder's word made the
// capture's damage (damagedTaken), at ns: a whole copy of it shortly
// after says otherwise (damagedResent).
type takenDamaged struct {
	damagedReq
	ns int64
}

// damagedResent handles a request of direction d of l on the PSN of a
// damaged request that the responder's ACK had made the capture's damage,
// soon after that ACK: the requester sent it again, so the receiver
// dropped the damaged copy after all (its finding stands again), and the
// capture put the copy it took after the ACK (two hosts' captures merged,
// their clocks apart: roce.capture.reordered). Its content is followed
// now where the damaged copy's was not. It reports whether in was such a
// request.
func (t *Tracker) damagedResent(l *Link, d Dir, in *input) bool {
	rc := &l.RC[d]
	rc.dmgTaken = slices.DeleteFunc(rc.dmgTaken, func(m takenDamaged) bool { return in.ns-m.ns > int64(lateMax) })
	i := slices.IndexFunc(rc.dmgTaken, func(m takenDamaged) bool { return m.req.roce.psn == in.roce.psn })
	if i < 0 {
		rc.syncDamaged()
		return false
	}
	m := rc.dmgTaken[i]
	rc.dmgTaken = slices.Delete(rc.dmgTaken, i, i+1)
	rc.syncDamaged()
	if g := &rc.goBack; g.passing && psnDiff(in.roce.psn, g.last) > 0 {
		// A step of a pass that sends again PSNs the responder had
		// taken before this one (a go-back after a timeout): it sends
		// this one again with them, whatever became of its copy, which
		// stays the capture's damage; this is a duplicate as they are.
		return false
	}
	rc.Damaged--
	l.expert.unmark(expert.CaptureCopyDamaged)
	if m.id == expert.BadICRC {
		rc.ICRCBad++
	}
	text := ""
	if l.expert.find(m.id) == nil {
		text = damageText(m.id, &m.req.roce, m.req.roce.whyBad)
	}
	l.expert.add(m.id, m.req.number, m.req.ns, text)
	rc.countReordered(in.carried, 1)
	t.raise(&l.expert, expert.CaptureReordered, in)
	// The first step of a pass, or a copy sent alone that a pass steps
	// over, was a resend after all (settleGoBack): the pass says so.
	g := &rc.goBack
	g.follow(in.roce.psn)
	next := g.passing && (g.last+1)&0xFFFFFF == in.roce.psn
	g.step(in.roce.psn, true, true, rc.hiShown)
	rc.shown(in.roce.psn)
	if len(g.late) > 0 {
		t.settleGoBack(l, d, in)
	}
	g.noteLate(lateReq{psn: in.roce.psn, number: in.number, ns: in.ns, carried: in.carried, pass: g.id, lone: !next, dmg: &m})
	g.noted = len(g.late)
	if !m.whole {
		// Counted at the ACK, its content unknown then (damagedTaken).
		t.content(l, d, in)
	}
	return true
}

// goBack is what the requester's passes over PSNs it had sent before (a
// go-back after a NAK or a timeout, IBA Vol. 1, 9.7.5.1.1-2) make of the
// requests the capture had not shown before the responder's ACK of them:
// one that comes after the ACK is taken as the original the capture put
// late (reordered, as one side of two merged captures shows it), until a
// pass says which it was: the same PSN again (that was the original; this
// the resend); or, where it was itself a step of a pass that sends again,
// or was sent alone and a pass steps over its PSN with no second copy,
// it was the resend and the capture never showed the original. A pass is
// a rising run of requests the capture showed before (duplicates, or PSNs
// the responder dropped out of sequence; a late request may be one of its
// steps), going on over PSNs the responder had not taken (step); one
// that goes back below the last starts another. It sends again only what
// had been sent before it: a PSN past the highest the capture had shown
// when it began is new. The responder's ACKs of duplicates (dupACK) tell
// a late request's kind as well.
type goBack struct {
	from, last uint32 // the pass under way: its first PSN and its latest
	prevLast   uint32 // last before the request that stepped it
	hi         uint32 // the highest PSN the capture had shown when it began
	id         int    // which pass, counted
	passing    bool
	resent     bool // the pass holds a duplicate besides late ones
	late       []lateReq
	noted      int    // 1 + the index in late of the request before, if it was noted
	nak        uint32 // the PSN the responder's last NAK named
	nakNS      int64  // when; 0 none
	// The responder's last ACK (dupACK): its PSN and MSN, how many
	// ACKs since repeated both, and how many duplicates of PSNs it
	// covers the capture showed since.
	acked            bool
	ackPSN, ackMSN   uint32
	dupACKs, dupReqs int
	// takenAgain counts the requests taken as the PSN expected whose
	// PSN the capture had shown before (held out of sequence); carry,
	// those of them that a run settled as the capture's order made
	// duplicates after all, for the ACK that settled it (ackSeen).
	takenAgain, carry int
	// unanswered: duplicates shown since the responder's last ACK (a
	// NAK answers none of them; the next ACK and its repeats do).
	unanswered int
}

// lateReq is a request taken as an original the capture put late.
type lateReq struct {
	psn     uint32
	number  int
	ns      int64
	carried bool
	// pass: the pass it was a step of (-1 none); lone: neither the
	// request before it nor the one after it was the PSN next to it (a
	// packet sent again on its own, not a step of a run).
	pass int
	lone bool
	// dmg: a whole copy of a damaged request's PSN that the ACK had
	// made the capture's damage (damagedResent), nil for one the
	// capture never showed before the ACK.
	dmg *takenDamaged
}

// maxGoBackLate bounds goBack.late: a run of the window at most.
const maxGoBackLate = aheadBits

// step follows the requester's pass with a request of psn, a duplicate
// (a PSN before the one the responder expects) or not; a late one (taken
// as an original the capture put late) may begin a pass or be part of
// one, but makes none on its own.
func (g *goBack) step(psn uint32, dup, late bool, hi uint32) {
	g.prevLast = g.last
	if !dup {
		// A PSN after the pass's last that the responder had not taken
		// (one it dropped out of sequence, or whose first copy the
		// capture missed), below the highest the capture had shown
		// when the pass began: the pass goes on over it. A PSN past
		// those is new, and ends the pass.
		if g.passing && psnDiff(psn, g.last) > 0 && psnDiff(psn, g.hi) < 0 {
			g.last = psn
			return
		}
		g.passing = false
		return
	}
	if !g.passing || psnDiff(psn, g.last) <= 0 {
		g.from, g.hi, g.resent = psn, hi, false
		g.id++
	}
	g.last, g.passing = psn, true
	g.resent = g.resent || !late
}

// shown notes a request of psn the capture shows.
func (rc *RC) shown(psn uint32) {
	if !rc.havePSN || psnDiff(psn, rc.hiShown) > 0 {
		rc.hiShown = psn
	}
}

// noteLate keeps a request taken as late until a pass may show it to be
// a resend.
func (g *goBack) noteLate(q lateReq) {
	if len(g.late) >= maxGoBackLate {
		return
	}
	g.late = append(g.late, q)
}

// follow notes the request of psn after one noted late: the PSN next to
// it makes that one a step of a run.
func (g *goBack) follow(psn uint32) {
	if g.noted > 0 && g.noted <= len(g.late) && (g.late[g.noted-1].psn+1)&0xFFFFFF == psn {
		g.late[g.noted-1].lone = false
	}
	g.noted = 0
}

// minApart is how many requests shown after their ACKs with no pass to
// explain them make a direction's clocks apart (clocksApart).
const minApart = 4

// clocksApart reports whether the capture showed several requests of rc
// after their ACKs that no pass of the requester's explained (the late
// ones still waiting for one, at ns, aside; one no pass came for within
// lateMax was late): two hosts' clocks apart, or a capture point that
// reorders (one such request may be a resend the thinning left alone).
// Then a request whose earlier copy the capture never showed, coming late
// as a step of a pass, may be the first copy after a loss on the path as
// well as the resend of one the capture missed, and it is left as the
// capture showed it.
func (rc *RC) clocksApart(ns int64) bool {
	g := &rc.goBack
	if n := len(g.late); n > 0 {
		g.late = slices.DeleteFunc(g.late, func(q lateReq) bool { return ns-q.ns > int64(lateMax) })
		if len(g.late) != n {
			g.noted = 0
		}
	}
	return rc.Reordered-len(g.late) >= minApart
}

// countReordered adds n to the requests rc counts reordered, and to
// those a tunnel carried where carried.
func (rc *RC) countReordered(carried bool, n int) {
	rc.Reordered += n
	if carried {
		rc.ReorderedCarried += n
	}
}

// settleGoBack settles the late requests of direction d of l by in, a
// request the capture had shown, sent again, or the one after a pass's
// last: one of the same PSN was the original; one before it that was a
// step of in's pass, or a packet on its own that in's pass stepped over,
// was a resend of an original the capture never showed: a
// retransmission, its original not captured, as the whole capture would
// have it. A pass sends again what was sent before it: a PSN past the
// highest the capture had shown then is new, the original (the
// responder's ACK of it shown early: clocks apart).
func (t *Tracker) settleGoBack(l *Link, d Dir, in *input) {
	rc := &l.RC[d]
	g := &rc.goBack
	psn := in.roce.psn
	apart := rc.clocksApart(in.ns)
	g.late = slices.DeleteFunc(g.late, func(q lateReq) bool {
		switch {
		case q.psn == psn:
			return true
		case apart || psnDiff(psn, q.psn) <= 0 || psnDiff(q.psn, g.hi) >= 0:
			return false
		case q.pass == g.id && g.resent && psnDiff(q.psn, g.from) >= 0,
			q.lone && psnDiff(q.psn, g.from) > 0 && psnDiff(g.prevLast, q.psn) < 0:
			// A step of this pass, which sends again; or one sent on
			// its own that this pass steps over.
			t.lateResent(l, d, q)
			return true
		}
		return false
	})
	t.notCapturedOn(l, in)
}

// lateResent takes back q, a request of direction d of l followed as the
// original the capture put late, as a resend: of an original the capture
// never showed, or of a damaged copy the responder took (damagedOriginal).
func (t *Tracker) lateResent(l *Link, d Dir, q lateReq) {
	rc := &l.RC[d]
	g := &rc.goBack
	rc.countReordered(q.carried, -1)
	l.expert.unmark(expert.CaptureReordered)
	switch {
	case q.dmg != nil:
		t.damagedOriginal(l, d, &q.dmg.damagedReq, q.number, q.ns)
	case q.psn == g.nak && q.ns-g.nakNS <= int64(lateMax):
		// The PSN the responder NAKed: the network lost the copy
		// before; this one is the first the capture shows.
	default:
		t.resentNotCaptured(l, d, q.number, q.ns)
	}
}

// ackSeen notes the responder's ACK of psn with msn, and reports whether
// it repeats the one before (dupACK). The fast path notes its ACKs too.
func (g *goBack) ackSeen(psn, msn uint32) bool {
	dups := g.unanswered
	g.unanswered = 0
	if g.acked && psn == g.ackPSN && msn == g.ackMSN {
		g.dupACKs++
		g.dupReqs += g.carry
		g.carry = 0
		return true
	}
	g.acked, g.ackPSN, g.ackMSN, g.dupACKs, g.dupReqs = true, psn, msn, 0, g.carry+dups
	g.carry = 0
	return false
}

// dupACK follows the responder's ACKs of direction d of l for what they
// say of the late requests (goBack.late) of its requester: an ACK of the
// PSN and MSN of the one before answers a request that came as a
// duplicate (IBA Vol. 1, 9.7.5.1.2: the responder acknowledges a
// duplicate again; Linux's rxe, duplicate_request, with the PSN it took
// last), not one that it took. More of them than the duplicates the
// capture showed of PSNs that ACK covers were answers to late requests:
// those were resends, and the responder had taken the originals, which
// the capture never showed. Not where the direction's clocks are apart.
func (t *Tracker) dupACK(l *Link, d Dir, in *input) {
	r := &in.roce
	g := &l.RC[d.Reverse()].goBack
	if !g.ackSeen(r.psn, r.msn) {
		return
	}
	rq := &l.RC[d.Reverse()]
	if g.dupACKs <= g.dupReqs || rq.clocksApart(in.ns) {
		return
	}
	if i := slices.IndexFunc(g.late, func(q lateReq) bool { return psnDiff(q.psn, r.psn) <= 0 && q.ns <= in.ns }); i >= 0 {
		q := g.late[i]
		g.late = slices.Delete(g.late, i, i+1)
		g.noted = 0
		g.dupReqs++ // this late request was the duplicate
		t.lateResent(l, d.Reverse(), q)
		t.notCapturedOn(l, in)
		return
	}
	// Or a copy a pass sent again of a damaged request's PSN
	// (passDamaged), followed as the one the responder took: it was a
	// duplicate there, so the damaged copy was taken.
	if j := slices.IndexFunc(rq.dmgPass, func(m passDamaged) bool { return psnDiff(m.req.roce.psn, r.psn) <= 0 }); j >= 0 {
		g.dupReqs++
		t.passDamagedTaken(l, d.Reverse(), j)
	}
}

// answeredDup reports whether the responder's last ACK, which covers
// psn, answered more duplicates than the capture showed (dupACK), and
// takes one of them for a request of psn.
func (g *goBack) answeredDup(psn uint32) bool {
	if !g.acked || g.dupACKs <= g.dupReqs || psnDiff(psn, g.ackPSN) > 0 {
		return false
	}
	g.dupReqs++
	return true
}

// resentNotCaptured counts a request of direction d of l that was followed
// as an original (frame number at ns) as what the wire made it after all:
// a retransmission whose original the capture never showed. The frame
// that tells it carries roce.rc.not_captured (once: notCapturedOn).
func (t *Tracker) resentNotCaptured(l *Link, d Dir, number int, ns int64) {
	rc := &l.RC[d]
	if i := slices.IndexFunc(rc.dmgPass, func(m passDamaged) bool { return m.copy == number }); i >= 0 {
		// The capture showed the original, damaged, before the pass
		// sent it again: the responder took it, counted for the copy.
		t.passDamagedTaken(l, d, i)
		return
	}
	rc.Dups++
	t.retransAt(l, d, number, ns)
	rc.NotCaptured++
	t.cur.notCaptured++
	rc.Packets--
}

// notCapturedOn raises roce.rc.not_captured on in where resentNotCaptured
// counted requests that in tells of (t.cur.notCaptured).
func (t *Tracker) notCapturedOn(l *Link, in *input) {
	if t.cur.notCaptured > 0 && t.cur.expert&(1<<expert.NotCaptured) == 0 {
		t.raise(&l.expert, expert.NotCaptured, in)
	}
}

// damagedLate follows a request of direction d of l that the capture holds
// damaged and showed after the responder's ACK of it (lateWindow): the
// responder took it, so the damage is the capture's copy. Its content is
// followed where the ICRC vouches for it (reordered), else it stays
// unknown, as the ACK made it.
func (t *Tracker) damagedLate(l *Link, d Dir, in *input) {
	r := &in.roce
	rc := &l.RC[d]
	id := droppedID(r)
	rc.Damaged++
	t.raiseText(&l.expert, expert.CaptureCopyDamaged, in, func() string { return damagedText(id, r, r.whyBad) })
	if !wholeCopy(id, r) {
		t.shownLate(l, d, r.psn)
		return
	}
	r.icrcBad, r.ipSumBad, r.lengthBad = false, false, false
	t.reordered(l, d, in)
}

// damagedText says what is damaged in the copy of request r, whose
// frame raised finding id (the length error why).
func damagedText(id expert.ID, r *roceIn, why error) string {
	if wholeCopy(id, r) {
		return "the first: " + damageText(id, r, why) + " (its content followed)"
	}
	return "the first: " + damageText(id, r, why) + " (its content not known)"
}

// wholeCopy reports whether the content decoded from request r, whose
// frame raised finding id, is the sender's: the ICRC vouches for it (the
// damage in a field it leaves out, or in a length its frame's size gives:
// capture.Frame.LengthMend), or one byte explains the ICRC failing and
// the content is known as sent (mendRoCE: the byte outside it, or mended
// in it).
func wholeCopy(id expert.ID, r *roceIn) bool {
	return id == expert.BadIPSum || r.mendWhole
}

// damageText says what finding id (BadICRC, BadIPSum or BadLength) found
// in the frame of r: both checksums, as the frame's line shows them, or
// the length error why.
func damageText(id expert.ID, r *roceIn, why error) string {
	switch id {
	case expert.BadICRC:
		if r.mendAs != "" {
			s := fmt.Sprintf("ICRC in the frame 0x%08x, computed 0x%08x: it verifies with the %s its link direction expected", r.icrcGot, r.icrcWant, r.mendAs)
			if r.mended {
				s += fmt.Sprintf(" and one byte more, offset %d (%s), 0x%02x in the frame, 0x%02x sent", r.mend.Off, r.mendField, r.mend.Held, r.mend.Sent)
			}
			return s
		}
		zeroed := ""
		if r.zeroed {
			msg := "CDC"
			if !r.hasCDC {
				msg = "LLC"
			}
			zeroed = " with the " + msg + " message's reserved bytes zero, as sent,"
		}
		if r.mended {
			return fmt.Sprintf("ICRC in the frame 0x%08x, computed 0x%08x:%s one byte explains it, offset %d (%s), 0x%02x in the frame, 0x%02x sent",
				r.icrcGot, r.icrcWant, zeroed, r.mend.Off, r.mendField, r.mend.Held, r.mend.Sent)
		}
		if r.zeroed {
			return fmt.Sprintf("ICRC in the frame 0x%08x, computed 0x%08x: it verifies%s", r.icrcGot, r.icrcWant, strings.TrimSuffix(zeroed, ","))
		}
		return fmt.Sprintf("ICRC in the frame 0x%08x, computed 0x%08x", r.icrcGot, r.icrcWant)
	case expert.BadIPSum:
		return fmt.Sprintf("IPv4 header checksum in the frame 0x%04x, computed 0x%04x", r.ipSum[0], r.ipSum[1])
	}
	if why == nil {
		return ""
	}
	if r.mendWhole {
		return why.Error() + "; with the lengths the frame's size gives, its ICRC verifies"
	}
	return why.Error()
}

// notCaptured records that the responder of direction d of l took n
// request PSNs the capture never showed (its ACK or NAK in in says so):
// a fact of the capture, roce.rc.not_captured, carried by the frame that
// tells it. Nothing is inferred from what those frames held: a CDC among
// them explains the next one's sequence gap and a close the capture
// lacks (Flow.uncaptured), a response among them answers the other
// direction's pending LLC requests.
func (t *Tracker) notCaptured(l *Link, d Dir, n int, in *input) {
	rc := &l.RC[d]
	rc.NotCaptured += n
	t.cur.notCaptured += n
	t.raise(&l.expert, expert.NotCaptured, in)
	t.contentUnknown(l, d, in)
}

// contentUnknown says that the responder of direction d of l took
// requests whose content the capture does not tell (missed, or damaged
// in its copy), which in says.
func (t *Tracker) contentUnknown(l *Link, d Dir, in *input) {
	t.uncaptured(l, d)
	l.llcPend[d.Reverse()] = [2]pendingLLC{}
	l.unknownNS[d] = max(l.unknownNS[d], in.ns)
	l.lgr.missedNS = in.ns
	if l.State == LinkConfirming {
		l.uncaptured = true
	}
	// An ADD_LINK's response (accept or reject) may be among them as
	// well: what became of the link the request added is not known.
	for _, nl := range l.lgr.links {
		if nl.State == LinkAdding {
			nl.uncaptured = true
		}
	}
}

// uncaptured says that CDCs of direction d of l may be among requests the
// capture missed: the next CDC of each connection on l explains a gap in
// its sequence so (Flow.uncaptured).
func (t *Tracker) uncaptured(l *Link, d Dir) {
	for _, c := range l.lgr.conns {
		if c.link == l || c.link == nil {
			c.Flow[d].uncaptured = true
		}
	}
	t.hot.forgetConns()
}

// lateWindow is the PSNs of one direction that the responder took (its
// ACK said so) while the capture had not shown them: should one come just
// after, the capture put it after the ACK, and it is the original.
type lateWindow struct {
	lo   uint32  // the first PSN the window covers
	bits psnBits // bit i: PSN lo+i not captured yet
	ns   int64   // when the responder's word came
}

// lateMax is how long after the ACK a request still counts as put out of
// order by the capture: below the RC ACK timeout SMC's queue pairs use
// (4.096 us << 15, 134 ms; qp_attr.timeout in net/smc/smc_ib.c), after
// which a requester that missed the ACK sends it again, and TCP's least
// retransmission timeout (200 ms, TCP_RTO_MIN); above the skew of two
// hosts' clocks that NTP keeps in step (merged captures, mergecap).
const lateMax = 50 * time.Millisecond

// open starts a window over the n PSNs from lo, but for those ahead holds
// (seen in a run out of sequence); a wider gap than the window opens none.
// The PSNs of a window still open stay in it, as far as the window
// reaches: a capture that puts one side late (two hosts' captures merged,
// their clocks apart) shows several ACKs before the requests they
// acknowledge, each covering many on a busy link.
func (w *lateWindow) open(lo, n uint32, ahead *psnWindow, ns int64) {
	old := *w
	*w = lateWindow{}
	if n > aheadBits {
		return
	}
	if shift := psnDiff(lo, old.lo); !old.bits.empty() && ns-old.ns <= int64(lateMax) && shift >= 0 {
		if over := shift + int32(n) - aheadBits; over > 0 {
			// Slide the old window up so that the new PSNs fit.
			old.lo = (old.lo + uint32(over)) & 0xFFFFFF
			old.bits.shift(uint32(over))
			shift -= over
		}
		w.lo, w.bits = old.lo, old.bits
		for i := range n {
			if !ahead.has(i) {
				w.bits.set(uint32(shift) + i)
			}
		}
		w.ns = ns
		return
	}
	for i := range n {
		if !ahead.has(i) {
			w.bits.set(i)
		}
	}
	w.lo, w.ns = lo, ns
}

// dropFrom takes psn and the PSNs after it out of the window.
func (w *lateWindow) dropFrom(psn uint32) {
	off := psnDiff(psn, w.lo)
	switch {
	case off <= 0:
		*w = lateWindow{}
	case off < aheadBits:
		for i := uint32(off); i < aheadBits; i++ {
			w.bits.clear(i)
		}
	}
}

// take reports whether psn is one of the window's, arriving in time, and
// takes it out.
func (w *lateWindow) take(psn uint32, ns int64) bool {
	off := psnDiff(psn, w.lo)
	if off < 0 || off >= aheadBits || !w.bits.has(uint32(off)) || ns-w.ns > int64(lateMax) {
		return false
	}
	w.bits.clear(uint32(off))
	return true
}

// reordered follows a request of direction d of l that the capture showed
// after the responder's ACK of it (lateWindow): not a retransmission, and
// no longer a PSN the capture never showed; its content is followed, as
// the responder took it.
func (t *Tracker) reordered(l *Link, d Dir, in *input) {
	rc := &l.RC[d]
	t.shownLate(l, d, in.roce.psn)
	rc.countReordered(in.carried, 1)
	t.raise(&l.expert, expert.CaptureReordered, in)
	rc.Packets++
	// A frame damaged past reading before it is not one of the PSNs
	// still missing (unreadRoCE): the capture shows this direction's
	// requests late.
	rc.lastFrame = max(rc.lastFrame, in.number)
	if !rc.late.bits.empty() {
		// Others the responder took may yet come, or never (the capture
		// missed them): a CDC among them explains this one's gap.
		t.uncaptured(l, d)
	}
	in.roce.shownLate = true
	t.content(l, d, in)
	if !rc.late.bits.empty() {
		// Still: following this one's CDC did not show those.
		t.uncaptured(l, d)
	}
}

// attributeAhead ties a request that the responder drops (out of
// sequence), or may have dropped (damaged, its content the sender's), to
// its connection where the frame names it (requestConn), without
// following its content: a copy comes again, or it is followed once the
// responder's word says it took it. An LLC response answers its request
// at once.
func (t *Tracker) attributeAhead(l *Link, d Dir, in *input) {
	if c := t.requestConn(l, d, in, true); c != nil {
		t.touchConn(c, in, d)
	}
	if r := &in.roce; r.hasLLC && r.llc.resp {
		// The peer answered: the request is not unanswered, whenever
		// the responder's word lets the response be followed.
		l.answerLLC(d, r.llc.typ)
	}
}

// requestConn is the connection of a request of direction d of l that
// is not followed as it goes by (ahead of the PSN its responder expects,
// damaged, or a PSN it took before), where the frame names it: a CDC's
// token, a WRITE's rkey, a CONFIRM_LINK its link's first connection
// waits for, and a WRITE's MIDDLE and LAST packets the FIRST's, by PSN
// (RC.lastFirst), in whatever order the capture shows them. ahead: in a
// run ahead of the responder's PSN, where a later packet of the WRITE in
// progress (its FIRST followed) is its connection's, as write has it.
func (t *Tracker) requestConn(l *Link, d Dir, in *input, ahead bool) *Conn {
	r := &in.roce
	rc := &l.RC[d]
	switch {
	case r.hasCDC:
		return l.lgr.tokens[d][r.cdc.token]
	case r.hasLLC && r.llc.typ.Base() == decode.LLCConfirmLink:
		return l.confirmingFor()
	case r.hasRETH && (r.opcode == opWriteFirst || r.opcode == opWriteOnly || r.opcode == opWriteOnlyImm):
		c := l.rkeys[d][r.rkey].conn
		if r.opcode == opWriteFirst {
			rc.lastFirst = spanOf(c, r.psn, r.dmaLen, r.dataLen)
		}
		return c
	case r.opcode == opWriteMiddle || r.opcode == opWriteLast || r.opcode == opWriteLastImm:
		if w := &rc.lastFirst; w.holds(r.psn) {
			return w.conn
		}
		if ahead {
			return rc.curWrite
		}
	}
	return nil
}

// upByData brings l, a first contact's link waiting for its CONFIRM_LINK
// response, up when it carries data (a CDC or a WRITE): connections use
// the link only once that exchange is done (smc_serv_conf_first_link
// waits for the response, smc_clnt_conf_first_link sends it, both in
// net/smc/af_smc.c), so its data says the response was sent, also where
// the capture lacks it.
func (t *Tracker) upByData(l *Link, in *input) {
	if r := &in.roce; l.State == LinkConfirming && (r.hasCDC || r.hasRETH) {
		l.State, l.wasUp = LinkUp, true
		l.addHistory(in, textEvent("up: it carries data, its CONFIRM_LINK response is not in the capture"))
		t.linkUp(l)
	}
}

// message follows the LLC or CDC message of a SEND of direction d of l
// (content's, and feedRoCEOfCut's where the cut copy counted the SEND).
func (t *Tracker) message(l *Link, d Dir, in *input) {
	rc := &l.RC[d]
	if in.roce.hasLLC {
		rc.LLCs++
		t.stats.LLC++
		t.llc(l, d, in)
		return
	}
	rc.CDCs++
	t.stats.CDC++
	t.cdc(l, d, in)
}

// content follows what an accepted request carries: LLC, CDC or WRITE.
func (t *Tracker) content(l *Link, d Dir, in *input) {
	r := &in.roce
	rc := &l.RC[d]
	t.credits(l, d, in)
	t.upByData(l, in)
	switch op := r.opcode; {
	case r.hasLLC || r.hasCDC:
		rc.Sends++
		t.message(l, d, in)
	case r.malformed:
		rc.Sends++
		t.stats.Malformed++
		// A CDC may be the message that did not decode: its sequence
		// number and what it said are unknown, as a missed CDC's.
		t.uncaptured(l, d)
		// The link's finding says what failed to decode, as a CLC's does.
		t.raiseText(&l.expert, expert.Malformed, in, func() string {
			if r.whyBad == nil {
				return ""
			}
			return r.whyBad.Error()
		})
	case r.hasRWWI:
		rc.WritePkts++
		t.stats.RWWI++
		if r.opcode != opWriteOnlyImm || r.dmaLen > 0 {
			t.write(l, d, in) // the data (a zero-length one carries only the immediate)
		}
		t.rwwi(l, d, in)
	case op >= opWriteFirst && op <= opWriteOnlyImm:
		rc.WritePkts++
		t.write(l, d, in)
	case op <= 0x05 || op == 0x16 || op == opSendOnlyInv:
		rc.Sends++
		if in.snapCut == snapCutRoCE {
			// A SEND the snap length cut before its message said what
			// it is (smc.capture.snap_cut): a CDC may be among them, as
			// among requests the capture missed.
			t.uncaptured(l, d)
			rc.cutPSN, rc.cut = r.psn, cutMessage
		}
	}
	if c := t.cur.theConn(); c != nil {
		rc.remember(r.psn, c)
	}
}

// sendCut is what the snap length cut of the last SEND followed
// (RC.cut), which its whole copy may give (feedRoCEOfCut).
type sendCut uint8

const (
	cutNone    sendCut = iota
	cutMessage         // its LLC or CDC message: unread
	cutResent          // the same, of a retransmission (its message followed once already)
	cutCredits         // a CDC's ANCK credits byte (creditsBack)
)

const (
	// aheadBits is how far ahead of the expected PSN a run out of
	// sequence is followed: Linux's rxe keeps at most 64 packets of a QP
	// in flight (RXE_INFLIGHT_SKBS_PER_QP_HIGH), a hardware RNIC its send
	// queue; a request further ahead is a capture that missed frames.
	aheadBits = 256
	// runLife: a requester sends the expected PSN again within its
	// transport timeout and retry count (Linux SMC-R: 134 ms times 7,
	// SMC_QP_TIMEOUT and SMC_QP_RETRY_CNT in net/smc/smc_ib.h); a run
	// older than this is a capture that missed frames.
	runLife = 2 * time.Second
	// maxKept bounds the requests kept from one run: every one the
	// window can hold, so that a run resolved as the capture's miss (the
	// responder's ACK, or, where the capture never shows the responder,
	// the window outgrown) loses no request's content. About 160 KiB per
	// direction in a run.
	maxKept = aheadBits
)

// psnBits is a set of PSNs counted from a base: bit i, the base plus i.
type psnBits [aheadBits / 64]uint64

func (b *psnBits) has(i uint32) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b *psnBits) set(i uint32)      { b[i/64] |= 1 << (i % 64) }
func (b *psnBits) clear(i uint32)    { b[i/64] &^= 1 << (i % 64) }
func (b *psnBits) empty() bool       { return b[0]|b[1]|b[2]|b[3] == 0 }

// count is how many PSNs of the first n are in the set.
func (b *psnBits) count(n uint32) int {
	k := 0
	for i := uint32(0); i < n; i++ {
		if b.has(i) {
			k++
		}
	}
	return k
}

// shift moves the base n PSNs on.
func (b *psnBits) shift(n uint32) {
	if n >= aheadBits {
		*b = psnBits{}
		return
	}
	words, s := n/64, n%64
	for i := range b {
		var v uint64
		if j := uint32(i) + words; j < uint32(len(b)) {
			v = b[j] >> s
			if s != 0 && j+1 < uint32(len(b)) {
				v |= b[j+1] << (64 - s)
			}
		}
		b[i] = v
	}
}

// psnWindow is the PSNs next+i seen in a run out of sequence (bit i),
// next being the PSN the responder expects (shift moves it on).
type psnWindow struct {
	psnBits
	run   bool  // a run is open
	since int64 // when it started
	// The run's first frame and how many PSNs it skipped there, and how
	// many requests it held; shown: the network's loss is shown
	// (roce.rc.psn_gap raised).
	frame, missing, requests int
	shown                    bool
	// from: the PSN expected when it opened, the first it skipped.
	from uint32
	// goBack: a NAK of a PSN before the run's first missing one came
	// while the run was open; the requester goes back to that PSN and
	// sends the missing one again with the rest, which then shows
	// nothing of this run (only its own NAK does).
	goBack bool
}

// open opens a run out of sequence at frame (time ns) that skipped
// missing PSNs from PSN from.
func (w *psnWindow) open(ns int64, frame, missing int, from uint32) {
	w.run, w.since, w.frame, w.missing, w.requests, w.shown, w.goBack, w.from = true, ns, frame, missing, 0, false, false, from
}

// idle: no run open and no PSN ahead seen, the sequence is plain.
func (w *psnWindow) idle() bool { return !w.run && w.empty() }

// keptReq is a request of a run out of sequence, kept in case the capture
// only missed the frames before it (resync).
type keptReq struct {
	number int
	ns     int64
	roce   roceIn
	// snapCut: the snap length cut the frame (input.snapCut), a SEND's
	// message maybe a CDC's.
	snapCut uint8
}

// keep keeps the request in in, of a run out of sequence (resync).
// A PSN kept already is kept again in its newer copy: the requester sent
// it again because the responder dropped the copy before (go-back-N from
// the PSN it NAKed, IBA Vol. 1, 9.7.5.1.1), so the copy the responder
// took, if the capture holds it, is the last one. Following the first
// would date what the request did (a CDC's cursors, the RMBE it fills)
// to the copy the responder dropped.
func (r *RC) keep(in *input) {
	i := slices.IndexFunc(r.kept, func(k keptReq) bool { return k.roce.psn == in.roce.psn })
	if i < 0 {
		if len(r.kept) >= maxKept {
			return
		}
		r.kept = append(r.kept, keptReq{})
		i = len(r.kept) - 1
	}
	r.kept[i] = keptOf(in)
	if r.damaged {
		// A whole copy of a damaged request held: the requester sent it
		// again; the damaged one was dropped.
		r.forgetDamaged(func(psn uint32) bool { return psn != in.roce.psn })
	}
}

// keptOf is the request in in as resync follows it later.
func keptOf(in *input) keptReq {
	k := keptReq{number: in.number, ns: in.ns, roce: in.roce, snapCut: in.snapCut}
	// What the frame did not fill is an earlier frame's: left out.
	x := &k.roce
	if !x.hasRETH {
		x.va, x.rkey, x.dmaLen = 0, 0, 0
	}
	if !x.hasAETH {
		x.syndrome, x.msn = 0, 0
	}
	if !x.hasCDC {
		x.cdc = cdcIn{}
	}
	if !x.hasLLC {
		x.llc = llcIn{}
	}
	// A WRITE's bytes (Options.Stream) are the frame buffer's, which the
	// reader reuses.
	x.data = bytes.Clone(x.data)
	return k
}

// dropKept forgets the kept requests before next.
func (r *RC) dropKept(next uint32) {
	k := r.kept[:0]
	for _, x := range r.kept {
		if psnDiff(x.roce.psn, next) >= 0 {
			k = append(k, x)
		}
	}
	clear(r.kept[len(k):])
	r.kept = k
}

// reopenRun opens a run out of sequence at the first request kept ahead
// of the expected PSN, where resync left some: from its frame, the PSNs
// before it missing. (A copy of the expected PSN itself that the capture
// showed while it was ahead, the responder dropped then.)
func (r *RC) reopenRun() {
	if r.ahead.run || r.ahead.empty() {
		return
	}
	var first *keptReq
	for i := range r.kept {
		k := &r.kept[i]
		if psnDiff(k.roce.psn, r.nextPSN) > 0 && (first == nil || psnDiff(k.roce.psn, first.roce.psn) < 0) {
			first = k
		}
	}
	if first == nil {
		return
	}
	dd := psnDiff(first.roce.psn, r.nextPSN)
	r.ahead.open(first.ns, first.number, int(dd), r.nextPSN)
}

// endRun closes the run out of sequence: the responder has what it
// dropped.
func (r *RC) endRun() {
	r.ahead = psnWindow{}
	clear(r.kept)
	r.kept = r.kept[:0]
}

func (t *Tracker) lookupQP(k *qpKey) (linkRef, bool) {
	if ref, ok := t.cachedQP(k); ok {
		return ref, true
	}
	ref, ok := t.byQP[*k]
	if ok {
		t.qpCache[t.qpNext%len(t.qpCache)] = qpCacheEntry{*k, ref}
		t.qpNext++
	}
	return ref, ok
}

// cachedQP looks k up in qpCache only.
func (t *Tracker) cachedQP(k *qpKey) (linkRef, bool) {
	for i := range t.qpCache {
		if e := &t.qpCache[i]; e.ref.link != nil && e.key.eq(k) {
			return e.ref, true
		}
	}
	return linkRef{}, false
}

// resolveUnknown handles a packet whose wire key no CLC or LLC announced:
// either it is the first packet of the unseen direction of a link built
// from traffic, or an LLC/CDC proves an SMC-R link the capture joined late.
// Other packets (ACKs, WRITEs, non-SMC RoCE) on unknown keys only count.
func (t *Tracker) resolveUnknown(in *input, key qpKey) (linkRef, bool) {
	r := &in.roce
	smc := r.hasLLC || r.hasCDC
	pair := addrPair{key.dst, key.src}
	if confirmLink(r) {
		if ref, ok := t.addedOn(in, key); ok {
			return ref, true
		}
		if len(t.halfLinks[pair]) == 0 {
			if c, toEP, malformed := t.halfAnnounced(key, r.llc.qpn); c != nil {
				if malformed {
					// The link is the one the malformed Confirm's copy
					// named: its client end is the link's.
					c.ClientEP, c.epDamaged[DirS2C], c.FirstContact = c.malformedEP, true, true
				}
				return t.placeHalfLink(c, key, r.llc.qpn, toEP, in), true
			}
		}
	}
	if ref, ok := t.damagedGIDLink(in, key); ok {
		return ref, true
	}
	if cands := t.halfLinks[pair]; len(cands) > 0 {
		var pick *Link
		for _, l := range cands {
			kd := l.knownDir()
			// An ACK for the last request of the known direction pairs them
			// without doubt.
			if r.hasAETH && l.RC[kd].Packets > 0 && r.psn == l.RC[kd].lastPSN {
				pick = l
			}
		}
		if pick == nil && smc {
			pick = cands[len(cands)-1]
		}
		if pick != nil {
			t.removeHalf(pair, pick)
			d := pick.knownDir().Reverse()
			e := pick.end(d.Reverse())
			e.QPN = uint32(key.qpn)
			t.keyLink(pick, d, key)
			return linkRef{pick, d}, true
		}
	}
	if !smc {
		u := t.unknownQP[key]
		if u == nil && len(t.unknownQP) < maxUnknownQPs {
			u = &unknownQP{}
			t.unknownQP[key] = u
		}
		if u != nil {
			u.frames++
			u.last = in.ns
			if r.opcode >= opWriteFirst && r.opcode <= opWriteOnlyImm {
				u.writes++
			}
		}
		return linkRef{}, false
	}
	g := t.newLGR(in, true)
	l := t.newLink(g, in, true)
	l.Client.Addr, l.Server.Addr, l.Server.QPN = key.src.netip(), key.dst.netip(), uint32(key.qpn)
	if r.hasLLC && r.llc.typ.Base() == decode.LLCConfirmLink && !r.llc.resp {
		// A new group's first link carries this first (its server's
		// request, smcr_serv_conf_first_link in net/smc/af_smc.c): the
		// setup is in the capture, the CLC handshake that announced it
		// is not (missed, cut by the snap length, or on another path).
		l.addHistory(in, textEvent("first seen at its CONFIRM_LINK request: its setup in the capture, the CLC Accept/Confirm that announced it not followed"))
		l.setupShown = true
	} else {
		l.addHistory(in, textEvent("first seen mid-stream: link setup not in the capture"))
	}
	if u := t.unknownQP[key]; u != nil {
		l.addHistory(in, histEvent{kind: LinkEventEarlier, n: u.frames})
	}
	t.keyLink(l, DirC2S, key)
	t.halfLinks[addrPair{key.src, key.dst}] = append(t.halfLinks[addrPair{key.src, key.dst}], l)
	t.stats.InferredLinks++
	return linkRef{l, DirC2S}, true
}

// damagedGIDLink finds the first contact's new link that a whole packet
// on an unknown wire key belongs to where one end's GID in the CLC Accept
// (the server's) or Confirm (the client's) was damaged in the capture's
// copy (its segment's checksum fails): the link has carried nothing yet,
// and the key is one of its directions' but for that end's address. The
// ICRC vouches for the packet's addresses and DestQP. Where the sender's
// address differs, the receiver's address and QP are the link's, and an
// RC QP takes packets from its one peer; where the receiver's differs,
// another QP of the sender's may send to a QP numbered alike elsewhere
// (rxe numbers every device's alike), so the message must name the link:
// a CDC the token that direction's receiver announced, a CONFIRM_LINK
// its sender's QP. The link is keyed by the packet's addresses (rekey).
func (t *Tracker) damagedGIDLink(in *input, key qpKey) (linkRef, bool) {
	r := &in.roce
	if !r.icrcOK {
		return linkRef{}, false
	}
	// A packet that is no LLC or CDC message is told by its key alone:
	// looked for once per key and announced link (every unknown queue
	// pair's packets come here).
	u := t.unknownQP[key]
	if plain := !r.hasLLC && !r.hasCDC; plain && u != nil {
		if u.announced == t.announced {
			return linkRef{}, false
		}
		u.announced = t.announced
	}
	var (
		found *Link
		dir   Dir
		wrong Dir // the direction whose sender's GID was damaged
		n     int
	)
	for _, l := range t.links {
		if l.retired || l.Inferred || l.lgr.Deleted || l.State != LinkConfirming || len(l.conns) != 1 ||
			l.RC[0].Packets+l.RC[1].Packets+l.RC[0].Acks+l.RC[1].Acks > 0 {
			continue
		}
		c := l.conns[0]
		for d := DirC2S; d <= DirS2C; d++ {
			k := &l.keys[d]
			if !l.keyed[d] || k.qpn != key.qpn || (k.src == key.src) == (k.dst == key.dst) {
				continue
			}
			// The end whose address differs, and the message that
			// announced it: the server's came in the Accept
			// (epDamaged[DirC2S]), the client's in the Confirm.
			w := d
			if k.src == key.src {
				w = d.Reverse()
			}
			if !c.epDamaged[w.Reverse()] {
				continue
			}
			named := r.hasCDC && c.hasTok[d] && r.cdc.token == c.tokens[d] ||
				r.hasLLC && r.llc.typ.Base() == decode.LLCConfirmLink && r.llc.qpn == l.end(d).QPN
			if w != d && !named {
				continue
			}
			found, dir, wrong = l, d, w
			n++
		}
	}
	if n != 1 {
		return linkRef{}, false
	}
	who, msg := "server", "Accept"
	if wrong == DirC2S {
		who, msg = "client", "Confirm"
	}
	t.rekey(found, dir, key, in, "its first whole packet, the "+who+"'s GID in the capture's copy of the CLC "+msg+" damaged")
	return linkRef{found, dir}, true
}

// addedOn finds the link that a CONFIRM_LINK on an unknown queue pair
// confirms: one added by an ADD_LINK of which the capture holds one side's
// message only (a capture of one direction, or one that missed the other),
// so that one end is known and the other not. The CONFIRM_LINK names its
// sender's end (address, QP number) and the link number, which pick the
// link; its destination is the other end (smc_llc_send_confirm_link and
// smc_llc_cli_add_link in net/smc/smc_llc.c: the new link's first message
// is this exchange). Both directions are then reachable on the wire.
func (t *Tracker) addedOn(in *input, key qpKey) (linkRef, bool) {
	m := &in.roce.llc
	src, dst := key.src.netip(), key.dst.netip()
	for _, x := range t.links {
		if x.retired || !x.added || x.LinkID != m.linkID || x.lgr.Deleted || x.keyed[DirC2S] || x.keyed[DirS2C] ||
			(x.State != LinkAdding && x.State != LinkAdded) {
			continue
		}
		for _, d := range [2]Dir{DirC2S, DirS2C} {
			s, o := x.end(d), x.end(d.Reverse())
			switch {
			case s.Addr == src && s.QPN == m.qpn && (!o.Addr.IsValid() || o.Addr == dst) && (o.QPN == 0 || o.QPN == uint32(key.qpn)):
				o.Addr, o.QPN = dst, uint32(key.qpn)
			case !s.Addr.IsValid() && s.QPN == 0 && o.Addr == dst && o.QPN == uint32(key.qpn):
				// The receiver's end is the one known (the capture
				// holds the response only, and the request comes
				// from the end it missed): the sender is named here.
				*s = LinkEnd{Addr: src, GID: m.gid, MAC: m.mac, QPN: m.qpn}
			default:
				continue
			}
			t.keyLink(x, DirC2S, makeQPKey(x.Client.Addr, x.Server.Addr, x.Server.QPN))
			t.keyLink(x, DirS2C, makeQPKey(x.Server.Addr, x.Client.Addr, x.Client.QPN))
			return linkRef{x, d}, true
		}
	}
	return linkRef{}, false
}

func (l *Link) knownDir() Dir {
	if l.keyed[DirC2S] {
		return DirC2S
	}
	return DirS2C
}

func (t *Tracker) removeHalf(p addrPair, l *Link) {
	c := t.halfLinks[p]
	for i, x := range c {
		if x == l {
			c = append(c[:i], c[i+1:]...)
			break
		}
	}
	if len(c) == 0 {
		delete(t.halfLinks, p)
	} else {
		t.halfLinks[p] = c
	}
}

// ack counts an RC acknowledgement and ties it to the connection whose
// request it acknowledges.
func (t *Tracker) ack(l *Link, d Dir, in *input) {
	r := &in.roce
	rc := &l.RC[d]
	rc.Acks++
	// The responder's word on its expected PSN: an ACK of a PSN at or
	// past the one the tracker expects, or a NAK of a later one, says
	// that it took PSNs the capture did not show (whether a run out of
	// sequence is open or not: a capture that missed the last request
	// before its ACK shows no run). A PSN sequence error NAK of the
	// expected PSN says that the run's first PSN was lost on the way.
	// The syndrome's class (IBA Vol. 1, 9.7.5.2.1): 0 an ACK, 1 an RNR
	// NAK, 3 a NAK.
	class := (r.syndrome >> 5) & 3
	rev := &l.RC[d.Reverse()]
	shown := false  // one NAK shows one loss
	behind := false // the PSN named is before the one the tracker expects
	if rev.havePSN {
		dd := psnDiff(r.psn, rev.nextPSN)
		behind = dd < 0
		switch class {
		case 0:
			switch {
			case dd >= 0 && dd < aheadBits:
				t.resync(l, d.Reverse(), (r.psn+1)&0xFFFFFF, in)
			case rev.pendingLate(r.psn):
				// The responder acknowledges the late PSN itself, with
				// no NAK before: had the run's requests reached it first,
				// it would have NAKed the first of them then. They came
				// after, in order: the capture's order. Followed up to the
				// first PSN the capture has not shown.
				t.resync(l, d.Reverse(), rev.keptFrom(rev.nextPSN), in)
			}
		case 1, 3:
			// An RNR NAK or a NAK names the PSN the responder did not
			// take: it took the ones before it.
			if dd > 0 && dd < aheadBits {
				t.resync(l, d.Reverse(), r.psn, in)
				if r.syndrome == 0x60 {
					// A PSN sequence error: the responder waits for the
					// NAK's PSN and got a later one, which the capture
					// holds among the requests out of sequence (it put
					// the PSNs before in an order the responder did not
					// see): those it dropped, a run the wire shows lost.
					rev.reopenRun()
					shown = t.lossShown(l, d.Reverse(), in)
				}
			} else if dd == 0 && r.syndrome == 0x60 {
				shown = t.lossShown(l, d.Reverse(), in)
			}
			if r.syndrome != 0x60 && rev.damaged && dd >= 0 && dd < aheadBits &&
				slices.ContainsFunc(rev.dmg, func(m damagedReq) bool { return m.req.roce.psn == r.psn }) {
				// An RNR NAK, or a NAK other than a PSN sequence error,
				// answers a request that reached the responder whole (a
				// packet whose ICRC fails is dropped unanswered; these
				// come of the responder's checks after the ICRC's and
				// the PSN's, IBA Vol. 1): the capture's copy of that PSN
				// is the damaged one. What the requester sends again
				// after an RNR NAK is a retransmission, as the undamaged
				// capture would show it.
				t.resync(l, d.Reverse(), (r.psn+1)&0xFFFFFF, in)
			}
		}
	}
	if len(rev.sumUnsure) > 0 && class != 2 {
		next := r.psn // a NAK's PSN is the one not taken
		if class == 0 {
			next = (r.psn + 1) & 0xFFFFFF
		}
		t.sumsTaken(l, d.Reverse(), next)
	}
	if class != 0 && rev.damaged && !behind {
		// The responder names the PSN it did not take: a damaged request
		// held from it on was the network's packet (it drops the rest of
		// a run after a NAK as well, and the requester sends them again).
		// Not where the capture showed that PSN taken before the NAK (a
		// NAK shown behind the requests it answers, the requester gone
		// back already): what came after the PSN sent again the NAK does
		// not speak of.
		rev.forgetDamaged(func(psn uint32) bool { return psnDiff(psn, r.psn) < 0 })
	}
	if class == 3 {
		rev.goBack.nak, rev.goBack.nakNS = r.psn, in.ns
		// The responder waits for the PSN: a damaged copy of it was
		// dropped, the pass's copy was needed.
		rev.dmgPass = slices.DeleteFunc(rev.dmgPass, func(m passDamaged) bool { return m.req.roce.psn == r.psn })
	}
	if class != 0 {
		// The requester goes back to the NAK's PSN: what comes next
		// from it on is sent again, not the capture's late copy (the
		// PSNs before it the responder took: a copy of one coming late
		// is still the capture's order); a pending gap whose PSNs it
		// names was loss (a NAK of a PSN before the late one answers an
		// earlier run: the responder's direction shown behind the
		// requests).
		rev.late.dropFrom(r.psn)
		if w := &rev.ahead; class == 3 && w.run && rev.havePSN && psnDiff(r.psn, rev.nextPSN) < 0 {
			w.goBack = true
		}
		for i := range rev.gapPend {
			p := &rev.gapPend[i]
			switch {
			case !p.on || class != 3 || !p.named(r.psn):
			case shown:
				*p = pendingLoss{} // the run this NAK showed
			default:
				shown = true
				t.pendShown(l, d.Reverse(), i, in)
			}
		}
	} else {
		for i := range rev.gapPend {
			p := &rev.gapPend[i]
			if !p.on || psnDiff(r.psn, p.upTo) < 0 && r.psn != p.late() {
				continue
			}
			if p.onResend && p.held {
				// Sent again after its copy held out of sequence, which
				// the responder dropped: a retransmission, counted so.
				*p = pendingLoss{}
				continue
			}
			if p.onResend && !rev.clocksApart(in.ns) {
				// The late PSN came as a step of a resend (the
				// requester going back over PSNs it had sent, after a
				// NAK or a timeout before the run): the copy of it the
				// run left out was sent and the capture never showed
				// it, and this one is its retransmission, as the whole
				// capture would show them (settleGoBack). Not where
				// the capture already put requests of the direction
				// after their ACKs (two clocks apart): there the same
				// shape is the first copy after a loss on the path,
				// shown late.
				t.resentNotCaptured(l, d.Reverse(), p.number, p.ns)
				t.notCapturedOn(l, in)
				*p = pendingLoss{}
				continue
			}
			if !rev.clocksApart(in.ns) && rev.goBack.answeredDup(p.late()) {
				// The responder's last ACK answered more duplicates of
				// the PSNs it covers than the capture showed (dupACK):
				// the late PSN came as one of them, a resend.
				if !p.held {
					t.resentNotCaptured(l, d.Reverse(), p.number, p.ns)
					t.notCapturedOn(l, in)
				}
				*p = pendingLoss{}
				continue
			}
			// The responder took the run's PSNs with no NAK and none
			// sent again: the capture showed them out of order, unless
			// a pass of the requester's over them leaves the late PSN
			// out (settleGoBack: then it was a resend).
			rev.countReordered(p.carried, 1)
			// The requests since that the tracker took as the PSN
			// expected, sent again after their copies held out of
			// sequence, came after the responder had taken those
			// copies (not dropped: no longer out of sequence):
			// duplicates, which this ACK and its repeats answer
			// (dupACK). Up to a loss the wire showed after: what was
			// taken again since resends that loss.
			again := rev.goBack.takenAgain - p.takenAgain
			if p.shown {
				again = p.takenShown - p.takenAgain
			}
			rev.goBack.carry += again
			// The run's requests, counted dropped as they came, the
			// responder took.
			rev.OutOfSeq = max(rev.OutOfSeq-max(again, p.requests), 0)
			if !p.again {
				// Until a pass says it was a resend (a second copy
				// shown since says it was the original). Not sent on
				// its own where the run it filled was its next PSN
				// alone, shown before it: two neighbours of one burst
				// the other way round.
				swapped := p.missing == 1 && p.requests == 1
				rev.goBack.noteLate(lateReq{psn: p.late(), number: p.number, ns: p.ns, carried: p.carried, pass: -1, lone: !swapped})
			}
			*p = pendingLoss{}
			t.raise(&l.expert, expert.CaptureReordered, in)
		}
	}
	if class == 0 {
		t.dupACK(l, d, in)
	} else {
		rev.goBack.acked = false
	}
	switch class {
	case 1:
		rc.RNRs++
		t.raise(&l.expert, expert.RNRNAK, in)
	case 3:
		rc.NAKs++
		if code := r.syndrome & 0x1F; int(code) < len(rc.NAKCodes) {
			rc.NAKCodes[code]++
		}
		t.raise(&l.expert, expert.NAK, in)
	}
	if c := rev.ackedConn(r.psn); c != nil {
		t.touchConn(c, in, d)
		if t.recording(c) {
			kind := "ACK"
			switch class {
			case 1:
				kind = "RNR NAK"
			case 3:
				kind = "NAK " + decode.NAKCode(r.syndrome&0x1F).String()
			}
			t.note(c, in, d, "RoCE "+kind, fmt.Sprintf("for PSN %#06x MSN %d", r.psn, r.msn))
		}
	}
}

// flip swaps client and server in a link group built from traffic alone:
// its first seen direction was taken as client->server, and an LLC request
// (only the server sends CONFIRM_LINK and ADD_LINK requests), a CLC
// handshake or another group's orientation says otherwise. All links of
// the group turn together; once the roles are known they stay.
func (t *Tracker) flip(g *LinkGroup, in *input) bool {
	if !g.Inferred || g.rolesKnown {
		return false
	}
	for _, l := range g.links {
		l.Client, l.Server = l.Server, l.Client
		l.RC[0], l.RC[1] = l.RC[1], l.RC[0]
		l.keys[0], l.keys[1] = l.keys[1], l.keys[0]
		l.keyed[0], l.keyed[1] = l.keyed[1], l.keyed[0]
		l.rkeys[0], l.rkeys[1] = l.rkeys[1], l.rkeys[0]
		l.llcPend[0], l.llcPend[1] = l.llcPend[1], l.llcPend[0]
		for d := range 2 {
			if l.keyed[d] {
				t.byQP[l.keys[d]] = linkRef{l, Dir(d)}
			}
		}
	}
	t.clearQPCache()
	g.tokens[0], g.tokens[1] = g.tokens[1], g.tokens[0]
	pending := make(map[rkeyKey]pendingRKey, len(g.pendingRKeys))
	for k, v := range g.pendingRKeys {
		pending[rkKey(k.link, Dir(k.dir).Reverse(), k.rkey)] = v
	}
	g.pendingRKeys = pending
	g.ServerPeerID, g.ClientPeerID = g.ClientPeerID, g.ServerPeerID
	g.ServerLGRID, g.ClientLGRID = g.ClientLGRID, g.ServerLGRID
	for _, c := range g.conns {
		c.Flow[0], c.Flow[1] = c.Flow[1], c.Flow[0]
		if c.stream != nil {
			c.stream.dir[0], c.stream.dir[1] = c.stream.dir[1], c.stream.dir[0]
		}
		c.tokens[0], c.tokens[1] = c.tokens[1], c.tokens[0]
		c.hasTok[0], c.hasTok[1] = c.hasTok[1], c.hasTok[0]
		c.ClientEP, c.ServerEP = c.ServerEP, c.ClientEP
		for i := range c.Timeline {
			c.Timeline[i].Dir ^= 1
		}
	}
	if l := t.cur.theLink(); l != nil && l.lgr == g {
		t.cur.dir ^= 1
	}
	for _, l := range g.links {
		if l.FirstFrame == in.number {
			// The link's first frame told its roles: nothing of it
			// was shown the other way round.
			continue
		}
		l.addHistory(in, textEvent("roles identified: client and server were the other way round"))
	}
	return true
}

// settle records that g's roles are known (from an LLC request or a CLC
// handshake), so the A/B labels become client/server.
func (g *LinkGroup) settle() {
	g.rolesKnown = true
	for _, l := range g.links {
		l.Inferred = false
	}
}

// llcName names an LLC message as sent: "DELETE_LINK_V2 req".
func llcName(m *llcIn) string {
	if m.resp {
		return m.typ.String() + " resp"
	}
	return m.typ.String() + " req"
}
