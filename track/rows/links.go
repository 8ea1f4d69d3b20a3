package rows

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/track"
)

// Link is one line of smc,links.
type Link struct {
	// ID is the row's key, the tracker's link index: never a link's
	// number (LinkID is, the kernel's).
	ID  int `json:"id"`
	LGR int `json:"lgr"`
	// LinkID is the kernel's number of the link, omitted when the
	// capture did not show it (see the package doc).
	LinkID     uint8  `json:"link_id,omitempty"`
	State      string `json:"state"`
	Inferred   bool   `json:"inferred,omitempty"`
	DeleteCode string `json:"delete_reason,omitempty"`
	Client     End    `json:"client"`
	Server     End    `json:"server"`
	C2S        RC     `json:"c2s"`
	S2C        RC     `json:"s2c"`
	TestLinks  int    `json:"test_links,omitempty"`
	Conns      []int  `json:"conns"`
	// ConnsFolded connections of the link are not in Conns: folded into
	// the totals (more than Options.MaxConns connections).
	ConnsFolded int      `json:"conns_folded,omitempty"`
	History     []string `json:"history"`
	// Credits are ANCK's receive-queue credits of each direction's
	// sender, on a link of a group with credits.
	Credits []Credits `json:"credits,omitempty"`

	// Typed facts for surfaces that draw their own text (smctop).
	Facts LinkFacts `json:"-"`
}

// LinkFacts are what a link row says, typed.
type LinkFacts struct {
	State track.LinkState
	// Existed: the kernels list the link in its group (ACTIVATING while
	// it is set up): it is being set up, its CONFIRM_LINK completed, or
	// it was set up before the capture began, or it carried data. A
	// rejected link, or an added one deleted before it confirmed and
	// carried anything, never was one.
	Existed bool
	// Confirmed: CONFIRM_LINK completed in the capture.
	Confirmed bool
	// Shown: the capture shows a packet of the link (track.Link.Shown).
	Shown bool
	// Silent: a link set up before the capture began (track.LinkUnknown)
	// of which nothing on the wire says that it works: it carried no
	// connection's data and no request on it was acknowledged (a peer gone
	// silent, its TEST_LINK sent again and again). Its state is not known.
	Silent bool
	// WithGroup: the link ended with its group (DELETE_LINK of every
	// link), it was not lost from a group that goes on.
	WithGroup bool
	// Deleted is the time of the DELETE_LINK that ended the link.
	Deleted    time.Time
	DeleteCode uint32
	// DeleteKnown: the capture holds the reason (track.Link.DeleteKnown).
	DeleteKnown bool
	// Client and Server are the ends' QPs and link user IDs (0: not in
	// the capture).
	ClientQPN, ServerQPN uint32
	ClientUID, ServerUID uint32
	// ClientGID, ServerGID are the ends' GIDs (invalid: not seen).
	ClientGID, ServerGID      string
	Packets, CDCs, Retrans    int
	PSNGaps, NAKs, RNRs, Open int
}

// Credits is one direction's sender's ANCK receive-queue credits.
type Credits struct {
	Dir       string  `json:"dir"` // C>S: the client's credits for the server's receive queue
	Init      int     `json:"init"`
	Now       int     `json:"now"`
	Min       int     `json:"min"`
	Returned  int     `json:"returned"`
	Spent     int     `json:"spent"`
	Overdrawn int     `json:"overdrawn,omitempty"`
	Starved   int     `json:"starved"`
	LongestMS float64 `json:"longest_starved_ms"`
	// StarvedSeconds is the time of all the starved spells.
	StarvedSeconds float64 `json:"starved_seconds"`
}

// Text is "C>S init 64 now 12 min 3 returned 500 spent 552 starved 1 (265.284 ms)".
func (c Credits) Text() string {
	s := fmt.Sprintf("%s init %d now %d min %d returned %d spent %d starved %d", c.Dir, c.Init, c.Now, c.Min, c.Returned, c.Spent, c.Starved)
	if c.Starved > 0 {
		s += fmt.Sprintf(" (longest %.3f ms)", c.LongestMS)
	}
	if c.Overdrawn > 0 {
		s += fmt.Sprintf(", %d sent without a credit seen", c.Overdrawn)
	}
	return s
}

