package track

import (
	"fmt"
	"strconv"
	"time"

	"github.com/smcscope/smcscope/decode"
)

// histEvent is a link event as the tracker keeps it: what its text needs,
// written out (LinkEvent.What) only when a snapshot lists the link. Most
// links are folded without being listed, and a capture that sets up a link
// group per connection would otherwise format a dozen strings per
// connection for nothing (and make the collector run for them).
type histEvent struct {
	frame int
	ns    int64
	a, b  uint64 // UID, rkey and VA, reason, link groups
	n     int    // rkeys, other links, frames
	text  string // LinkEventText
	kind  LinkEventKind
	typ   decode.LLCType
	resp  bool
	all   bool  // DELETE_LINK ALL
	order bool  // DELETE_LINK ORDERLY
	link  uint8 // link number the message is about
	on    uint8 // link number it was sent on
}

// LinkEventKind says what a link event is; the comments give its text
// (LinkEvent.What) and which histEvent fields it uses.
type LinkEventKind uint8

const (
	LinkEventText        LinkEventKind = iota // text
	LinkEventConfirmLink                      // "CONFIRM_LINK req link 1 UID 00000101" (a: UID; n -1: "UID not captured")
	LinkEventDeleteLink                       // "DELETE_LINK req ALL ORDERLY link 0 reason 0x00020000 meaning" (a: reason)
	LinkEventDeleteOther                      // LinkEventDeleteLink + " (sent on link 2)"
	LinkEventConfirmRKey                      // "CONFIRM_RKEY req rkey 0x1 VA 0x2 (+1 other links)" (a: rkey, b: VA, n: others)
	LinkEventDeleteRKey                       // "DELETE_RKEY req 2 rkeys" (n)
	LinkEventLLC                              // "TEST_LINK req"
	LinkEventRejectOn                         // "ADD_LINK resp REJECT link 2": on the link it was sent on
	LinkEventRejectNew                        // "ADD_LINK resp REJECT (sent on link 1)": on the link added
	LinkEventAddOn                            // "ADD_LINK req for link 2 (1 rkeys)" (n: rkeys)
	LinkEventAddNew                           // "ADD_LINK req (sent on link 1)"
	LinkEventAcceptOn                         // "ADD_LINK resp link 2 accepted (1 rkeys)" (n: rkeys)
	LinkEventAcceptNew                        // "ADD_LINK resp accepted (sent on link 1)"
	LinkEventMerged                           // "link group 3 merged into 2: a connection failed over between them" (a, b: groups)
	LinkEventEarlier                          // "5 earlier frames on this QP before it could be identified" (n: frames)
	LinkEventAnnounced                        // "announced by CLC Accept/Confirm (first contact)": text
	LinkEventAdopted                          // "link group 3 merged into 2: a DELETE_LINK of the one deleted link 2 of the other" (a, b: groups; link)
)

// LinkName is how every output names a link: its number in its group
// (the kernel's link ID, the LLC's), or, for a link whose setup the
// capture did not show, its queue pairs on the wire ("qp0x11/0x13": the
// client's, then the server's; "qp-/0x11" where one end's QP is not
// known), so two such links of a group read apart; "-" with neither.
func LinkName(id uint8, clientQPN, serverQPN uint32) string {
	switch {
	case id != 0:
		return strconv.Itoa(int(id))
	case clientQPN != 0 || serverQPN != 0:
		return "qp" + qpText(clientQPN) + "/" + qpText(serverQPN)
	}
	return "-"
}

// qpText is a QP number in hex, "-" for 0: QP 0 is the SMI's, never an RC
// link's, so 0 is a QP the capture did not name.
func qpText(qpn uint32) string {
	if qpn == 0 {
		return "-"
	}
	return fmt.Sprintf("%#x", qpn)
}

