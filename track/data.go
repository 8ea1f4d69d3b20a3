package track

import (
	"cmp"
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
)

// rmbeSize is the size of the RMBE that direction d writes into.
func (c *Conn) rmbeSize(d Dir) uint32 {
	if d == DirC2S {
		return c.ServerEP.RMBESize
	}
	return c.ClientEP.RMBESize
}

// sizeContradicted forgets rmbeSize(d) where it came from a damaged copy
// of its CLC message (Conn.sizeDamaged) and count, a cursor into that
// RMBE that a CDC the receiver took carries, is past it: the size was the
// copy's damage (the rmbe_size nibble, a power of two off), not the
// sender's cursor. (A cursor at the size is a sender's off-by-one, the
// one smc.cdc.cursor_past_rmbe is for: it stands.) What was counted
// against that size is taken back; the size is learned again from the
// cursor's wraps (learnRMBESize).
func (t *Tracker) sizeContradicted(c *Conn, d Dir, count uint32, in *input) {
	size := c.rmbeSize(d)
	if !c.sizeDamaged[d] || size == 0 || count <= size {
		return
	}
	c.sizeDamaged[d] = false
	if d == DirC2S {
		c.ServerEP.RMBESize = 0
	} else {
		c.ClientEP.RMBESize = 0
	}
	for e, n := range c.pastDamaged[d] {
		c.Flow[e].PastRMBE -= int(n)
		for range n {
			c.expert.unmark(expert.CursorPastRMBE)
		}
	}
	c.pastDamaged[d] = [2]uint32{}
	if t.recording(c) {
		t.note(c, in, d, "CDC", fmt.Sprintf("cursor %d past the %d-byte RMBE a damaged copy of its CLC message announced: that size was the damage", count, size))
	}
}

// cdc follows one CDC: sequence, cursors (bytes produced and consumed),
// flags, close, failover.
func (t *Tracker) cdc(l *Link, d Dir, in *input) {
	m := &in.roce.cdc
	g := l.lgr
	c := g.tokens[d][m.token]
	if c == nil {
		c = t.damagedToken(l, d, m.token)
	}
	if c == nil && in.roce.icrcCut {
		c = t.cutTokenConn(l, d, in)
	}
	if c == nil && (m.prodFlags&cdcFailover != 0 || len(g.unplaced) > 0) {
		// (A CDC that is no validation goes on a connection of another
		// group only where this one deleted a link it lacks: goesOn.)
		c, d = t.failoverConn(l, d, m, in)
		g = l.lgr
	}
	switch {
	case c == nil:
		c, d = t.inferConn(l, d, m, in)
	case (c.Inferred || c.halfPlaced) && !c.hasTok[d.Reverse()]:
		if y := g.halfMatch(d, m.cons, c); y != nil {
			c = t.merge(c, y)
		}
	}
	t.cdcConn(c, l, d, in)
}

