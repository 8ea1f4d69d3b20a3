package rows

import (
	"fmt"
	"sort"
	"time"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/track"
)

// LGR is one line of smc,lgr.
type LGR struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	Inferred bool   `json:"inferred,omitempty"`
	// RolesUnknown: the group and every link of it were built from RoCE
	// traffic alone, so nothing tells which end is the client (as
	// Conn.RolesUnknown).
	RolesUnknown bool `json:"roles_unknown,omitempty"`
	// LinksKnown: the capture shows how the group's links were set up
	// (its first contact, or a link added or rejected) and their RoCE
	// traffic, so the links it lists are all the group has. A group the
	// capture joined later (Inferred) may have a link it never shows: one
	// that carries no connection sends only a TEST_LINK every
	// smcr_testlink_time (net.smc, 30 s by default); one whose RoCE
	// traffic is not in the capture at all, a link added to it.
	LinksKnown   bool   `json:"-"`
	ServerPeerID string `json:"server_peer_id"`
	ClientPeerID string `json:"client_peer_id"`
	ServerLGRID  string `json:"server_lgr_id,omitempty"`
	ClientLGRID  string `json:"client_lgr_id,omitempty"`
	Version      uint8  `json:"version,omitempty"` // 0: not in the capture
	// MaxLinks and MaxConns are the v2.1 limits, omitted when the
	// capture did not show them (SMC v1, or no first contact captured).
	MaxLinks uint8 `json:"max_links,omitempty"`
	MaxConns uint8 `json:"max_conns,omitempty"`
	// ANCK says what an ANCK (Alibaba Cloud Linux) handshake agreed:
	// "vendor options", "credits", "credits RWWI"; empty for upstream.
	ANCK  string `json:"anck,omitempty"`
	Links []int  `json:"links"`
	// LinkStates says each link's number and state: "link 2:up", "link
	// -:deleted" for a link whose number the capture did not show.
	LinkStates []string `json:"link_states"`
	Conns      []int    `json:"conns"`
	// Links and connections of the group folded into the totals, not in
	// Links and Conns (more than Options.MaxConns).
	LinksFolded int    `json:"links_folded,omitempty"`
	ConnsFolded int    `json:"conns_folded,omitempty"`
	DeleteCode  string `json:"delete_reason,omitempty"`
	FirstFrame  int    `json:"first_frame"`
	// History is the group's life: links announced, confirmed, added,
	// rejected and deleted (with reason), groups merged, and connections
	// moved to another link (Events, as text).
	History []string `json:"history,omitempty"`

	// Typed facts for surfaces that draw their own text (smctop).
	GroupState GroupState   `json:"-"`
	Events     []GroupEvent `json:"-"`
	LinkRows   []Link       `json:"-"` // the rows of Links, in that order
}

// GroupState is a link group's state.
type GroupState uint8

// Link-group states.
const (
	GroupActive     GroupState = iota
	GroupConfirming            // no link confirmed yet: it carries no connection
	GroupEnded                 // DELETE_LINK of every link
	// GroupUnknown: a group the capture joined after its setup that shows
	// no connection and no request a responder acknowledged (a link whose
	// peer went silent): nothing on the wire says it works.
	GroupUnknown
)

var groupStateNames = [...]string{"active", "confirming", "deleted", "unknown"}

func (s GroupState) String() string { return groupStateNames[s] }

// GroupEventKind says what a step of a group's life is.
type GroupEventKind uint8

// Group event kinds.
const (
	GroupLinkAnnounced GroupEventKind = iota // first link announced by CLC
	GroupLinkConfirm                         // CONFIRM_LINK request
	GroupLinkUp                              // CONFIRM_LINK response: the link carries connections
	GroupLinkAdd                             // ADD_LINK request or accepting response
	GroupLinkRejected                        // ADD_LINK rejected
	GroupLinkDeleted                         // DELETE_LINK of one link
	GroupDeleted                             // DELETE_LINK of every link: the group ends
	GroupMerged                              // two tracked groups were one (a connection failed over between them)
	GroupFailover                            // a connection moved to another link
)

// GroupEvent is one step of a link group's life.
type GroupEvent struct {
	Frame int
	Time  time.Time
	Kind  GroupEventKind
	// Link is the kernel's number of the link the step is about (0: not
	// known, or every link).
	Link uint8
	// Conn is the connection that failed over (GroupFailover).
	Conn int
	// LLC is the link event the step is, for the LLC steps.
	LLC track.LinkEvent
	// Change marks the first sign of a change of the group: a link up,
	// rejected or deleted, the group deleted, a failover. Requests
	// sent again and responses that repeat them are not changes.
	Change bool
	What   string
}

// Text is the step as smc,lgr lists it.
func (e *GroupEvent) Text() string { return fmt.Sprintf("frame %d: %s", e.Frame, e.What) }

