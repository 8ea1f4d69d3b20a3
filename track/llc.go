package track

import (
	"fmt"
	"strings"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
)

// confirmingFor is the connection l's CONFIRM_LINK exchange is for, nil
// for none: the first connection of a new link waits for it (no CDC yet).
func (l *Link) confirmingFor() *Conn {
	if len(l.conns) > 0 && l.conns[0].TFirstCDC.IsZero() {
		return l.conns[0]
	}
	return nil
}

// llc follows link and link-group state from one LLC message sent in
// direction d on link l (the flows of net/smc/smc_llc.c).
func (t *Tracker) llc(l *Link, d Dir, in *input) {
	m := &in.roce.llc
	g := l.lgr
	kind := "req"
	if m.resp {
		kind = "resp"
	}
	switch m.typ.Base() {
	case decode.LLCConfirmLink:
		d = t.serverSends(l, d, m.resp, in)
		t.confirmKey(l, d, in, m.qpn)
		e := l.end(d)
		e.MAC, e.GID, e.QPN = m.mac, m.gid, m.qpn
		if !e.Addr.IsValid() {
			e.Addr = gidAddr(m.gid)
		}
		l.LinkID = m.linkID
		switch {
		case m.uidCut: // what is known of the UID stays as it was
		case d == DirS2C:
			e.UID, g.ServerLGRID = m.uid, m.uid-uint32(m.linkID)
		default:
			e.UID, g.ClientLGRID = m.uid, m.uid-uint32(m.linkID)
		}
		if m.maxLinks != 0 {
			g.MaxLinks = m.maxLinks
		}
		if m.maxConns != 0 {
			g.MaxConns = m.maxConns
		}
		if m.resp {
			l.State, l.wasUp = LinkUp, true
			t.linkUp(l)
		} else if l.State != LinkUp {
			l.State = LinkConfirming
		}
		ev := llcEvent(in, LinkEventConfirmLink)
		ev.link, ev.a = m.linkID, uint64(m.uid)
		if m.uidCut {
			ev.n = -1
		}
		l.addHistory(in, ev)
		if c := l.confirmingFor(); c != nil {
			t.touchConn(c, in, d)
			if t.recording(c) {
				t.note(c, in, d, "LLC "+m.typ.String(), fmt.Sprintf("%s link %d QPN %#x GID %v", kind, m.linkID, m.qpn, m.gid))
			}
		}
	case decode.LLCAddLink:
		d = t.serverSends(l, d, m.resp, in)
		t.addLink(l, d, in)
		if t.opts.Timeline != "" {
			info := fmt.Sprintf("%s for link %d", kind, m.linkID)
			if m.reject {
				info = fmt.Sprintf("%s REJECT of link %d", kind, m.linkID)
			}
			t.linkEvent(l.conns, in, d, "LLC "+m.typ.String(), info)
		}
	case decode.LLCDeleteLink:
		e := llcEvent(in, LinkEventDeleteLink)
		e.all, e.order, e.link, e.a = m.all, m.orderly, m.linkID, uint64(m.reason)
		l.addHistory(in, e)
		if t.opts.Timeline != "" {
			affected := l.lgr.conns
			if !m.all {
				if x := g.linkByID(m.linkID); x != nil {
					affected = x.conns
				}
			}
			name := m.typ.String()
			t.linkEvent(affected, in, d, "LLC "+name, strings.TrimPrefix(e.What(), name+" "))
		}
		t.linkEnded()
		// Only a request states the reason: the client's response
		// carries 0 or SMC_LLC_DEL_NOLNK (it had no such link) in its
		// place (net/smc/smc_llc.c smc_llc_process_cli_delete_link).
		known := !m.resp
		if m.all {
			if !m.resp {
				t.raise(&g.expert, expert.LGRDeleted, in)
			}
			if !g.Deleted || known && !g.DeleteKnown {
				g.Deleted, g.DeleteCode, g.DeleteKnown = true, m.reason, known
			}
			for _, x := range g.links {
				if x.State != LinkRejected && x.State != LinkDeleted {
					x.markDeleted(m.reason, known, in.ns)
				}
				t.settleRun(x, DirC2S, in.ns)
				t.settleRun(x, DirS2C, in.ns)
			}
			break
		}
		if x := g.linkByID(m.linkID); x != nil {
			if x != l {
				e.kind, e.on = LinkEventDeleteOther, l.LinkID
				x.addHistory(in, e)
			}
			// The request names the link and its reason; the response
			// repeats the link. A link the capture saw deleted by its
			// response alone is deleted all the same, its reason not
			// captured; the request that may follow it adds the reason,
			// not a second deletion.
			first, told := x.markDeleted(m.reason, known, in.ns)
			raise := first || !m.resp && !told
			t.settleRun(x, DirC2S, in.ns)
			t.settleRun(x, DirS2C, in.ns)
			if raise {
				t.raise(&x.expert, expert.LinkDeleted, in)
				t.redundancy(g, in, "link %d deleted", x.LinkID)
			}
		} else {
			g.noteUnplaced(l, m, in)
		}
	case decode.LLCConfirmRKey:
		// The request comes from the RMB's owner; WRITEs into it travel the
		// other way. The response echoes the request.
		wd := d.Reverse()
		if m.resp {
			wd = d
		}
		e := llcEvent(in, LinkEventConfirmRKey)
		e.a, e.b, e.n = uint64(m.rkey), m.va, m.listN
		l.addHistory(in, e)
		ref, ok := l.rkeys[wd][m.rkey]
		switch {
		case ok && !m.resp:
			for _, o := range m.others[:m.nOthers] {
				if ol := g.linkByID(o.linkID); ol != nil {
					ol.setRKey(wd, o.rkey, rmbRef{conn: ref.conn, va: o.va, size: ref.size})
				}
			}
		case !ok && !m.resp && len(g.pendingRKeys) < maxPendingRKeys:
			g.pendingRKeys[rkKey(l, d, m.rkey)] = pendingRKey{va: m.va, others: append([]rkeyOther(nil), m.others[:m.nOthers]...)}
		}
		if ok {
			t.touchConn(ref.conn, in, d)
			if t.recording(ref.conn) {
				t.note(ref.conn, in, d, "LLC "+m.typ.String(), fmt.Sprintf("%s rkey %#x VA %#x", kind, m.rkey, m.va))
			}
		}
	case decode.LLCDeleteRKey:
		e := llcEvent(in, LinkEventDeleteRKey)
		e.n = m.listN
		l.addHistory(in, e)
		if m.resp {
			break
		}
		for _, rk := range m.delRKeys[:m.nDel] {
			if ref, ok := l.rkeys[d.Reverse()][rk]; ok {
				t.touchConn(ref.conn, in, d)
				if t.recording(ref.conn) {
					t.note(ref.conn, in, d, "LLC "+m.typ.String(), fmt.Sprintf("%s rkey %#x: RMB freed", kind, rk))
				}
			}
		}
	case decode.LLCTestLink:
		l.TestLinks++
	default:
		l.addHistory(in, llcEvent(in, LinkEventLLC))
	}
	t.llcPairs(l, d, in)
}

