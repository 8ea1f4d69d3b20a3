package track

import (
	"slices"

	"github.com/smcscope/smcscope/expert"
)

// A capture that starts after a link group was set up shows its links
// without the CONFIRM_LINK or ADD_LINK that numbered them. A link that
// then carries data is placed in its group by its connections; one that
// carries none (a link whose peer stopped answering: only TEST_LINK or
// CONFIRM_LINK retransmissions) is a group of its own, "joined
// mid-stream". When its group deletes it (DELETE_LINK, sent on another of
// its links, net/smc/smc_llc.c smc_llc_send_delete_link), the message
// names a link number that group does not have. Once the capture has
// ended, such a deletion adopts the one lone link that fits it.

// maxUnplaced bounds the unplaced deletions a group keeps (each names one
// of its links: a group has at most SMC_LINKS_PER_LGR_MAX, 3).
const maxUnplaced = 4

// unplacedDelete is a DELETE_LINK of one link whose number none of its
// group's links had.
type unplacedDelete struct {
	ev     histEvent // as the history of the link it deletes will list it
	frame  int
	ns     int64
	reason uint32
	known  bool // a request's: its reason is the deletion's
}

// noteUnplaced keeps the DELETE_LINK in in (m, sent on l) of a link
// number none of g's links has: the request's where both came.
func (g *LinkGroup) noteUnplaced(l *Link, m *llcIn, in *input) {
	if m.linkID == 0 {
		return
	}
	u := unplacedDelete{ev: llcEvent(in, LinkEventDeleteOther), frame: in.number, ns: in.ns, reason: m.reason, known: !m.resp}
	u.ev.order, u.ev.link, u.ev.a, u.ev.on = m.orderly, m.linkID, uint64(m.reason), l.LinkID
	for i := range g.unplaced {
		if p := &g.unplaced[i]; p.ev.link == m.linkID {
			if p.ev.resp && !m.resp {
				*p = u
			}
			return
		}
	}
	if len(g.unplaced) < maxUnplaced {
		g.unplaced = append(g.unplaced, u)
	}
}

// adoptDeleted merges into each group with an unplaced deletion the one
// group that can be the link it deleted: joined mid-stream, one link and
// no connection, that link unnumbered or of the deleted number, seen
// before the deletion and not past SMC_LLC_WAIT_TIME after it (the link
// is silent once deleted), its link group IDs (CONFIRM_LINK's link user
// IDs) not another's. Its ends must be placed: both groups' roles known,
// or its addresses those of a link of the group whose roles are known
// (the kernel adds a link again over the same two ports). Two such
// candidates, and none is taken.
func (t *Tracker) adoptDeleted() {
	for _, g := range slices.Clone(t.lgrs) {
		if len(g.unplaced) == 0 || !slices.Contains(t.lgrs, g) {
			continue
		}
		for _, u := range g.unplaced {
			if g.linkByID(u.ev.link) != nil {
				continue
			}
			h, flip := t.orphanOf(g, &u)
			if h == nil {
				continue
			}
			x := h.links[0]
			in := &input{number: u.frame, ns: u.ns}
			if flip && !t.flip(h, in) {
				continue
			}
			g = t.mergeLGRAs(g, h, in, histEvent{kind: LinkEventAdopted, link: u.ev.link})
			g.settle()
			if x.LinkID == 0 {
				x.LinkID = u.ev.link
			}
			x.addHistory(in, u.ev)
			x.markDeleted(u.reason, u.known, u.ns)
			x.expert.add(expert.LinkDeleted, u.frame, u.ns, "")
			t.settleRun(x, DirC2S, u.ns)
			t.settleRun(x, DirS2C, u.ns)
		}
	}
}

// orphanOf is the one group that can hold the link g's deletion u
// deleted (adoptDeleted), and whether its roles must be flipped to g's;
// nil if none or several.
func (t *Tracker) orphanOf(g *LinkGroup, u *unplacedDelete) (*LinkGroup, bool) {
	var (
		pick *LinkGroup
		flip bool
	)
	for _, h := range t.lgrs {
		if h == g || !h.Inferred || len(h.conns) != 0 || len(h.links) != 1 {
			continue
		}
		x := h.links[0]
		if x.LinkID != 0 && x.LinkID != u.ev.link || x.State == LinkDeleted || x.FirstFrame > u.frame || x.lastNS > u.ns+int64(llcWait) {
			continue
		}
		f, ok := orientTo(g, h, x)
		if !ok || !lgrIDsAgree(g, h, f) {
			continue
		}
		if pick != nil {
			return nil, false
		}
		pick, flip = h, f
	}
	return pick, flip
}

// orientTo reports whether h's roles are the other way round from g's
// for h's link x to join g, and whether that can be told.
func orientTo(g, h *LinkGroup, x *Link) (flip, ok bool) {
	if !g.rolesKnown {
		return false, false
	}
	if h.rolesKnown {
		return false, true
	}
	if !x.Server.Addr.IsValid() || !x.Client.Addr.IsValid() {
		return false, false
	}
	for _, y := range g.links {
		switch {
		case x.Server.Addr == y.Server.Addr && x.Client.Addr == y.Client.Addr:
			return false, true
		case x.Server.Addr == y.Client.Addr && x.Client.Addr == y.Server.Addr:
			return true, true
		}
	}
	return false, false
}

// lgrIDsAgree reports whether h's link group IDs (flipped: client and
// server the other way round) are g's where both know them.
func lgrIDsAgree(g, h *LinkGroup, flipped bool) bool {
	s, c := h.ServerLGRID, h.ClientLGRID
	if flipped {
		s, c = c, s
	}
	return (s == 0 || g.ServerLGRID == 0 || s == g.ServerLGRID) && (c == 0 || g.ClientLGRID == 0 || c == g.ClientLGRID)
}