func peerID(id [8]byte) string {
	if id == ([8]byte{}) {
		return "-"
	}
	return string(decode.AppendPeerID(nil, id))
}

// Deletion is the Deleted column of a group: its DELETE_LINK reason, "-"
// where the capture does not hold it, "" for a group not ended.
func (r *LGR) Deletion() string {
	if r.GroupState != GroupEnded {
		return ""
	}
	return Dash(r.DeleteCode)
}

// LGRID writes a link-group ID of the kernel as smc,lgr does, "" for none.
func LGRID(id uint32) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf("%#x", id)
}

// LGRRows returns the smc,lgr rows.
func LGRRows(s *track.Snapshot) []LGR {
	links := LinkRows(s)
	byID := make(map[int]*Link, len(links))
	confirmed := map[int]bool{} // link groups with a link that can carry connections
	for i := range links {
		l := &links[i]
		byID[l.ID] = l
		switch l.Facts.State {
		case track.LinkConfirming, track.LinkAdding, track.LinkAdded:
		default:
			confirmed[l.LGR] = true
		}
	}
	rows := make([]LGR, 0, len(s.LinkGroups))
	for i := range s.LinkGroups {
		g := &s.LinkGroups[i]
		r := LGR{ID: g.ID, Inferred: g.Inferred, ServerPeerID: peerID(g.ServerPeerID),
			ClientPeerID: peerID(g.ClientPeerID), Version: g.Version, MaxLinks: g.MaxLinks, MaxConns: g.MaxConns,
			Links: append([]int{}, g.Links...), Conns: append([]int{}, g.Conns...), FirstFrame: g.FirstFrame,
			LinksFolded: g.LinksFolded, ConnsFolded: g.ConnsFolded,
			ServerLGRID: LGRID(g.ServerLGRID), ClientLGRID: LGRID(g.ClientLGRID)}
		r.ANCK = ANCKText(g)
		switch {
		case g.Deleted:
			r.GroupState = GroupEnded
			if g.DeleteKnown {
				r.DeleteCode = fmt.Sprintf("%#08x %s", g.DeleteCode, decode.DeleteLinkReason(g.DeleteCode).Meaning())
			}
		case !confirmed[g.ID] && len(g.Links) > 0:
			// As its connections: not usable before a link is confirmed.
			r.GroupState = GroupConfirming
		case g.Inferred && len(g.Conns) == 0 && g.ConnsFolded == 0 && !acknowledged(g, byID):
			r.GroupState = GroupUnknown
		}
		r.State = r.GroupState.String()
		r.RolesUnknown = g.Inferred
		for _, id := range g.Links {
			if l := byID[id]; l != nil {
				r.LinkStates = append(r.LinkStates, fmt.Sprintf("link %s:%s", LinkName(l.LinkID), l.State))
				r.LinkRows = append(r.LinkRows, *l)
				r.RolesUnknown = r.RolesUnknown && l.Inferred
			}
		}
		r.Events = History(s, g)
		r.LinksKnown = !g.Inferred
		for i := range r.Events {
			r.History = append(r.History, r.Events[i].Text())
			switch r.Events[i].Kind {
			case GroupLinkAnnounced, GroupLinkConfirm, GroupLinkUp, GroupLinkAdd, GroupLinkRejected:
				r.LinksKnown = true
			}
		}
		// A second link is added on the first (ADD_LINK): a capture that
		// shows none of the group's RoCE traffic (the TCP port mirrored
		// alone, an RNIC that offloads it) cannot show one.
		r.LinksKnown = r.LinksKnown && roceSeen(g, byID)
		rows = append(rows, r)
	}
	return rows
}

// roceSeen reports whether the capture shows a RoCE packet of a link of g.
func roceSeen(g *track.LinkGroup, links map[int]*Link) bool {
	for _, id := range g.Links {
		if l := links[id]; l != nil && l.Facts.Shown {
			return true
		}
	}
	return false
}

// acknowledged reports whether a link of g shows a request its responder
// acknowledged.
func acknowledged(g *track.LinkGroup, links map[int]*Link) bool {
	for _, id := range g.Links {
		if l := links[id]; l != nil && l.C2S.Acks+l.S2C.Acks > 0 {
			return true
		}
	}
	return false
}

// ANCKText names what an ANCK link group agreed: "credits RWWI",
// "credits", "vendor options" (neither on), or "" for an upstream group.
func ANCKText(g *track.LinkGroup) string {
	switch {
	case !g.ANCK:
		return ""
	case g.Credits && g.RWWI:
		return "credits RWWI"
	case g.Credits:
		return "credits"
	case g.RWWI:
		return "RWWI"
	}
	return "vendor options"
}