// redundancy raises expert.NoRedundancy on g when it is left with one
// active link although both sides allow more (the maximum CONFIRM_LINK
// negotiated, SMC v2.1): an ADD_LINK rejected, or a link deleted.
func (t *Tracker) redundancy(g *LinkGroup, in *input, why string, link uint8) {
	if g.Deleted || g.MaxLinks < 2 {
		return
	}
	up := 0
	for _, x := range g.links {
		if x.State == LinkUp {
			up++
		}
	}
	if up == 1 {
		t.raiseText(&g.expert, expert.NoRedundancy, in, func() string {
			return fmt.Sprintf(why+": 1 active link, both sides allow %d", link, g.MaxLinks)
		})
	}
}

// asymmetric raises expert.Asymmetric on nl, just accepted, when one of
// its ends is the same GID as that end of another active link of its
// group: the group survives the loss of the other side's port only
// (SMC_LGR_ASYMMETRIC_LOCAL / _PEER in net/smc/smc_core.h).
//
// A link that showed nothing since the capture missed requests of the
// group is not judged against: its DELETE_LINK may be among them.
func (t *Tracker) asymmetric(nl *Link, in *input) {
	for _, x := range nl.lgr.links {
		if x == nl || x.State != LinkUp || x.lastNS < nl.lgr.missedNS {
			continue
		}
		switch {
		case nl.Client.GID.IsValid() && nl.Client.GID == x.Client.GID:
			t.raiseText(&nl.expert, expert.Asymmetric, in, func() string {
				return fmt.Sprintf("link %d: the client's GID %v is link %d's too", nl.LinkID, nl.Client.GID, x.LinkID)
			})
			return
		case nl.Server.GID.IsValid() && nl.Server.GID == x.Server.GID:
			t.raiseText(&nl.expert, expert.Asymmetric, in, func() string {
				return fmt.Sprintf("link %d: the server's GID %v is link %d's too", nl.LinkID, nl.Server.GID, x.LinkID)
			})
			return
		}
	}
}