// cdcConn follows a CDC of connection c in direction d, on link l (nil for
// a CDC of ANCK's dump device, which names no link).
func (t *Tracker) cdcConn(c *Conn, l *Link, d Dir, in *input) {
	m := &in.roce.cdc
	t.touchConn(c, in, d)
	rec := t.recording(c)
	f := &c.Flow[d]
	f.CDCs++
	if l == nil {
		f.Dumped++
	}
	if m.first() && m.prodFlags&cdcFailover == 0 {
		c.cameUp = true
	}
	if !m.noSeq && !f.haveFirstSeq {
		f.firstSeq, f.haveFirstSeq = m.seq, true
	}
	if c.TFirstCDC.IsZero() || in.number < c.firstCDCFrame {
		c.TFirstCDC, c.firstCDCFrame = in.ts(), in.number
	}
	t.malformedCopy(c, in)
	connUp(c)
	var claimed uint64
	if l != nil {
		claimed = t.claimWrites(c, l, d, m, in.number)
		if claimed > 0 && t.opts.Stream != nil {
			// WRITEs whose rkey named no connection when they came
			// were not placed (streamCDC's GapNoAddress).
			c.streamOf().dir[d].noAddr = true
		}
	}
	if l != nil {
		f.lastCDCPSN, f.lastCDCPkts = in.roce.psn, l.RC[d].Packets
	}
	if m.prodFlags&cdcFailover != 0 && l != nil {
		// Sent on the surviving link with seq = last - 1 and zero cursors:
		// it moves the connection and must not disturb the counters.
		f.Failover++
		if f.FailoverFrame == 0 {
			f.FailoverFrame, f.failoverNS = in.number, in.ns
		}
		t.raise(&c.expert, expert.Failover, in)
		if old := c.link; old != nil && old != l {
			// The connection leaves its link: what that link still held
			// out of sequence will not be sent on it again.
			t.settleRun(old, d, in.ns)
		}
		from := c.Link
		t.attach(c, l)
		if rec {
			what := fmt.Sprintf("connection moved from link %d to link %d", from, l.ID)
			if from == l.ID {
				what = fmt.Sprintf("peer confirms the move to link %d", l.ID)
			}
			t.note(c, in, d, "CDC", fmt.Sprintf("failover validation seq %d token %d: %s", m.seq, m.token, what))
		}
		return
	}
	if l != nil && c.link != l {
		if c.link != nil && c.link.lgr == l.lgr {
			// On another link of its group with no failover CDC the
			// capture shows: Linux moves a connection only with one
			// from each side (smc_switch_conns, net/smc/smc_core.c), so
			// the capture missed them, and maybe more CDCs of either
			// direction (the other's next CDC comes on the new link).
			c.Flow[DirC2S].uncaptured, c.Flow[DirS2C].uncaptured = true, true
		}
		t.attach(c, l)
	}
	missed := f.uncaptured // CDCs of this direction may be among frames the capture missed
	if !f.haveSeq && !m.noSeq && !c.Inferred && !c.halfPlaced && len(c.CLCTypes) > 0 {
		// A connection known from its handshake numbers its CDCs from 1
		// (tx_cdc_seq starts at 0 with the connection, smc_cdc_msg_send
		// adds 1 before each): a first one past 1 follows some missed.
		f.LastSeq, f.haveSeq = 0, true
	}
	dd := int16(0) // CDCs the sequence number moved on by: 0 when not known
	if f.haveSeq && !m.noSeq {
		dd = seqDiff(m.seq, f.LastSeq)
	}
	if in.isDump && t.dumpDamaged(c, d, f, m, &dd, in) {
		return
	}
	var before dumpLast // a dump CDC's: the direction before it
	if in.isDump {
		before = f.dumpBefore(c)
	}
	if f.haveSeq && !m.noSeq {
		if dd <= 0 && in.isRoCE && in.roce.shownLate {
			// A CDC the capture showed after the next ones it had
			// followed, its request after the responder's ACK of it
			// (reordered): one of those the capture had not shown
			// (SeqNotCaptured), found now; its cursors are behind.
			if f.SeqNotCaptured > 0 {
				f.SeqNotCaptured--
			}
			if rec {
				t.note(c, in, d, "CDC", fmt.Sprintf("seq %d shown late (last %d): the capture's order, its cursors behind", m.seq, f.LastSeq))
			}
			return
		}
		if dd <= 0 {
			f.SeqDup++
			t.raise(&c.expert, expert.SeqDup, in)
			if rec {
				t.note(c, in, d, "CDC", fmt.Sprintf("seq %d again (last %d): ignored", m.seq, f.LastSeq))
			}
			return
		}
		switch {
		case dd > 1 && f.uncaptured:
			// The missing CDCs are among the requests the capture
			// missed (the responder acknowledged them): not a gap.
			f.SeqNotCaptured += int(dd) - 1
		case dd > 1 && l == nil:
			// A CDC of ANCK's dump device, which copies each CDC its
			// host sends, with no ACK to tell what the capture missed:
			// a sender numbers every CDC it sends and takes a number
			// back only from one it could not send (smc_cdc_msg_send,
			// net/smc/smc_cdc.c), so the missing ones are the capture's.
			before.skipped = int(dd) - 1
			f.SeqNotCaptured += before.skipped
			t.raise(&c.expert, expert.NotCaptured, in)
		case dd > 1:
			f.SeqGaps += int(dd) - 1
			t.raise(&c.expert, expert.SeqGap, in)
		}
	}
	if !m.noSeq {
		f.LastSeq, f.haveSeq = m.seq, true
	}
	f.uncaptured = false
	// A connection known from its handshake starts at cursor 0; one joined
	// mid-stream starts counting at its first CDC.
	var produced, consumed uint64
	okP, okC := false, false
	// A connection known from its handshake starts from cursor 0, so its
	// first CDC may already tell the size (its cursor wrapped before it:
	// a sender that fills the RMBE before it announces anything).
	if c.rmbeSize(d) == 0 && (f.haveProd || !c.Inferred && !missed && m.first()) {
		t.learnRMBESize(c, d, f, m.prod)
	}
	if size := uint64(c.rmbeSize(d)); size != 0 && f.unsizedWraps != 0 {
		// Wraps the cursor made before the size was known (a wrap of
		// the WRITEs, or a late Accept, told it since).
		if n := int64(f.unsizedWraps*size) + f.unsizedDelta; n > 0 {
			f.Bytes += uint64(n)
		}
		f.unsizedWraps, f.unsizedDelta = 0, 0
	}
	// A cursor counts bytes into an RMBE: Linux wraps it before the
	// buffer's size (smc_curs_add, net/smc/smc_cdc.h).
	t.sizeContradicted(c, d, m.prod.Count, in)
	t.sizeContradicted(c, d.Reverse(), m.cons.Count, in)
	if size, peer := c.rmbeSize(d), c.rmbeSize(d.Reverse()); size != 0 && m.prod.Count >= size || peer != 0 && m.cons.Count >= peer {
		f.PastRMBE++
		t.raise(&c.expert, expert.CursorPastRMBE, in)
		switch {
		case size != 0 && m.prod.Count >= size && c.sizeDamaged[d]:
			c.pastDamaged[d][d]++
		case peer != 0 && m.cons.Count >= peer && c.sizeDamaged[d.Reverse()]:
			c.pastDamaged[d.Reverse()][d]++
		}
	}
	errs := f.CursorErrors
	if f.haveProd || !c.Inferred {
		size := c.rmbeSize(d)
		switch produced, okP = m.prod.Sub(f.Prod, size); {
		case okP:
			f.Bytes += produced
		case size == 0 && uint16(m.prod.Wrap-f.Prod.Wrap) < 0x8000:
			// The cursor passed the end of an RMBE whose size no CLC the
			// capture holds told (joined mid-stream, or its message
			// missed) and the WRITEs did not show: how far it went is
			// not known yet, and nothing says that it went wrong. It is
			// counted once a later wrap shows the size.
			f.unsizedWraps += uint64(uint16(m.prod.Wrap - f.Prod.Wrap))
			f.unsizedDelta += int64(m.prod.Count) - int64(f.Prod.Count)
		default:
			f.CursorErrors++
		}
	}
	holdCons := false
	if f.haveCons || !c.Inferred {
		peer := c.rmbeSize(d.Reverse())
		switch consumed, okC = m.cons.Sub(f.Cons, peer); {
		case okC:
			f.Consumed += consumed
		case peer == 0 && uint16(m.cons.Wrap-f.Cons.Wrap) < 0x8000:
			// The consumer cursor passed the end of an RMBE whose size
			// no CLC the capture holds told (joined mid-stream, or its
			// message missed) and no producer wrap showed yet: what it
			// consumed is counted from the cursor before, kept, once the
			// size is learned (learnRMBESize).
			holdCons = true
		default:
			f.CursorErrors++
		}
	}
	if f.CursorErrors != errs {
		if missed && (c.rmbeSize(d) == 0 || c.rmbeSize(d.Reverse()) == 0) {
			// The capture missed requests of this direction (a CDC or a
			// WRITE among them) of a connection whose RMBE size no CLC
			// told: a cursor that wrapped meanwhile cannot be followed,
			// and nothing says that its sender moved it wrongly.
			f.CursorErrors = errs
		} else {
			t.raise(&c.expert, expert.CursorBackwards, in)
		}
	}
	if !f.haveProd && c.Inferred {
		// The first CDC seen of a joined connection announces the WRITEs
		// seen just before it: count them from there on.
		f.Bytes += claimed
		f.joinProd, f.joinCons, f.joinClaimed = m.prod, m.cons, claimed
	}
	if in.isDump {
		f.keepDump(before, m, in, produced, consumed, okP, okC)
	}
	if t.opts.Stream != nil {
		t.streamCDC(c, d, f, produced, okP, missed, in)
	}
	f.Prod, f.haveProd = m.prod, true
	if !holdCons {
		f.Cons, f.haveCons = m.cons, true
	}
	f.sinceCDC = 0
	t.cur.hasCDC, t.cur.cdcBytes = okP, produced
	t.stall(c, d, in, consumed, missed)
	if m.prodFlags&cdcWriteBlocked != 0 {
		f.WriteBlocked++
		t.raise(&c.expert, expert.WriteBlocked, in)
		if f.wbSince == 0 {
			f.wbSince = in.ns
			f.WBEpisodes++
		}
	} else if f.wbSince != 0 {
		// The episode ends with the direction's next CDC without the flag.
		t.longest(&f.WBLongest, &f.wbAtLeast, f.wbSince, in.ns)
		f.wbSince = 0
	}
	if m.prodFlags&cdcUrgentPending != 0 {
		f.UrgentPending++
	}
	if m.prodFlags&cdcUrgentPresent != 0 {
		f.UrgentPresent++
	}
	if m.prodFlags&(cdcUrgentPending|cdcUrgentPresent) != 0 {
		t.raise(&c.expert, expert.Urgent, in)
	}
	if m.prodFlags&cdcConsUpdReq != 0 {
		f.ConsUpdReq++
	}
	if m.connFlags&cdcDoneWriting != 0 {
		f.DoneWriting = true
	}
	if m.connFlags&cdcConnClosed != 0 {
		f.Closed = true
	}
	if m.connFlags&cdcAbort != 0 {
		f.Aborted = true
		t.raise(&c.expert, expert.ConnAbort, in)
	}
	if m.connFlags&(cdcConnClosed|cdcAbort) != 0 {
		// The sender writes no more: its wait for room is over, and
		// so, on an abort, is the peer's.
		t.endEpisodes(c, in, d, m.connFlags&cdcAbort != 0)
	}
	if c.TClose.IsZero() && c.Closed() {
		c.TClose = in.ts()
	}
	if rec {
		what := "CDC"
		switch {
		case in.roce.hasRWWI:
			what = "RWWI " + in.roce.rwwi.op.String()
		case in.isDump:
			what = "CDC (dump device)"
		}
		t.note(c, in, d, what, cdcInfo(m, produced, okP, consumed, okC, sideName(c, d)))
	}
}