// groupKind is the group-level kind of a link event, false for what
// stays with its link (rkey traffic, TEST_LINK and other LLC, the
// tracker's notes). This is the one place that chooses a group's history.
func groupKind(h *track.LinkEvent) (GroupEventKind, bool) {
	switch h.Kind {
	case track.LinkEventAnnounced:
		return GroupLinkAnnounced, true
	case track.LinkEventConfirmLink:
		if h.Resp {
			return GroupLinkUp, true
		}
		return GroupLinkConfirm, true
	case track.LinkEventAddOn, track.LinkEventAddNew, track.LinkEventAcceptOn, track.LinkEventAcceptNew:
		return GroupLinkAdd, true
	case track.LinkEventRejectOn, track.LinkEventRejectNew:
		return GroupLinkRejected, true
	case track.LinkEventDeleteLink, track.LinkEventDeleteOther:
		if h.All {
			return GroupDeleted, true
		}
		return GroupLinkDeleted, true
	case track.LinkEventMerged:
		return GroupMerged, true
	}
	return 0, false
}

// namesLink: of the two events one LLC frame makes (on the link it was
// sent on and on the link it is about), the one whose text names the
// link it is about.
func namesLink(k track.LinkEventKind) bool {
	switch k {
	case track.LinkEventAddNew, track.LinkEventAcceptNew, track.LinkEventRejectNew, track.LinkEventDeleteOther:
		return false
	}
	return true
}

// History is g's life, oldest first: the group-level events of its links
// (an LLC frame that is in the history of two links is listed once) and
// its connections' failovers.
func History(s *track.Snapshot, g *track.LinkGroup) []GroupEvent {
	var evs []GroupEvent
	type seen struct{ i, link int }
	at := map[int]seen{} // frame -> index in evs, and the link whose history it came from
	for i := range s.Links {
		l := &s.Links[i]
		if l.LGR != g.ID {
			continue
		}
		for _, h := range l.History {
			kind, ok := groupKind(&h)
			if !ok {
				continue
			}
			e := GroupEvent{Frame: h.Frame, Time: h.Time, Kind: kind, Link: h.Link, LLC: h, What: h.What}
			if kind == GroupLinkAnnounced || kind == GroupLinkUp && h.Link == 0 {
				e.Link = l.LinkID
			}
			// Two events of one link at a frame are two facts (a
			// CONFIRM_LINK that also announced the link).
			if x, ok := at[h.Frame]; ok && x.link != l.ID {
				if !namesLink(evs[x.i].LLC.Kind) && namesLink(h.Kind) {
					evs[x.i] = e
				}
				continue
			}
			at[h.Frame] = seen{len(evs), l.ID}
			evs = append(evs, e)
		}
	}
	links := linksByID(s)
	for i := range s.Conns {
		c := &s.Conns[i]
		if c.LGR != g.ID {
			continue
		}
		var first *track.Flow
		for d := range c.Flow {
			if f := &c.Flow[d]; f.Failover > 0 && (first == nil || f.FailoverFrame < first.FailoverFrame) {
				first = f
			}
		}
		if first == nil {
			continue
		}
		var id uint8
		if l := links[c.Link]; l != nil {
			id = l.LinkID
		}
		n := c.Flow[track.DirC2S].Failover + c.Flow[track.DirS2C].Failover
		evs = append(evs, GroupEvent{Frame: first.FailoverFrame, Time: first.FailoverTime(), Kind: GroupFailover, Link: id, Conn: c.ID,
			What: fmt.Sprintf("failover: connection %d moved to link %s (%d failover-validation CDCs)", c.ID, LinkName(id), n)})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Frame < evs[j].Frame })
	markChanges(evs)
	return evs
}

// markChanges sets Change on the first sign of each change: a link's
// first DELETE_LINK request (not its retransmissions or response) until
// the number is in use again, or its response where the capture holds no
// request, the first reject of an ADD_LINK, the group's first DELETE_LINK
// of every link.
func markChanges(evs []GroupEvent) {
	down := map[uint8]bool{}
	rejected := map[uint8]bool{}
	answered := map[uint8]int{} // a deleted link's first response while no request came
	settle := func(link uint8) {
		if i, ok := answered[link]; ok && !down[link] {
			evs[i].Change = true
		}
		delete(answered, link)
		delete(down, link)
	}
	ended := false
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case GroupLinkUp, GroupFailover:
			e.Change = true
			settle(e.Link)
			delete(rejected, e.Link)
		case GroupLinkAdd:
			delete(rejected, e.Link)
		case GroupLinkRejected:
			e.Change = !rejected[e.Link]
			rejected[e.Link] = true
		case GroupLinkDeleted:
			if _, ok := answered[e.Link]; e.LLC.Resp && !ok {
				answered[e.Link] = i
			}
			if !e.LLC.Resp && !down[e.Link] {
				e.Change, down[e.Link] = true, true
			}
		case GroupDeleted:
			e.Change = !ended
			ended = true
		}
	}
	for link := range answered {
		settle(link)
	}
}