// linkEvent puts a link's LLC event in the timelines of the recorded,
// still open connections on it (not counted as their frames).
func (t *Tracker) linkEvent(conns []*Conn, in *input, d Dir, what, info string) {
	if t.opts.Timeline == "" {
		return
	}
	for _, c := range conns {
		if t.recording(c) && !c.Closed() {
			t.note(c, in, d, what, "(link event) "+info)
		}
	}
}

// serverSends handles CONFIRM_LINK and ADD_LINK: only the server sends
// their requests, which settles the roles of a group joined mid-stream.
// It returns the frame's direction after a possible flip.
func (t *Tracker) serverSends(l *Link, d Dir, resp bool, in *input) Dir {
	g := l.lgr
	if !g.Inferred || g.rolesKnown {
		return d
	}
	if (!resp && d == DirC2S) || (resp && d == DirS2C) {
		if t.flip(g, in) {
			d = d.Reverse()
		}
	}
	g.settle()
	return d
}

// confirmKey keys the direction of l towards the sender of a
// CONFIRM_LINK (sent on direction d, in in) by the queue pair it names
// and its frame's addresses, where the CLC message that keyed it said
// otherwise: the RNIC checked the LLC's bytes (its ICRC), while a CLC
// copy the capture damaged (its TCP checksum fails, and the hosts went
// on) names a queue pair no packet is sent to.
func (t *Tracker) confirmKey(l *Link, d Dir, in *input, qpn uint32) {
	r := &in.roce
	back := d.Reverse()
	k := qpKey{src: r.key.dst, dst: r.key.src, qpn: uint64(qpn)}
	if !l.keyed[back] || !l.keyed[d] || l.keys[d] != r.key || l.keys[back] == k {
		return
	}
	if ref, ok := t.byQP[k]; ok && ref.link != l {
		return
	}
	t.rekey(l, back, k, in, "the CONFIRM_LINK and its packet")
}

// keyAdded makes an added link reachable on the wire once both its ends
// are known.
func (t *Tracker) keyAdded(nl *Link) {
	if nl.Client.Addr.IsValid() && nl.Server.Addr.IsValid() {
		t.keyLink(nl, DirC2S, makeQPKey(nl.Client.Addr, nl.Server.Addr, nl.Server.QPN))
		t.keyLink(nl, DirS2C, makeQPKey(nl.Server.Addr, nl.Client.Addr, nl.Client.QPN))
	}
}

// addEvents puts an ADD_LINK message of in, sent on l for nl, in both
// links' histories: as on (l's) and as added (nl's).
func addEvents(l, nl *Link, in *input, on, added LinkEventKind) {
	e := llcEvent(in, on)
	e.link, e.on, e.n = in.roce.llc.linkID, l.LinkID, in.roce.llc.listN
	l.addHistory(in, e)
	e.kind = added
	nl.addHistory(in, e)
}