// rwwi follows ANCK's RDMA WRITE with Immediate, which in a link group
// with write-with-immediate replaces the CDC (smc_cdc_rx_handler_rwwi,
// ANCK net/smc/smc_cdc.c): the receiver finds the connection by the
// immediate's token, advances the producer cursor by the write's length
// and its view of the peer's consumer cursor by diff_cons, and takes the
// flags. The tracker makes the CDC the receiver makes of it and follows
// that, without a sequence number (it carries none).
func (t *Tracker) rwwi(l *Link, d Dir, in *input) {
	r := &in.roce
	w := &r.rwwi
	c := l.lgr.tokens[d][uint32(w.token)]
	if c == nil {
		// The token is announced by the receiver's handshake message,
		// which a capture of the sender's side lacks: as a first CDC
		// (claimFirst), the first write with immediate of a direction
		// is the one connection on the link that waits for its first
		// message of that direction. Otherwise no connection is
		// inferred from an immediate (32 bits, no sequence number).
		c = t.claimFirst(l, d, &cdcIn{token: uint32(w.token), noSeq: true}, in)
	}
	if c == nil {
		t.cur.unattached = true
		return
	}
	n := r.dmaLen
	if r.opcode == opWriteLastImm {
		n = l.RC[d].curLen
	}
	f := &c.Flow[d]
	m := &r.cdc
	*m = cdcIn{token: uint32(w.token), noSeq: true, credits: w.credits, anck: w.hasCredits,
		prodFlags: w.prodFlags, connFlags: w.connFlags}
	m.prod = f.Prod.advance(n, c.rmbeSize(d))
	m.cons = f.Cons
	if w.op != decode.RWWICtrl {
		m.cons = f.Cons.advance(w.diffCons, c.rmbeSize(d.Reverse()))
	}
	r.hasCDC = true
	t.cdcConn(c, l, d, in)
}

// dump follows a CDC of ANCK's dump device: its connection is the TCP
// connection of the UDP 4-tuple, written from the CDC's sender.
func (t *Tracker) dump(in *input) {
	t.stats.Dump++
	if !t.dumpers[in.dumpFrom.Addr()] {
		if t.dumpers == nil {
			t.dumpers = make(map[netip.Addr]bool)
		}
		t.dumpers[in.dumpFrom.Addr()] = true
	}
	key := makeTCPKey(in.dumpFrom, in.dumpTo)
	c := t.byTuple[key]
	if c == nil && in.dumpCDC {
		c = t.joinDumped(key, in)
	}
	if c == nil {
		t.cur.unattached = true
		return
	}
	d := DirC2S
	if in.dumpFrom != c.Client {
		d = DirS2C
	}
	if in.dumpCDC && dumpCopy(&c.Flow[d], &in.roce.cdc) {
		t.copiedPieces(c, d, in.roce.cdc.seq, in.ns)
		t.captureCopy(in)
		return
	}
	t.cur.setConn(c)
	t.cur.dir = d
	if !in.dumpCDC {
		t.touchConn(c, in, d)
		c.Flow[d].followPiece(in.dumpData, in.number)
		if t.opts.Stream != nil {
			t.placeDump(c, d, in.dumpData, in.number)
		}
		return
	}
	if len(t.dumpTwins) > 0 {
		t.dumpPieces(c, d, in)
	}
	c.Flow[d].pieces.cdc()
	if c.Outcome == OutcomePending {
		// A host sends CDCs only on a connection its handshake set up
		// (smc_cdc_get_slot_and_msg_send once smc_connect or
		// smc_listen_work is done, net/smc/af_smc.c), and its dump device
		// copies only those: the rest of the handshake, which the capture
		// missed or holds damaged, succeeded.
		c.Outcome = OutcomeSMCR
		c.handshakeWentOn()
		if c.SMCD {
			c.Outcome = OutcomeSMCD
		}
	}
	t.cdcConn(c, nil, d, in)
}

// dumpFirst is the last dumped CDC of a connection direction no
// connection has.
type dumpFirst struct {
	dumpSaid
	noSeq  bool // a CDC with no sequence number (ANCK's of a write with immediate)
	number int
	ns     int64
}

// pairs reports whether m, the next dumped CDC of the held CDC a's
// direction, is one its sender may send right after a: the next sequence
// number or the one after, its cursors moved forward by at most a wrap a
// CDC (the RMBE size is not known). Damage repeats (editcap -E writes the
// same bytes again and again): frames whose 4-tuples it made the same lie
// apart in the stream.
func (a *dumpFirst) pairs(m *cdcIn) bool {
	dd := seqDiff(m.seq, a.seq)
	return !a.noSeq && !m.noSeq && dd >= 1 && dd <= maxDumpPair &&
		fitsRMBE(m.prod, a.prod, 0, dd) && fitsRMBE(m.cons, a.cons, 0, dd)
}

// maxDumpPair is how far on a dumped CDC's sequence number may be from
// the held one it makes a connection with (pairs): one CDC between them
// the capture missed.
const maxDumpPair = 2

// maxDumpFirst bounds dumpFirst: a damaged capture leaves one behind for
// every dump frame whose addresses or ports its damage changed.
const maxDumpFirst = 4096