// What is the event's text, as smc,links and smc,lgr show it.
func (e *histEvent) What() string {
	kind := "req"
	if e.resp {
		kind = "resp"
	}
	name := ""
	if e.kind != LinkEventText && e.kind != LinkEventMerged && e.kind != LinkEventAdopted && e.kind != LinkEventEarlier && e.kind != LinkEventAnnounced {
		name = e.typ.String()
	}
	switch e.kind {
	case LinkEventConfirmLink:
		if e.n < 0 {
			return fmt.Sprintf("%s %s link %d UID not captured", name, kind, e.link)
		}
		return fmt.Sprintf("%s %s link %d UID %08x", name, kind, e.link, uint32(e.a))
	case LinkEventDeleteLink, LinkEventDeleteOther:
		what := fmt.Sprintf("%s %s", name, kind)
		if e.all {
			what += " ALL"
		}
		if e.order {
			what += " ORDERLY"
		}
		what += fmt.Sprintf(" link %d reason %#08x %s", e.link, uint32(e.a), decode.DeleteLinkReason(uint32(e.a)).MeaningIn(e.resp))
		if e.kind == LinkEventDeleteOther {
			what += " (sent on link " + linkNumber(e.on) + ")"
		}
		return what
	case LinkEventConfirmRKey:
		return fmt.Sprintf("%s %s rkey %#x VA %#x (+%d other links)", name, kind, uint32(e.a), e.b, e.n)
	case LinkEventDeleteRKey:
		return fmt.Sprintf("%s %s %d rkeys", name, kind, e.n)
	case LinkEventAddOn, LinkEventAcceptOn:
		rkeys := fmt.Sprintf("%d rkeys", e.n)
		if e.n < 0 {
			rkeys = "rkeys not captured" // the snap length cut the message before its count
		}
		if e.kind == LinkEventAddOn {
			return fmt.Sprintf("%s %s for link %d (%s)", name, kind, e.link, rkeys)
		}
		return fmt.Sprintf("%s %s link %d accepted (%s)", name, kind, e.link, rkeys)
	case LinkEventLLC:
		return name + " " + kind
	case LinkEventRejectOn:
		return fmt.Sprintf("%s %s REJECT link %d", name, kind, e.link)
	case LinkEventRejectNew:
		return fmt.Sprintf("%s %s REJECT (sent on link %s)", name, kind, linkNumber(e.on))
	case LinkEventAddNew:
		return fmt.Sprintf("%s %s (sent on link %s)", name, kind, linkNumber(e.on))
	case LinkEventAcceptNew:
		return fmt.Sprintf("%s %s accepted (sent on link %s)", name, kind, linkNumber(e.on))
	case LinkEventMerged:
		return fmt.Sprintf("link group %d merged into %d: a connection failed over between them", e.a, e.b)
	case LinkEventAdopted:
		return fmt.Sprintf("link group %d merged into %d: a DELETE_LINK of the one deleted link %d of the other", e.a, e.b, e.link)
	case LinkEventEarlier:
		return fmt.Sprintf("%d earlier frames on this QP before it could be identified", e.n)
	}
	return e.text
}

// linkNumber writes the number of the link a message was sent on: "-"
// when the capture did not show the link's setup (0 is no link's number:
// smc_llc's link IDs start at 1).
func linkNumber(id uint8) string {
	if id == 0 {
		return "-"
	}
	return fmt.Sprint(id)
}

// linkEvent is e as a snapshot lists it.
func (e *histEvent) linkEvent() LinkEvent {
	ev := LinkEvent{Frame: e.frame, Time: time.Unix(0, e.ns), What: e.What(), Kind: e.kind,
		LLC: e.typ, Resp: e.resp, Link: e.link, On: e.on, All: e.all, Orderly: e.order}
	switch e.kind {
	case LinkEventConfirmLink:
		ev.UID = uint32(e.a)
	case LinkEventDeleteLink, LinkEventDeleteOther:
		ev.Reason = uint32(e.a)
	}
	return ev
}

// llcEvent is the event of the LLC message in in, of kind k.
func llcEvent(in *input, k LinkEventKind) histEvent {
	m := &in.roce.llc
	return histEvent{kind: k, typ: m.typ, resp: m.resp}
}

// textEvent is an event that reads text.
func textEvent(text string) histEvent { return histEvent{kind: LinkEventText, text: text} }

// addHistory records e, at in's frame, in l's history. The kept links'
// histories are bounded as a whole too: links in use are not folded to
// make room (see foldLinks).
func (l *Link) addHistory(in *input, e histEvent) {
	if len(l.hist) < maxLinkHistory && *l.history < 4*maxHistory {
		e.frame, e.ns = in.number, in.ns
		l.hist = append(l.hist, e)
		// A request followed once the wire said its responder took it (a
		// copy the capture damaged, a run out of sequence) comes after
		// later frames' events: the history stays in frame order.
		for j := len(l.hist) - 1; j > 0 && l.hist[j-1].frame > e.frame; j-- {
			l.hist[j], l.hist[j-1] = l.hist[j-1], l.hist[j]
		}
		*l.history++
	}
}