// addLink follows ADD_LINK: the request creates the new link with the
// server's values, the response adds the client's and makes it reachable
// on the wire, a reject (which echoes the request) ends it. The rkey
// triplets map each RMB's rkey on the existing link to its rkey on the new
// one, which is how later WRITEs on the new link find their connection.
func (t *Tracker) addLink(l *Link, d Dir, in *input) {
	m := &in.roce.llc
	g := l.lgr
	nl := g.linkByID(m.linkID)
	// The request of a response the capture showed just before it: the
	// capture's order (two hosts' captures merged, their clocks apart).
	late := !m.resp && nl != nil && nl.respFirstNS != 0 && in.ns-nl.respFirstNS <= int64(lateMax)
	switch {
	case m.reject:
		// The reject echoes the newest request for this link number,
		// which may already have been deleted meanwhile.
		if nl == nil {
			nl = t.newLink(g, in, l.Inferred)
			nl.LinkID = m.linkID
			nl.respFirstNS = in.ns
		}
		if nl.State == LinkAdding || nl.State == LinkAdded || nl.State == LinkUnknown {
			nl.State, nl.endNS = LinkRejected, in.ns
			t.linkEnded()
		}
		e := llcEvent(in, LinkEventRejectOn)
		e.link, e.on = m.linkID, l.LinkID
		l.addHistory(in, e)
		e.kind = LinkEventRejectNew
		nl.addHistory(in, e)
		t.redundancy(g, in, "ADD_LINK of link %d rejected", m.linkID)
		return
	case !m.resp:
		if late {
			nl.respFirstNS = 0
		} else {
			nl = t.newLink(g, in, l.Inferred)
			nl.LinkID, nl.State, nl.added = m.linkID, LinkAdding, true
		}
		if g.Credits && m.anck {
			// The requester's init_credits: what its peer may send it
			// on the new link (ANCK smc_llc_send_add_link).
			nl.startCredits(d.Reverse(), m.initCredits)
		}
		addEvents(l, nl, in, LinkEventAddOn, LinkEventAddNew)
	default:
		if nl == nil || !nl.added || nl.answered || nl.State == LinkRejected || nl.State == LinkDeleted {
			// The request was not captured, or not yet.
			nl = t.newLink(g, in, l.Inferred)
			nl.LinkID, nl.added, nl.respFirstNS = m.linkID, true, in.ns
		}
		// The new link's CONFIRM_LINK may have come first (addedOn).
		if nl.State == LinkAdding || nl.State == LinkUnknown {
			nl.State = LinkAdded
		}
		nl.answered = true
		if g.Credits && m.anck {
			nl.startCredits(d.Reverse(), m.initCredits)
		}
		addEvents(l, nl, in, LinkEventAcceptOn, LinkEventAcceptNew)
	}
	e := nl.end(d)
	*e = LinkEnd{Addr: gidAddr(m.gid), GID: m.gid, MAC: m.mac, QPN: m.qpn, PSN: m.psn}
	if m.resp || late && nl.State != LinkRejected {
		t.keyAdded(nl)
	}
	if m.resp {
		t.asymmetric(nl, in)
	}
	wd := d.Reverse() // WRITEs into the sender's RMBs
	for _, tr := range m.trip[:m.nTrip] {
		if ref, ok := l.rkeys[wd][tr.oldRKey]; ok {
			nl.setRKey(wd, tr.newRKey, rmbRef{conn: ref.conn, va: tr.newVA, size: ref.size})
		}
	}
}

// markDeleted records a DELETE_LINK of x at ns, its reason known where a
// request stated it: first, x was not deleted before; told, it was, and
// this (the request after its response) gives the reason its deletion
// lacked.
func (x *Link) markDeleted(reason uint32, known bool, ns int64) (first, told bool) {
	switch {
	case x.State != LinkDeleted:
		x.State, x.DeleteCode, x.DeleteKnown, x.endNS = LinkDeleted, reason, known, ns
		return true, false
	case known && !x.DeleteKnown:
		x.DeleteCode, x.DeleteKnown = reason, true
		return false, true
	}
	return false, false
}