// joinDumped returns the connection of key that a dumped CDC, in, makes
// in a capture begun after its handshake (or that missed it), or nil:
// the dump frame names the connection by its 4-tuple. A direction's CDC
// is held, unattached, and the next that pairs with it makes the
// connection, joined mid-stream (who is client not known), counting from
// what the held one said: a frame whose damaged header named no
// connection makes none. Its TCP segments, a FIN, find it by the
// 4-tuple; a SYN that reuses the 4-tuple makes a new one (tcp).
func (t *Tracker) joinDumped(key tcpKey, in *input) *Conn {
	m := &in.roce.cdc
	dk := [2]netip.AddrPort{in.dumpFrom, in.dumpTo}
	first, ok := t.dumpFirst[dk]
	if !ok || !first.pairs(m) {
		if t.dumpFirst == nil || len(t.dumpFirst) >= maxDumpFirst {
			t.dumpFirst = make(map[[2]netip.AddrPort]dumpFirst)
		}
		t.dumpFirst[dk] = dumpFirst{dumpSaid: said(m), noSeq: m.noSeq, number: in.number, ns: in.ns}
		return nil
	}
	rk := [2]netip.AddrPort{in.dumpTo, in.dumpFrom}
	other, both := t.dumpFirst[rk]
	delete(t.dumpFirst, dk)
	delete(t.dumpFirst, rk)
	c := t.newConn(in)
	c.Client, c.Server = in.dumpFrom, in.dumpTo
	c.Inferred, c.Outcome = true, OutcomeUnknown
	t.stats.InferredConns++
	t.tuple(c)
	first.start(&c.Flow[DirC2S])
	if both {
		other.start(&c.Flow[DirS2C])
	}
	return c
}

// start makes f, a flow of a connection joined from dumped CDCs, go on
// from what its held CDC a said.
func (a *dumpFirst) start(f *Flow) {
	f.Prod, f.Cons, f.haveProd, f.haveCons = a.prod, a.cons, true, true
	f.LastSeq, f.haveSeq = a.seq, !a.noSeq
	// Should the next CDCs show the held one wrong, it is the frame named.
	f.dumpLast = dumpLast{frame: a.number, ns: a.ns}
}

func cdcInfo(m *cdcIn, produced uint64, okP bool, consumed uint64, okC bool, sender string) string {
	s := fmt.Sprintf("seq %d token %d prod %d/%d cons %d/%d", m.seq, m.token, m.prod.Wrap, m.prod.Count, m.cons.Wrap, m.cons.Count)
	if m.noSeq {
		// A write with immediate carries no sequence number; its cursors
		// are the receiver's after it.
		s = fmt.Sprintf("token %d prod %d/%d cons %d/%d", m.token, m.prod.Wrap, m.prod.Count, m.cons.Wrap, m.cons.Count)
	}
	if okP && produced > 0 {
		s += fmt.Sprintf(" (+%d B written)", produced)
	}
	if okC && consumed > 0 {
		s += fmt.Sprintf(" (+%d B consumed)", consumed)
	}
	// Flag names as in the kernel, with what they mean here.
	flags := []struct {
		on   bool
		name string
	}{
		{m.prodFlags&cdcWriteBlocked != 0, "write-blocked: " + sender + " has data but the peer's RMBE is full"},
		{m.prodFlags&cdcUrgentPending != 0, "urgent-pending: " + sender + " has urgent data queued"},
		{m.prodFlags&cdcUrgentPresent != 0, "urgent-present: the last byte written is urgent data"},
		{m.prodFlags&cdcConsUpdReq != 0, "cons-update-requested: " + sender + " asks for the peer's consumer cursor"},
		{m.connFlags&cdcDoneWriting != 0, "peer-done-writing: " + sender + " shut down writing"},
		{m.connFlags&cdcConnClosed != 0, "peer-conn-closed: " + sender + " closed the connection"},
		{m.connFlags&cdcAbort != 0, "peer-conn-abort: " + sender + " aborted the connection"},
	}
	for _, f := range flags {
		if f.on {
			s += " [" + f.name + "]"
		}
	}
	return s
}

// sideName names the sender of direction d of c.
func sideName(c *Conn, d Dir) string {
	unknown := c.Inferred && (c.link == nil || c.link.Inferred)
	switch {
	case unknown && d == DirC2S:
		return "A"
	case unknown:
		return "B"
	case d == DirC2S:
		return "client"
	}
	return "server"
}

// stall follows whether the RMBE that direction d writes into is full:
// this CDC's producer cursor a whole RMBE ahead of the consumer cursor
// the receiver last announced. It stays full until the receiver announces
// that it consumed (its CDC in the other direction); when that took longer
// than stallAfter, the receiver had stopped reading, and the CDC that says
// it reads again carries expert.ConsumerStall (one still full at the end
// of the capture is decided there, connFindings). consumed is what this
// CDC's own consumer cursor advanced; missed says that CDCs of its
// direction may be among frames the capture missed, one of which may have
// said it consumed earlier: no stall is measured to this one then.
func (t *Tracker) stall(c *Conn, d Dir, in *input, consumed uint64, missed bool) {
	if o := &c.Flow[d.Reverse()]; o.fullSince != 0 && consumed > 0 {
		if dur := in.ns - o.fullSince; dur >= int64(stallAfter) && !missed {
			t.longest(&o.StallLongest, &o.stallAtLeast, o.fullSince, in.ns)
			t.raise(&c.expert, expert.ConsumerStall, in)
		}
		o.fullSince = 0
	}
	f := &c.Flow[d]
	if f.fullSince != 0 || c.rmbeSize(d) == 0 || (c.Inferred || c.halfPlaced) && !c.Flow[d.Reverse()].haveCons {
		return
	}
	if full(f.Prod, c.Flow[d.Reverse()].Cons) {
		f.fullSince, f.fullFrame = in.ns, in.number
	}
}

// longest makes *longest the episode from since to now where it is longer,
// *atLeast saying whether its length lacks the time across a step back of
// the capture's clock (a lower bound).
func (t *Tracker) longest(longest *time.Duration, atLeast *bool, since, now int64) {
	if d := time.Duration(now - since); d > *longest {
		*longest, *atLeast = d, t.clock.steps.between(since, now)
	}
}

// endEpisodes ends, at in's frame, direction d's open write-blocked
// episode and the stay of its peer's RMBE full (both directions' when
// both is set): a connection that closes waits for nothing more, and an
// episode measured past its close would count time the connection did
// not exist. A stay full longer than stallAfter was a consumer stall to
// the close.
func (t *Tracker) endEpisodes(c *Conn, in *input, d Dir, both bool) {
	for e := range c.Flow {
		if Dir(e) != d && !both {
			continue
		}
		f := &c.Flow[e]
		if f.wbSince != 0 {
			t.longest(&f.WBLongest, &f.wbAtLeast, f.wbSince, in.ns)
			f.wbSince = 0
		}
		if f.fullSince != 0 {
			if c.stalled(Dir(e), in.ns) {
				t.longest(&f.StallLongest, &f.stallAtLeast, f.fullSince, in.ns)
				c.expert.add(expert.ConsumerStall, f.fullFrame, f.fullSince, "")
			}
			f.fullSince = 0
		}
	}
}