func creditRows(l *track.Link) []Credits {
	if l.RC[0].Packets+l.RC[1].Packets == 0 {
		return nil // nothing of the link on the wire (a dump device capture, a rejected link)
	}
	var out []Credits
	for d := range l.Credits {
		c := &l.Credits[d]
		if !c.Known {
			continue
		}
		dir := track.Dir(d).String()
		if l.Inferred {
			dir = map[bool]string{true: "A>B", false: "B>A"}[d == 0]
		}
		out = append(out, Credits{Dir: dir, Init: c.Init, Now: c.Now, Min: c.Min, Returned: c.Returned, Spent: c.Spent,
			Overdrawn: c.Overdrawn, Starved: c.Starved, LongestMS: float64(c.Longest) / 1e6, StarvedSeconds: c.StarvedFor.Seconds()})
	}
	return out
}

// End is one side of a link.
type End struct {
	Addr string `json:"addr,omitempty"`
	GID  string `json:"gid,omitempty"`
	MAC  string `json:"mac,omitempty"`
	// QPN is omitted when the capture did not show this end's QP (the
	// client end of a rejected ADD_LINK, which only echoes the request).
	QPN string `json:"qpn,omitempty"`
	PSN string `json:"initial_psn,omitempty"`
	UID string `json:"link_uid,omitempty"`
}

// RC counts one direction of a link.
type RC struct {
	Packets    int            `json:"packets"`
	Sends      int            `json:"sends"`
	WritePkts  int            `json:"write_packets"`
	LLCs       int            `json:"llcs"`
	CDCs       int            `json:"cdcs"`
	Acks       int            `json:"acks"`
	NAKs       int            `json:"naks"`
	NAKCodes   map[string]int `json:"nak_codes,omitempty"`
	RNRs       int            `json:"rnr_naks"`
	PSNGaps    int            `json:"psn_gaps"`
	PSNMissing int            `json:"psn_missing"`
	Retrans    int            `json:"retransmissions"`
	Unattached int            `json:"unattached"`
}

// UID writes a link user ID as every surface does ("00000101"), "" for
// none.
func UID(uid uint32) string {
	if uid == 0 {
		return ""
	}
	return fmt.Sprintf("%08x", uid)
}

// LinkName is the kernel's number of a link as texts write it: "-" when
// the capture did not show it.
func LinkName(id uint8) string {
	if id == 0 {
		return "-"
	}
	return fmt.Sprint(id)
}

// VersionName is an SMC version as texts write it ("v2"): "-" when the
// capture did not carry it.
func VersionName(v uint8) string {
	if v == 0 {
		return "-"
	}
	return "v" + strconv.Itoa(int(v))
}

// Known is n as texts write it: "-" for 0, a number (an ID, a limit) the
// capture did not carry.
func Known[N ~int | ~uint8 | ~uint16](n N) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(int(n))
}

func endRow(e *track.LinkEnd) End {
	r := End{Addr: addrString(e.Addr), GID: addrString(e.GID), UID: UID(e.UID)}
	if e.QPN != 0 { // QP 0 is the SMI's, never an RC link's: not shown
		r.QPN = fmt.Sprintf("%#06x", e.QPN)
	}
	if e.MAC != ([6]byte{}) {
		r.MAC = net.HardwareAddr(e.MAC[:]).String()
	}
	if e.PSN != 0 {
		r.PSN = fmt.Sprintf("%#06x", e.PSN)
	}
	return r
}

func rcRow(r *track.RC) RC {
	row := RC{Packets: r.Packets, Sends: r.Sends, WritePkts: r.WritePkts, LLCs: r.LLCs, CDCs: r.CDCs, Acks: r.Acks,
		NAKs: r.NAKs, RNRs: r.RNRs, PSNGaps: r.PSNGaps, PSNMissing: r.PSNMissing, Retrans: r.Retrans, Unattached: r.Unattached}
	for code, n := range r.NAKCodes {
		if n > 0 {
			if row.NAKCodes == nil {
				row.NAKCodes = map[string]int{}
			}
			row.NAKCodes[decode.NAKCode(code).String()] = n
		}
	}
	return row
}

// LinkRows returns the smc,links rows.
func LinkRows(s *track.Snapshot) []Link {
	open := openConns(s)
	rows := make([]Link, 0, len(s.Links))
	for i := range s.Links {
		rows = append(rows, linkRow(&s.Links[i], open[s.Links[i].ID]))
	}
	return rows
}

