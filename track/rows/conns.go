package rows

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/track"
)

// ConnsView is the JSON form of smc,conns: the connections and the frame
// counts that say what could not be attributed.
type ConnsView struct {
	Conns []Conn      `json:"conns"`
	Stats track.Stats `json:"stats"`
	// Totals count every connection, link and link group of the capture,
	// listed or not; present when some were folded because there were
	// more than Options.MaxConns.
	Totals *track.Totals `json:"totals,omitempty"`
}

// Conn is one line of smc,conns.
type Conn struct {
	ID      int    `json:"id"`
	Client  string `json:"client,omitempty"`
	Server  string `json:"server,omitempty"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
	Version uint8  `json:"version,omitempty"`
	// FirstContact is the Accept's or Confirm's flag; nil where the
	// capture holds neither (unknown, not "reused").
	FirstContact *bool `json:"first_contact,omitempty"`
	Inferred     bool  `json:"inferred,omitempty"`
	// LinkNotCaptured: SMC-R on a link the capture shows no packet of
	// (track.Conn.LinkNotCaptured): its CDC and byte counts are not
	// zeros but unknown.
	LinkNotCaptured bool   `json:"link_not_captured,omitempty"`
	RolesUnknown    bool   `json:"roles_unknown,omitempty"`
	EID             string `json:"eid,omitempty"`
	Offered         string `json:"offered,omitempty"`
	LGR             int    `json:"lgr,omitempty"`
	// Link is the kernel's number of the connection's link (omitted:
	// none, or not in the capture).
	Link         uint8     `json:"link,omitempty"`
	OptionSYN    bool      `json:"option_syn"`
	OptionSYNACK bool      `json:"option_synack"`
	CLC          []string  `json:"clc,omitempty"`
	Handshake    Durations `json:"handshake"`
	Client2Srv   Flow      `json:"c2s"`
	Srv2Client   Flow      `json:"s2c"`
	ServerToken  uint32    `json:"server_token,omitempty"`
	ClientToken  uint32    `json:"client_token,omitempty"`
	ServerRKey   string    `json:"server_rkey,omitempty"`
	ClientRKey   string    `json:"client_rkey,omitempty"`
	ServerRMB    string    `json:"server_rmb_va,omitempty"`
	ClientRMB    string    `json:"client_rmb_va,omitempty"`
	ServerRMBE   uint32    `json:"server_rmbe_size,omitempty"`
	ClientRMBE   uint32    `json:"client_rmbe_size,omitempty"`
	ServerIdx    uint8     `json:"server_rmbe_idx,omitempty"`
	ClientIdx    uint8     `json:"client_rmbe_idx,omitempty"`
	Frames       int       `json:"frames"`
	FirstFrame   int       `json:"first_frame"`
	LastFrame    int       `json:"last_frame"`
	Closed       bool      `json:"closed"`
	// Merged: connections found to be this one later; frames before were
	// attributed to them (smc.conn.id).
	Merged []int `json:"merged,omitempty"`
	// Ended: the connection is over (Ended), though the capture may
	// lack its close CDCs (Closed).
	Ended bool   `json:"ended"`
	Close string `json:"close,omitempty"`

	// Typed facts for surfaces that draw their own text (smctop).
	Mode      Mode `json:"-"`
	LinkIndex int  `json:"-"` // the tracker's link, a key only: never shown
}

// Mode is how a connection ended up carrying its data, one value for
// every surface.
type Mode uint8

// Connection modes: an outcome as a surface counts it (a connection
// joined mid-stream carries SMC-R data).
const (
	ModePending Mode = iota
	ModeSMCR
	ModeSMCD
	ModeFallback
	ModeFailed
)

// ModeOf is c's mode.
func ModeOf(c *track.Conn) Mode {
	switch c.Outcome {
	case track.OutcomeSMCR, track.OutcomeUnknown:
		return ModeSMCR
	case track.OutcomeSMCD:
		return ModeSMCD
	case track.OutcomeFallback:
		return ModeFallback
	case track.OutcomeFailed:
		return ModeFailed
	}
	return ModePending
}

// Ended reports whether c is over: closed or failed; its TCP connection
// finished both ways (Linux shuts the CLC socket down only as the SMC
// socket closes: smc_close_active, smc_clcsock_release), which tells the
// end of a connection whose close CDCs the capture lacks or could not
// follow; or on a link group that ended (groupEnded: freeing a link group
// kills its connections, smc_lgr_terminate's smc_conn_kill). In a capture
// of one direction, whose other direction shows no TCP segment at all, that
// direction's FIN or RST is all the capture can show of the end; so is
// its close CDC (peer-conn-closed or abort, smc_close_active) where the
// other direction's CDCs are not shown (a capture of one host's ANCK dump
// device, or of one direction).
func Ended(c *track.Conn, groupEnded bool) bool {
	done := func(f *track.Flow) bool { return f.FIN || f.RST }
	unseen := func(f *track.Flow) bool { return !f.TCPShown() }
	closed := func(f, other *track.Flow) bool { return (f.Closed || f.Aborted) && other.NotShown }
	f0, f1 := &c.Flow[0], &c.Flow[1]
	return c.Closed() || c.Outcome == track.OutcomeFailed || groupEnded ||
		done(f0) && (done(f1) || unseen(f1)) || done(f1) && unseen(f0) ||
		closed(f0, f1) || closed(f1, f0)
}

// Durations are handshake steps in milliseconds from the SYN (negative
// when the step was not seen, or the time to it is not known).
type Durations struct {
	Proposal float64 `json:"proposal_ms"`
	Accept   float64 `json:"accept_ms"`
	Confirm  float64 `json:"confirm_ms"`
	FirstCDC float64 `json:"first_cdc_ms"`
	// AtLeast: the capture lacks the SYN (it began later, or its snap
	// length cut the SYN's options): the steps are timed from the
	// Proposal, which the SYN came before, so each is a lower bound, and
	// the Proposal's own is not known.
	AtLeast bool `json:"at_least,omitempty"`
}

// Flow is one direction of a connection.
type Flow struct {
	// NotShown: the capture holds none of this direction's packets
	// (track.Flow.NotShown): its counts are unknown, not zero.
	NotShown bool   `json:"not_captured,omitempty"`
	CDCs     int    `json:"cdcs"`
	Dumped   int    `json:"dump_device_cdcs,omitempty"`
	Bytes    uint64 `json:"bytes"`
	// BytesUnknown: the producer cursor wrapped an RMBE whose size the
	// capture never showed (its CLC messages missed or cut): Bytes is
	// what is known, not the whole (track.Flow.BytesWhole).
	BytesUnknown bool   `json:"bytes_unknown,omitempty"`
	Consumed     uint64 `json:"consumed"`
	// WritesNotShown: the direction's CDCs all came from ANCK's dump
	// device and its link is not in the capture: its RDMA WRITEs, which
	// only the link carries, are unknown, not none.
	WritesNotShown bool `json:"writes_not_captured,omitempty"`
	// RequestsMissed: a link of the connection's group carried requests
	// of this direction that the capture missed or holds damaged: the
	// WRITEs it shows may be fewer than the cursors moved over, or the
	// cursors behind the WRITEs (a CDC among them), the capture's miss,
	// not the hosts' disagreement.
	RequestsMissed bool `json:"requests_not_all_captured,omitempty"`
	// WritesUntied: a link of the connection's group carried WRITEs of
	// this direction before anything in the capture named the link (its
	// setup missed, or cut by the snap length): the connection's WRITE
	// count may fall short of its cursors, the tracker's blind spot.
	WritesUntied  bool   `json:"writes_before_link_known,omitempty"`
	WriteBytes    uint64 `json:"write_bytes"`
	Writes        int    `json:"writes"`
	WritesOutside int    `json:"writes_outside_rmbe,omitempty"`
	TCPBytes      uint64 `json:"tcp_bytes"`
	WriteBlocked  int    `json:"write_blocked,omitempty"`
	UrgentPending int    `json:"urgent_pending,omitempty"`
	UrgentPresent int    `json:"urgent_present,omitempty"`
	ConsUpdReq    int    `json:"cons_update_requested,omitempty"`
	Failover      int    `json:"failover_validation,omitempty"`
	SeqGaps       int    `json:"seq_gaps,omitempty"`
	SeqDup        int    `json:"seq_dup,omitempty"`
	CursorErrors  int    `json:"cursor_errors,omitempty"`
	// DumpDamaged: dump-device CDCs the CDCs around them showed damaged
	// in the capture's copy, not followed (track.Flow.DumpDamaged).
	DumpDamaged int    `json:"dump_damaged,omitempty"`
	Prod        string `json:"prod"`
	Cons        string `json:"cons"`
}

// Notes lists what deserves a look, "" where nothing does: flow-control
// and failover events, anything the cursors and WRITEs disagree on (or
// the capture's part in it), and the connections merged into this one
// (whose frames carry their own IDs).
func (r *Conn) Notes() string {
	var n []string
	for _, x := range []struct {
		dir string
		f   *Flow
	}{{"C>S", &r.Client2Srv}, {"S>C", &r.Srv2Client}} {
		f := x.f
		for _, c := range []struct {
			n    int
			name string
		}{{f.WriteBlocked, "write-blocked"}, {f.UrgentPending + f.UrgentPresent, "urgent"}, {f.ConsUpdReq, "cons-update-req"},
			{f.Failover, "failover"}, {f.SeqGaps, "seq-gaps"}, {f.SeqDup, "seq-dup"}, {f.CursorErrors, "cursor-errors"},
			{f.DumpDamaged, "dump-damaged"}, {f.WritesOutside, "writes-outside-RMBE"}} {
			if c.n > 0 {
				n = append(n, fmt.Sprintf("%s %s %d", x.dir, c.name, c.n))
			}
		}
		// A dump device's CDCs come without the WRITEs (its data frames
		// are the RMBE's bytes, not the RoCE packets).
		switch {
		case f.Bytes == f.WriteBytes || f.CDCs <= f.Dumped && f.Writes == 0:
		case f.RequestsMissed && f.Bytes > f.WriteBytes:
			// The capture's miss, not the hosts' disagreement.
			n = append(n, fmt.Sprintf("%s WRITEs not all in the capture", x.dir))
		case f.RequestsMissed:
			// Its cursors stop at the last CDC the capture shows.
			n = append(n, fmt.Sprintf("%s CDCs not all in the capture", x.dir))
		case f.WritesUntied && f.Bytes > f.WriteBytes:
			n = append(n, fmt.Sprintf("%s WRITEs before its link was known not counted", x.dir))
		default:
			n = append(n, fmt.Sprintf("%s cursor/WRITE bytes differ", x.dir))
		}
	}
	if len(r.Merged) > 0 {
		// Their frames carry those IDs: -Y needs them too.
		n = append(n, "merged from connection "+IDList(r.Merged))
	}
	return strings.Join(n, ", ")
}

// Ends are the connection's client and server as every surface names
// them: "A " and "B " in front where which end is the client is not on
// the wire (RolesUnknown), " (no TCP)" after where the connection is known
// from its CDCs alone (Inferred), "-" for an address not known then.
func (r *Conn) Ends() (client, server string) {
	switch {
	case r.RolesUnknown:
		return "A " + Dash(r.Client), "B " + Dash(r.Server)
	case r.Inferred:
		return Dash(r.Client) + " (no TCP)", Dash(r.Server) + " (no TCP)"
	}
	return r.Client, r.Server
}

// Dash is s as every surface shows a text value: "-" where it is empty
// (not known, not "").
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// FlowCount is n, a count of f, as every surface shows it: "-" where the
// capture does not hold f's packets (NotShown), unknown rather than zero.
func FlowCount[N int | uint64](f *Flow, n N) string {
	if f.NotShown {
		return "-"
	}
	return strconv.FormatUint(uint64(n), 10)
}

// WriteCount is n, a count of f's RDMA WRITEs: FlowCount, and "-" too
// where the capture holds the direction's CDCs but not its link
// (WritesNotShown).
func WriteCount[N int | uint64](f *Flow, n N) string {
	if f.WritesNotShown {
		return "-"
	}
	return FlowCount(f, n)
}

// ByteCount is f's bytes as every surface shows them: FlowCount, and "-"
// too where the count is not whole (BytesUnknown).
func ByteCount(f *Flow) string {
	if f.BytesUnknown {
		return "-"
	}
	return FlowCount(f, f.Bytes)
}

func flowRow(f *track.Flow) Flow {
	return Flow{NotShown: f.NotShown, CDCs: f.CDCs, Dumped: f.Dumped, Bytes: f.Bytes, BytesUnknown: !f.BytesWhole(), Consumed: f.Consumed, WriteBytes: f.WriteBytes, Writes: f.Writes,
		WritesOutside: f.WritesOutside, TCPBytes: f.TCPBytes, WriteBlocked: f.WriteBlocked, UrgentPending: f.UrgentPending,
		UrgentPresent: f.UrgentPresent, ConsUpdReq: f.ConsUpdReq, Failover: f.Failover, SeqGaps: f.SeqGaps,
		SeqDup: f.SeqDup, CursorErrors: f.CursorErrors, DumpDamaged: f.DumpDamaged, Prod: fmt.Sprintf("%d/%d", f.Prod.Wrap, f.Prod.Count), Cons: fmt.Sprintf("%d/%d", f.Cons.Wrap, f.Cons.Count)}
}

// ms is the time from from to to in milliseconds, -1 where it is not
// known: either not seen, or the capture's clock stepped back between
// them (track.Snapshot.Unmeasured), the duration not shorter by the step.
func ms(s *track.Snapshot, from, to time.Time) float64 {
	if from.IsZero() || to.IsZero() || s.Unmeasured(from, to) {
		return -1
	}
	return float64(to.Sub(from).Microseconds()) / 1000
}

func addrString(a interface {
	IsValid() bool
	String() string
}) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// Conns returns the smc,conns rows with the frame counts.
func Conns(s *track.Snapshot) ConnsView {
	v := ConnsView{Conns: ConnRows(s), Stats: s.Stats}
	if s.Folded() {
		t := s.Totals()
		v.Totals = &t
	}
	return v
}

// ConnRows returns the smc,conns rows: every connection of s.
func ConnRows(s *track.Snapshot) []Conn {
	rows := make([]Conn, 0, len(s.Conns))
	links, missed := linksByID(s), missedByGroup(s)
	ended := groupsEnded(s)
	for i := range s.Conns {
		r := connRow(s, &s.Conns[i], links, missed)
		r.Ended = Ended(&s.Conns[i], ended[s.Conns[i].LGR])
		rows = append(rows, r)
	}
	return rows
}

// groupsEnded says which of s's link groups ended (DELETE_LINK of every
// link), by ID.
func groupsEnded(s *track.Snapshot) map[int]bool {
	ended := map[int]bool{}
	for i := range s.LinkGroups {
		if g := &s.LinkGroups[i]; g.Deleted {
			ended[g.ID] = true
		}
	}
	return ended
}

func linksByID(s *track.Snapshot) map[int]*track.Link {
	links := make(map[int]*track.Link, len(s.Links))
	for i := range s.Links {
		links[s.Links[i].ID] = &s.Links[i]
	}
	return links
}

func clcName(t uint8) string { return decode.CLCType(t).String() }

// missedByGroup says, by link group ID, in which directions a link of
// the group carried requests the capture missed or holds damaged (the
// responder took them), and in which it carried WRITEs before anything
// named the link (track.RC.Untied): a connection's WRITEs the capture
// shows may then fall short of what its cursors moved over, or its
// cursors short of its WRITEs (Flow.RequestsMissed, Flow.WritesUntied).
func missedByGroup(s *track.Snapshot) map[int]groupMissed {
	missed := map[int]groupMissed{}
	for i := range s.Links {
		l := &s.Links[i]
		m := missed[l.LGR]
		for d := range l.RC {
			rc := &l.RC[d]
			m.requests[d] = m.requests[d] || rc.NotCaptured+rc.Damaged+rc.Unreadable > 0
			m.untied[d] = m.untied[d] || rc.Untied > 0
		}
		if m != (groupMissed{}) {
			missed[l.LGR] = m
		}
	}
	return missed
}

// groupMissed is what missedByGroup says of one group, by direction.
type groupMissed struct {
	requests, untied [2]bool
}

// connRow is c's line of smc,conns; links finds c's link: its kernel
// number, and for an inferred connection the hosts that stand in for the
// TCP endpoints; missed, its group's directions with requests the
// capture missed (missedByGroup).
func connRow(s *track.Snapshot, c *track.Conn, links map[int]*track.Link, missed map[int]groupMissed) Conn {
	start, atLeast := c.TSYN, false
	if start.IsZero() {
		start, atLeast = c.TProposal, true
	}
	r := Conn{
		ID: c.ID, Client: addrString(c.Client), Server: addrString(c.Server),
		Outcome: c.Outcome.String(), Detail: track.ConnDetail(c), Version: c.Version,
		FirstContact: firstContact(c), Inferred: c.Inferred, LinkNotCaptured: c.LinkNotCaptured, RolesUnknown: c.RolesUnknown, EID: strings.TrimRight(c.EID, " "), Offered: c.Offered,
		LGR: c.LGR, OptionSYN: c.OptionSYN, OptionSYNACK: c.OptionSYNACK,
		Handshake:  Durations{ms(s, start, c.TProposal), ms(s, start, c.TAccept), ms(s, start, c.TConfirm), ms(s, start, c.TFirstCDC), false},
		Client2Srv: flowRow(&c.Flow[track.DirC2S]), Srv2Client: flowRow(&c.Flow[track.DirS2C]),
		Frames: c.Frames, FirstFrame: c.FirstFrame, LastFrame: c.LastFrame,
		Closed: c.Closed(), Close: track.CloseInfo(c), Merged: c.Merged,
		Mode: ModeOf(c), LinkIndex: c.Link,
	}
	if atLeast {
		r.Handshake.Proposal, r.Handshake.AtLeast = -1, true
	}
	l := links[c.Link]
	// A direction whose CDCs came from the dump device alone, its link
	// carrying no request of it in the capture.
	for d, f := range []*Flow{&r.Client2Srv, &r.Srv2Client} {
		f.WritesNotShown = f.Dumped > 0 && f.Writes == 0 && (l == nil || l.RC[d].Packets == 0)
		f.RequestsMissed = !c.SMCD && missed[c.LGR].requests[d]
		f.WritesUntied = !c.SMCD && missed[c.LGR].untied[d]
	}
	if l != nil {
		r.Link = l.LinkID
	}
	if c.Inferred && l != nil {
		// No TCP connection seen: show the hosts from the link.
		r.Client, r.Server = addrString(l.Client.Addr), addrString(l.Server.Addr)
	}
	for _, ty := range c.CLCTypes {
		r.CLC = append(r.CLC, clcName(ty))
	}
	if c.ServerEP.Valid && !c.SMCD {
		r.ServerToken, r.ServerRKey, r.ServerRMB, r.ServerRMBE = c.ServerEP.Token, fmt.Sprintf("%#x", c.ServerEP.RKey), fmt.Sprintf("%#x", c.ServerEP.VA), c.ServerEP.RMBESize
		r.ServerIdx = c.ServerEP.RMBEIdx
	}
	if c.ClientEP.Valid && !c.SMCD {
		r.ClientToken, r.ClientRKey, r.ClientRMB, r.ClientRMBE = c.ClientEP.Token, fmt.Sprintf("%#x", c.ClientEP.RKey), fmt.Sprintf("%#x", c.ClientEP.VA), c.ClientEP.RMBESize
		r.ClientIdx = c.ClientEP.RMBEIdx
	}
	return r
}

// Step is one moment of a connection's life on the wire.
type Step struct {
	Time time.Time
	What string
}

// Steps is c's life as a few moments: the TCP SYN, each CLC message, the
// fallback, the first CDC and the close, in time order; a step the
// capture did not show is left out.
func Steps(c *track.Conn) []Step {
	var out []Step
	for _, st := range []Step{
		{c.TSYN, "TCP SYN"}, {c.TProposal, "CLC Proposal"}, {c.TAccept, "CLC Accept"}, {c.TConfirm, "CLC Confirm"},
		{c.Fallback.Time, "fell back to TCP: " + track.ConnDetail(c)}, {c.TFirstCDC, "first CDC"}, {c.TClose, "closed: " + track.CloseInfo(c)},
	} {
		if !st.Time.IsZero() {
			out = append(out, st)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// firstContact is c's first-contact flag where its Accept or Confirm told
// it (either carries it), else nil.
func firstContact(c *track.Conn) *bool {
	if !c.FirstContactKnown() {
		return nil
	}
	v := c.FirstContact
	return &v
}

// IDList is how every surface lists connections or links: their IDs
// joined by commas, "-" for none.
func IDList(ids []int) string {
	if len(ids) == 0 {
		return "-"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}