// stalled reports whether direction d's stay full (fullSince) has lasted
// stallAfter at now with no word from the consumer: its direction shows
// no CDC since that the capture may have missed (the responder took
// requests of it the capture never showed), one of which may have said
// that it consumed.
func (c *Conn) stalled(d Dir, now int64) bool {
	f := &c.Flow[d]
	return f.fullSince != 0 && now-f.fullSince >= int64(stallAfter) && !c.Flow[d.Reverse()].uncaptured
}

// full reports whether a producer cursor is a whole RMBE (or more) ahead
// of the consumer cursor of the same RMBE: a wrap ahead and at or past its
// byte (a sender never writes past the consumer's last announced place,
// smc_tx_rdma_writes in net/smc/smc_tx.c, so this is the buffer full).
func full(prod, cons Cursor) bool {
	dw := uint16(prod.Wrap - cons.Wrap)
	return dw == 1 && prod.Count >= cons.Count || dw > 1 && dw < 0x8000
}

// learnRMBESize works out the receiver's RMBE size of a connection whose
// CLC message telling it is not in the capture (joined mid-stream, or the
// message missed) the first time its producer cursor wraps:
// the WRITEs since the last CDC say how many bytes the wrap covered.
// Only a size Linux can have (16 KiB << n) is accepted.
func (t *Tracker) learnRMBESize(c *Conn, d Dir, f *Flow, cur Cursor) {
	dw := uint64(uint16(cur.Wrap - f.Prod.Wrap))
	if dw == 0 || dw >= 0x8000 || f.sinceCDC == 0 {
		return
	}
	n := int64(f.sinceCDC) + int64(f.Prod.Count) - int64(cur.Count)
	if n <= 0 || n%int64(dw) != 0 {
		return
	}
	size := uint64(n) / dw
	if size < 1<<14 || size&(size-1) != 0 || size > 1<<29 || uint64(cur.Count) >= size || uint64(f.Prod.Count) >= size {
		return
	}
	if d == DirC2S {
		c.ServerEP.RMBESize = uint32(size)
	} else {
		c.ClientEP.RMBESize = uint32(size)
	}
}

// inferConn makes a connection for a CDC token nobody announced. The
// stream is paired with a joined connection that knows only the other
// direction when the evidence is unique: the CDC's consumer cursor equals
// that stream's producer cursor (see halfMatch), or, for a connection's
// first CDC, with the one handshake still waiting for it (claimFirst).
// Otherwise it starts a connection of its own, merged later by cdc.
// Tokens are no evidence:
// each side numbers its own, and they coincide across connections.
func (t *Tracker) inferConn(l *Link, d Dir, m *cdcIn, in *input) (*Conn, Dir) {
	if c, dd := t.claimHalf(l, d, m, in); c != nil {
		return c, dd
	}
	g := l.lgr
	pick := g.halfMatch(d, m.cons, nil)
	if pick != nil && pick.Inferred && m.first() {
		// The first CDC of a direction pairs with a connection joined
		// from the other's: that connection came up while the capture
		// ran, and where the one handshake waiting for it is a blind
		// one (its other direction's first CDC was missed, or came
		// damaged), it is that handshake's.
		if cands := t.firstCandidates(l, d); len(cands) == 1 && cands[0].blind() {
			c := cands[0]
			t.placeBlind(c, l, in)
			t.registerToken(c, d, m.token)
			return t.merge(c, pick), d
		}
	}
	if pick == nil {
		if c := t.claimFirst(l, d, m, in); c != nil {
			return c, d // its token registered
		}
		pick = t.newConn(in)
		pick.Inferred = true
		pick.Outcome = OutcomeUnknown
		t.stats.InferredConns++
		t.attach(pick, l)
	}
	t.registerToken(pick, d, m.token)
	return pick, d
}

// failoverConn finds the connection a failover-validation CDC belongs to
// when this link's group does not know its token: the connection was
// followed on another link that the tracker had to put in a group of its
// own (joined mid-stream, its ADD_LINK not captured). The validation
// carries the receiver's token and the last sequence number minus one
// (smc_cdc_msg_validate in net/smc/smc_cdc.c), which identifies it; both
// groups are then one. A capture that missed the connection's last CDCs
// before the failover saw an earlier last sequence number: the one
// connection with the token whose last is at most failoverMissed behind
// is taken where none matches exactly. A CDC that is no validation finds
// its connection the same way where the capture holds the validations
// damaged or not at all: the one with its token whose sequence it goes
// on, at most failoverMissed ahead (after smc_switch_conns the sender's
// CDCs go on numbering from its last, net/smc/smc_core.c; tokens come
// from one counter of the host, smc_lgr_register_conn, so two live
// connections to the same host share none).
func (t *Tracker) failoverConn(l *Link, d Dir, m *cdcIn, in *input) (*Conn, Dir) {
	validation := m.prodFlags&cdcFailover != 0
	type cand struct {
		x      *Conn
		og     *LinkGroup
		dd     Dir
		behind uint16
	}
	var best cand
	n := 0      // candidates at best's distance
	within := 0 // candidates at any distance
	for _, og := range t.lgrs {
		if og == l.lgr || (!og.Inferred && !l.lgr.Inferred) {
			continue
		}
		// A group built from traffic alone may have its directions the
		// other way round: its first seen direction was the other one.
		for _, dd := range [2]Dir{d, d.Reverse()} {
			x := og.tokens[dd][m.token]
			if x == nil || !x.Flow[dd].haveSeq || x.finished || !validation && !goesOn(x, dd, m, og, l.lgr) {
				continue
			}
			behind := m.seq + 1 - x.Flow[dd].LastSeq
			if !validation {
				behind = m.seq - x.Flow[dd].LastSeq - 1 // the next one: 0
			}
			bound := min(failoverMissed+missedSince(x.link, dd, &x.Flow[dd], l), 1<<15)
			if int(behind) < bound {
				within++
			}
			switch {
			case int(behind) >= bound:
			case best.x == nil || behind < best.behind:
				best, n = cand{x, og, dd, behind}, 1
			case behind == best.behind:
				n++
			}
		}
	}
	if best.x == nil || n > 1 || !validation && within > 1 {
		// (A CDC that is no validation moves nothing on a guess: each
		// host numbers its own tokens, so one of the other direction
		// may share it.)
		return nil, d
	}
	if best.dd != d && !t.flip(best.og, in) {
		if l.lgr.rolesKnown || !t.flip(l.lgr, in) {
			return nil, d
		}
		d = d.Reverse() // this frame's own group turned instead
	}
	t.mergeLGR(l.lgr, best.og, in)
	return best.x, d
}