// openConns counts the connections still open on each link.
func openConns(s *track.Snapshot) map[int]int {
	open := map[int]int{}
	ended := groupsEnded(s)
	for i := range s.Conns {
		if c := &s.Conns[i]; !Ended(c, ended[c.LGR]) {
			open[c.Link]++
		}
	}
	return open
}

// Deletion is the Deleted column of a link: its DELETE_LINK reason, "-"
// where the capture does not hold it, "" for a link not deleted.
func (r *Link) Deletion() string {
	if r.Facts.State != track.LinkDeleted {
		return ""
	}
	return Dash(r.DeleteCode)
}

func linkRow(l *track.Link, open int) Link {
	r := Link{ID: l.ID, LGR: l.LGR, LinkID: l.LinkID, State: l.State.String(), Inferred: l.Inferred,
		Client: endRow(&l.Client), Server: endRow(&l.Server), C2S: rcRow(&l.RC[track.DirC2S]), S2C: rcRow(&l.RC[track.DirS2C]),
		TestLinks: l.TestLinks, Conns: append([]int{}, l.Conns...), ConnsFolded: l.ConnsFolded, Facts: linkFacts(l)}
	r.Facts.Open = open
	r.Credits = creditRows(l)
	if l.State == track.LinkDeleted && l.DeleteKnown {
		r.DeleteCode = fmt.Sprintf("%#08x %s", l.DeleteCode, decode.DeleteLinkReason(l.DeleteCode))
	}
	for _, h := range l.History {
		r.History = append(r.History, fmt.Sprintf("frame %d: %s", h.Frame, h.What))
	}
	return r
}

func linkFacts(l *track.Link) LinkFacts {
	f := LinkFacts{State: l.State, DeleteCode: l.DeleteCode, DeleteKnown: l.DeleteKnown,
		ClientQPN: l.Client.QPN, ServerQPN: l.Server.QPN, ClientUID: l.Client.UID, ServerUID: l.Server.UID,
		ClientGID: gidText(l.Client.GID), ServerGID: gidText(l.Server.GID),
		Packets: l.RC[0].Packets + l.RC[1].Packets, CDCs: l.RC[0].CDCs + l.RC[1].CDCs,
		Retrans: l.RC[0].Retrans + l.RC[1].Retrans, PSNGaps: l.RC[0].PSNGaps + l.RC[1].PSNGaps,
		NAKs: l.RC[0].NAKs + l.RC[1].NAKs, RNRs: l.RC[0].RNRs + l.RC[1].RNRs}
	setup := false // the capture shows the link being set up
	for i := range l.History {
		h := &l.History[i]
		switch h.Kind {
		case track.LinkEventConfirmLink:
			if h.Resp {
				f.Confirmed = true
			} else {
				setup = true
			}
		case track.LinkEventAnnounced, track.LinkEventAddNew, track.LinkEventAcceptNew, track.LinkEventRejectNew:
			setup = true
		}
		if f.Deleted.IsZero() && (h.Kind == track.LinkEventDeleteOther || h.Kind == track.LinkEventDeleteLink && (h.All || h.Link == l.LinkID)) {
			f.Deleted, f.WithGroup = h.Time, h.All
		}
	}
	// A link that carried connections' data (CDCs, RDMA writes) was up
	// for both kernels, whether or not the capture shows (or could
	// follow) its CONFIRM_LINK response: neither sends on a link before.
	carried := f.CDCs > 0 || l.RC[0].WritePkts+l.RC[1].WritePkts > 0
	f.Existed = l.State != track.LinkRejected && !(l.State == track.LinkDeleted && setup && !f.Confirmed && !carried)
	f.Shown = l.Shown()
	f.Silent = l.State == track.LinkUnknown && !carried && len(l.Conns) == 0 && l.ConnsFolded == 0 && l.RC[0].Acks+l.RC[1].Acks == 0
	if l.State != track.LinkDeleted {
		f.Deleted, f.WithGroup = time.Time{}, false
	}
	return f
}

// gidText writes a GID as the kernel's SMC netlink does
// ("0000:0000:0000:0000:0000:ffff:0a0a:0001"), so a link's GIDs read the
// same from the wire and from the kernel; "" when not seen.
func gidText(a interface {
	As16() [16]byte
	IsValid() bool
}) string {
	if !a.IsValid() {
		return ""
	}
	b := a.As16()
	out := make([]byte, 0, 39)
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			out = append(out, ':')
		}
		out = fmt.Appendf(out, "%02x%02x", b[i], b[i+1])
	}
	return string(out)
}