// goesOn reports whether m, a CDC that is no failover validation, on a
// link of group g, may go on direction dd of x, a connection of group og
// with its token: it carries a sequence number, x was on a link that g
// deleted by a DELETE_LINK naming a link of none of its own
// (deletedElsewhere: a link goes down, its connections move, the group's
// owner deletes it, smcr_link_down in net/smc/smc_core.c; without that a
// token and sequence number two hosts' counters both give prove nothing:
// each client numbers its own tokens from one), the groups name no
// different peers (peersDiffer; one link group's peers are its own,
// smcr_lgr_match in net/smc/smc_core.c), and its producer cursor is not
// behind x's (smc_switch_cursor moves the cursors on, never back).
func goesOn(x *Conn, dd Dir, m *cdcIn, og, g *LinkGroup) bool {
	if m.noSeq || x.link == nil || !g.deletedElsewhere(x.link) {
		return false
	}
	if peersDiffer(og, g) {
		return false
	}
	f := &x.Flow[dd]
	if !f.haveProd {
		return true
	}
	_, ok := m.prod.Sub(f.Prod, x.rmbeSize(dd))
	return ok
}

// peersDiffer reports whether groups a and b, each knowing both its
// peers, name two different pairs, in either order (a group built from
// traffic may have its roles the other way round).
func peersDiffer(a, b *LinkGroup) bool {
	var none [8]byte
	if a.ServerPeerID == none || a.ClientPeerID == none || b.ServerPeerID == none || b.ClientPeerID == none {
		return false
	}
	same := a.ServerPeerID == b.ServerPeerID && a.ClientPeerID == b.ClientPeerID
	swapped := a.ServerPeerID == b.ClientPeerID && a.ClientPeerID == b.ServerPeerID
	return !same && !swapped
}

// deletedElsewhere reports whether a DELETE_LINK of g named a link none
// of its own is (unplaced) that l, a link of another group, may be: its
// link number unknown, or that one.
func (g *LinkGroup) deletedElsewhere(l *Link) bool {
	for i := range g.unplaced {
		if id := g.unplaced[i].ev.link; g.linkByID(id) == nil && (l.LinkID == 0 || l.LinkID == id) {
			return true
		}
	}
	return false
}

// failoverMissed bounds how many of a connection's last CDCs before a
// failover a capture may have missed for its validation CDC to still
// name it: beyond, the sequence numbers of another connection with the
// same token could be as close. The requests its old link carried since
// its last CDC that the capture missed (missedSince) may each have been
// one of its CDCs, and add to the bound.
const failoverMissed = 16

// missedSince is how many requests of direction d of old, f's link, the
// capture missed since f's last CDC on it: PSNs its sender used since,
// less the requests the capture showed. 0 where old is l, the CDC's own
// link, or nothing is known.
func missedSince(old *Link, d Dir, f *Flow, l *Link) int {
	if old == nil || old == l || f.CDCs == 0 {
		return 0
	}
	rc := &old.RC[d]
	if !rc.havePSN {
		return 0
	}
	used := int((rc.nextPSN - f.lastCDCPSN - 1) & 0xFFFFFF)
	return max(used-(rc.Packets-f.lastCDCPkts), 0)
}

// mergeLGR makes one link group of two that turned out to be the same
// (the older one stays), a connection having failed over between them.
func (t *Tracker) mergeLGR(a, b *LinkGroup, in *input) *LinkGroup {
	return t.mergeLGRAs(a, b, in, histEvent{kind: LinkEventMerged})
}

// mergeLGRAs is mergeLGR for the reason ev (its kind and link) tells,
// which every link of the group that goes has in its history.
func (t *Tracker) mergeLGRAs(a, b *LinkGroup, in *input, ev histEvent) *LinkGroup {
	keep, gone := a, b
	if b.ID < a.ID {
		keep, gone = b, a
	}
	for _, l := range gone.links {
		l.lgr, l.LGR = keep, keep.ID
		keep.links = append(keep.links, l)
		keep.Links = append(keep.Links, l.ID)
		ev.a, ev.b = uint64(gone.ID), uint64(keep.ID)
		l.addHistory(in, ev)
	}
	for _, c := range gone.conns {
		c.lgr, c.LGR = keep, keep.ID
		keep.conns = append(keep.conns, c)
	}
	keep.Conns = append(keep.Conns, gone.Conns...)
	for d := range gone.tokens {
		for k, v := range gone.tokens[d] {
			if _, ok := keep.tokens[d][k]; !ok {
				keep.tokens[d][k] = v
			}
		}
	}
	for k, v := range gone.pendingRKeys {
		if _, ok := keep.pendingRKeys[k]; !ok {
			keep.pendingRKeys[k] = v
		}
	}
	if keep.ServerPeerID == ([8]byte{}) {
		keep.ServerPeerID, keep.ClientPeerID = gone.ServerPeerID, gone.ClientPeerID
	}
	if keep.ServerLGRID == 0 {
		keep.ServerLGRID, keep.ClientLGRID = gone.ServerLGRID, gone.ClientLGRID
	}
	keep.Version = cmp.Or(keep.Version, gone.Version)
	keep.MaxLinks = cmp.Or(keep.MaxLinks, gone.MaxLinks)
	keep.MaxConns = cmp.Or(keep.MaxConns, gone.MaxConns)
	if gone.Deleted && (!keep.Deleted || gone.DeleteKnown && !keep.DeleteKnown) {
		keep.Deleted, keep.DeleteCode, keep.DeleteKnown = true, gone.DeleteCode, gone.DeleteKnown
	}
	keep.Inferred = keep.Inferred && gone.Inferred
	if gone.FirstFrame < keep.FirstFrame {
		keep.FirstFrame, keep.Start = gone.FirstFrame, gone.Start
	}
	for i, g := range t.lgrs {
		if g == gone {
			t.lgrs = append(t.lgrs[:i], t.lgrs[i+1:]...)
			break
		}
	}
	return keep
}

// halfMatch finds the one joined connection that knows only the direction
// opposite to d and whose producer cursor there equals cons. A CDC's
// consumer cursor acknowledges what the peer wrote into the sender's RMBE,
// so once the receiver has caught up it equals the peer's producer cursor
// of the same connection. Two candidates with the same cursor prove
// nothing: then there is no match.
func (g *LinkGroup) halfMatch(d Dir, cons Cursor, except *Conn) *Conn {
	var pick *Conn
	for _, c := range g.conns {
		if c == except || !(c.Inferred || c.halfPlaced) || c.finished || c.hasTok[d] || !c.hasTok[d.Reverse()] {
			continue
		}
		if f := &c.Flow[d.Reverse()]; f.haveProd && f.Prod == cons {
			if pick != nil {
				return nil
			}
			pick = c
		}
	}
	return pick
}

// merge joins two halves of one connection (each built from one
// direction's CDCs, or one known from its handshake) into the one known
// from its handshake, else the older, which it returns.
func (t *Tracker) merge(a, b *Conn) *Conn {
	keep, gone := a, b
	if a.Inferred && !b.Inferred || a.Inferred == b.Inferred && b.ID < a.ID {
		keep, gone = b, a
	}
	g := keep.lgr
	for d := range 2 {
		if gone.hasTok[d] && !keep.hasTok[d] {
			keep.Flow[d].takeSMC(&gone.Flow[d])
			if gone.stream != nil {
				keep.streamOf().dir[d] = gone.stream.dir[d]
			}
			keep.tokens[d], keep.hasTok[d] = gone.tokens[d], true
			g.tokens[d][gone.tokens[d]] = keep
		}
	}
	for _, l := range g.links {
		for _, m := range l.rkeys {
			for k, r := range m {
				if r.conn == gone {
					r.conn = keep
					m[k] = r
				}
			}
		}
		for d := range l.RC {
			rc := &l.RC[d]
			for i := range rc.recent {
				if rc.recent[i].conn == gone {
					rc.recent[i].conn = keep
				}
			}
			if rc.curWrite == gone {
				rc.curWrite = keep
			}
		}
		l.conns = removeConn(l.conns, gone)
		l.Conns = removeID(l.Conns, gone.ID)
	}
	// A stay full was judged against the consumer cursor each half had
	// of the other direction: none, or the start's, where the other half
	// held the reverse flow. Judged again against the one now known.
	for d := range keep.Flow {
		if f := &keep.Flow[d]; f.fullSince != 0 && !full(f.Prod, keep.Flow[1-d].Cons) {
			f.fullSince, f.fullFrame = 0, 0
		}
	}
	g.conns = removeConn(g.conns, gone)
	g.Conns = removeID(g.Conns, gone.ID)
	t.conns = removeConn(t.conns, gone)
	// A half placed from its Confirm is a TCP connection: its later
	// segments are not tracked (they would go to a connection no view
	// lists), and the idle sweep, which walks t.conns, need not find it.
	t.untuple(gone)
	gone.finished = true
	if gone.Inferred {
		t.stats.InferredConns--
	}
	keep.Frames += gone.Frames
	keep.cameUp = keep.cameUp || gone.cameUp
	keep.Merged = append(append(keep.Merged, gone.ID), gone.Merged...)
	if gone.FirstFrame < keep.FirstFrame {
		keep.FirstFrame, keep.Start = gone.FirstFrame, gone.Start
	}
	if gone.LastFrame > keep.LastFrame {
		keep.LastFrame, keep.lastNS = gone.LastFrame, gone.lastNS
	}
	if !gone.TFirstCDC.IsZero() && (keep.TFirstCDC.IsZero() || gone.firstCDCFrame < keep.firstCDCFrame) {
		keep.TFirstCDC, keep.firstCDCFrame = gone.TFirstCDC, gone.firstCDCFrame
	}
	if len(gone.Timeline) > 0 {
		keep.Timeline = append(keep.Timeline, gone.Timeline...)
		sort.SliceStable(keep.Timeline, func(i, j int) bool { return keep.Timeline[i].Frame < keep.Timeline[j].Frame })
	}
	if t.cur.theConn() == gone {
		t.cur.setConn(keep)
	}
	return keep
}

// takeSMC makes f's SMC side (CDCs, cursors, WRITEs, episodes) x's and
// keeps f's TCP side: a connection that took the CDCs another, joined
// from them, counted has TCP segments of its own (a handshake, a FIN).
func (f *Flow) takeSMC(x *Flow) {
	tcp := f.flowTCP
	*f = *x
	f.flowTCP = tcp
}

// countFromZero makes a flow that started counting at the first CDC of a
// connection joined from CDCs (joinProd, joinCons, joinClaimed) count from
// cursor 0, where the connection's cursors started: it came up in the
// capture. Wraps of an RMBE of size size (peer: the consumer's) not known
// yet are counted once it is (unsizedWraps; the bytes are "-" until then).
func (f *Flow) countFromZero(size, peer uint32) {
	p, delta := f.joinProd, int64(f.joinProd.Count)-int64(f.joinClaimed)
	switch {
	case p.Wrap == 0:
		f.Bytes += uint64(max(delta, 0))
	case size != 0:
		f.Bytes += uint64(max(int64(p.Wrap)*int64(size)+delta, 0))
	default:
		f.unsizedWraps += uint64(p.Wrap)
		f.unsizedDelta += delta
	}
	if c := f.joinCons; c.Wrap == 0 || peer != 0 {
		f.Consumed += uint64(c.Wrap)*uint64(peer) + uint64(c.Count)
	}
	f.joinProd, f.joinCons, f.joinClaimed = Cursor{}, Cursor{}, 0
}

func removeID(ids []int, id int) []int {
	for i, x := range ids {
		if x == id {
			return append(ids[:i], ids[i+1:]...)
		}
	}
	return ids
}

// writesNoMore reports whether c's side that sends in direction d writes
// no more: the connection is over, or that side closed or aborted it (its
// close CDC comes after its last WRITE, smc_close_final in
// net/smc/smc_close.c), or its TCP sent its FIN, which it does only after
// that CDC or a shutdown's (smc_close_active, smc_shutdown in
// net/smc/af_smc.c shut the TCP socket down after it): a capture that
// missed those CDCs still shows the FIN, where its segment's checksums do
// not fail (finSentFrame; a damaged copy's flags may be the damage) and
// the WRITE, frame number, came after it in the capture (one held out of
// sequence is followed later). A capture of that direction alone shows
// only its close.
func (c *Conn) writesNoMore(d Dir, number int) bool {
	f := &c.Flow[d]
	return c.Closed() || f.Closed || f.Aborted || f.finSentFrame != 0 && number > f.finSentFrame
}

// write attributes an RDMA WRITE by the rkey of its first packet.
func (t *Tracker) write(l *Link, d Dir, in *input) {
	r := &in.roce
	rc := &l.RC[d]
	switch r.opcode {
	case opWriteFirst, opWriteOnly, opWriteOnlyImm:
		t.stats.Writes++
		rc.curWrite, rc.curPending = nil, false
		if r.opcode == opWriteFirst {
			rc.curLen = r.dmaLen
		}
		ref, ok := l.rkeys[d][r.rkey]
		if ok && ref.conn.writesNoMore(d, in.number) {
			// Its RMB went back to the link group's pool (smc_buf_unuse)
			// and this is a later connection's, whose handshake the
			// capture lacks (cut, missed, or the other direction's). Its
			// next CDC claims the WRITE.
			delete(l.rkeys[d], r.rkey)
			ok = false
		}
		if !ok {
			rc.Unattached++
			t.cur.unattached = true
			if rc.curPending = r.opcode == opWriteFirst; rc.curPending {
				rc.lastFirst = spanOf(nil, r.psn, r.dmaLen, r.dataLen)
			}
			t.pendWrite(rc, r.rkey, uint64(r.dmaLen), 1, in.number)
			return
		}
		c := ref.conn
		t.touchConn(c, in, d)
		f := &c.Flow[d]
		f.Writes++
		f.WriteBytes += uint64(r.dmaLen)
		f.sinceCDC += uint64(r.dmaLen)
		outside := ref.va != 0 && ref.size != 0 && (r.va < ref.va || r.va+uint64(r.dmaLen) > ref.va+uint64(ref.size))
		if outside {
			f.WritesOutside++
		}
		if r.opcode == opWriteFirst {
			rc.curWrite = c
			rc.lastFirst = spanOf(c, r.psn, r.dmaLen, r.dataLen)
		}
		t.placeWrite(rc, c, d, ref, in)
		if t.recording(c) {
			info := fmt.Sprintf("%d B at RMBE offset %d (rkey %#x)", r.dmaLen, r.va-ref.va, r.rkey)
			if ref.va == 0 {
				info = fmt.Sprintf("%d B at VA %#x (rkey %#x)", r.dmaLen, r.va, r.rkey)
			}
			if outside {
				info += " OUTSIDE the RMBE"
			}
			t.note(c, in, d, "RDMA WRITE", info)
		}
	default: // MIDDLE, LAST
		if c := rc.curWrite; c != nil {
			t.touchConn(c, in, d)
			t.placeWriteNext(rc, c, d, in)
			if r.opcode != opWriteMiddle {
				rc.curWrite = nil
			}
			return
		}
		t.cur.unattached = true
		if rc.curPending {
			t.pendWrite(rc, 0, 0, 0, in.number)
		}
		if r.opcode != opWriteMiddle {
			rc.curPending = false
		}
	}
}

// pendWrite remembers an unattributed WRITE frame until the next CDC on
// the same link direction; rkey 0 with writes 0 adds a continuation frame.
func (t *Tracker) pendWrite(rc *RC, rkey uint32, bytes uint64, writes, number int) {
	// A frame followed from a run out of sequence was counted when it
	// went by (ahead of the PSN expected, tied to its link only): claimed,
	// it moves from that count, not from the unattached.
	frames, linkOnly := 1, 0
	if t.replaying {
		frames, linkOnly = 0, 1
	}
	if writes == 0 {
		if n := len(rc.pend); n > 0 {
			rc.pend[n-1].frames += frames
			rc.pend[n-1].linkOnly += linkOnly
			rc.pend[n-1].last = number
		}
		return
	}
	if n := len(rc.pend); n > 0 && rc.pend[n-1].rkey == rkey {
		p := &rc.pend[n-1]
		p.bytes += bytes
		p.writes += writes
		p.frames += frames
		p.linkOnly += linkOnly
		p.last = number
		return
	}
	if len(rc.pend) >= 8 {
		return // stays unattached
	}
	rc.pend = append(rc.pend, pendingWrite{rkey: rkey, bytes: bytes, writes: writes, frames: frames, linkOnly: linkOnly, last: number})
}

// claimWrites gives the oldest pending WRITEs of this link direction to c:
// Linux posts a connection's WRITEs and then its CDC on the same QP, so the
// CDC names the connection, and its rkey is learned for later WRITEs. Not
// WRITEs of more bytes than the CDC's producer cursor announces (m): those
// are another connection's, whose CDC the capture missed; they stay
// unattached, and their rkey is not learned as c's.
func (t *Tracker) claimWrites(c *Conn, l *Link, d Dir, m *cdcIn, number int) uint64 {
	rc := &l.RC[d]
	if len(rc.pend) == 0 {
		return 0
	}
	p := rc.pend[0]
	rc.pend = append(rc.pend[:0], rc.pend[1:]...)
	f := &c.Flow[d]
	if f.haveProd {
		if produced, ok := m.prod.Sub(f.Prod, c.rmbeSize(d)); ok && f.sinceCDC+p.bytes > produced {
			return 0
		}
	}
	f.WriteBytes += p.bytes
	f.Writes += p.writes
	f.sinceCDC += p.bytes
	frames := p.frames
	if p.last == number && !t.replaying {
		// This frame's own WRITE (a write with immediate, whose immediate
		// names the connection its rkey did not): the frame is not
		// counted yet, and is counted attached (account, touchConn), and
		// went by attached (write marked it unattached).
		frames--
		t.cur.unattached = false
	}
	t.stats.Unattached -= frames
	t.stats.LinkOnly -= p.linkOnly
	t.stats.LateAttached += frames + p.linkOnly
	t.stats.ConnAttached += frames + p.linkOnly
	rc.Unattached -= p.writes
	c.Frames += frames + p.linkOnly
	l.setRKey(d, p.rkey, rmbRef{conn: c})
	return p.bytes
}

// cutTokenConn finds the connection whose CDC in is, a CDC on l in
// direction d whose ICRC the snap length cut (it would have shown a token
// damaged in the capture's copy) and whose token no connection of the
// group has: the one connection with a token that way whose last CDC's
// sequence number is the one before in's (a connection's CDCs count up
// by one, smc_cdc_get_free_slot in net/smc/smc_cdc.c). Its token stays
// the one registered.
func (t *Tracker) cutTokenConn(l *Link, d Dir, in *input) *Conn {
	m := &in.roce.cdc
	var found *Conn
	for _, c := range l.lgr.conns {
		if f := &c.Flow[d]; !c.hasTok[d] || c.finished || !f.haveSeq || f.CDCs == 0 || f.LastSeq+1 != m.seq || c.link != nil && c.link != l {
			continue
		}
		if found != nil {
			return nil // which one cannot be told
		}
		found = c
	}
	if found != nil {
		t.raiseText(&l.expert, expert.CaptureCopyDamaged, in, func() string {
			return fmt.Sprintf("CDC token %d is none of its link group's; its sequence number %d follows connection %d's (token %d); the snap length cut its ICRC",
				m.token, m.seq, found.ID, found.tokens[d])
		})
	}
	return found
}

// damagedToken finds the connection of l's link group whose token for
// direction d came from a damaged copy of its Accept or Confirm and that
// carried no CDC that way yet, where it is the one such: the CDC's
// token, under the ICRC the RNIC checked, is the one the peers use (both
// are the receiver's alert token: smc_clc_send_confirm_accept in
// net/smc/smc_clc.c, smc_cdc_msg_to_host in net/smc/smc_cdc.h). It is
// registered in place of the damaged one.
func (t *Tracker) damagedToken(l *Link, d Dir, token uint32) *Conn {
	var found *Conn
	for _, c := range l.lgr.conns {
		if !c.epDamaged[d] || c.finished || c.Flow[d].CDCs > 0 || c.link != nil && c.link != l {
			continue
		}
		if found != nil {
			return nil // which one cannot be told
		}
		found = c
	}
	if found == nil {
		return nil
	}
	if g := l.lgr; found.hasTok[d] && g.tokens[d][found.tokens[d]] == found {
		delete(g.tokens[d], found.tokens[d])
	}
	found.epDamaged[d] = false
	t.registerToken(found, d, token)
	if d == DirS2C {
		found.ClientEP.Token = token
	} else {
		found.ServerEP.Token = token
	}
	return found
}
