package track

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
)

// View names for smcdump -z.
const (
	ViewConns    = "smc,conns"
	ViewLinks    = "smc,links"
	ViewLGR      = "smc,lgr"
	ViewDecline  = "smc,decline"
	ViewTimeline = "smc,timeline"
	ViewExpert   = "smc,expert"
)

// Views lists the view names with a one-line description, for -z help.
func Views() [][2]string {
	return [][2]string{
		{ViewConns, "SMC connections: outcome, handshake times, CDCs and bytes per direction"},
		{ViewLinks, "RoCE links: QPs, state, RC ACK/NAK/RNR, PSN gaps, retransmissions"},
		{ViewLGR, "link groups: peers, links, connections, deletion reason"},
		{ViewDecline, "fallbacks: who declined, when, why (decline codes named)"},
		{ViewTimeline + ",CONN", "life of one connection frame by frame (CONN = ID or ip:port)"},
		{ViewExpert, "expert findings by severity: what to look at, with first/last frame and count (package expert)"},
		{ViewExpert + ",SEVERITY", "the same from a severity up: chat, note, warn (warning) or error, as tshark's -z expert,warn"},
	}
}

// ErrUnknownView is returned for a -z name the tracker does not provide.
var ErrUnknownView = errors.New("unknown view")

// ParseView splits a -z argument such as "smc,timeline,3" into the view
// name and its argument.
func ParseView(spec string) (name, arg string, err error) {
	if strings.HasPrefix(spec, ViewTimeline) {
		rest := strings.TrimPrefix(spec, ViewTimeline)
		if !strings.HasPrefix(rest, ",") || len(rest) < 2 {
			return "", "", fmt.Errorf("%w: %q needs a connection: %s,ID or %s,IP:PORT", ErrUnknownView, spec, ViewTimeline, ViewTimeline)
		}
		return ViewTimeline, rest[1:], nil
	}
	if rest, ok := strings.CutPrefix(spec, ViewExpert+","); ok {
		// tshark's -z expert,warn: a severity floor for the view.
		if _, ok := expert.ParseSeverity(rest); !ok {
			return "", "", fmt.Errorf("%w: %q: severity %q is not chat, note, warn (warning) or error", ErrUnknownView, spec, rest)
		}
		return ViewExpert, rest, nil
	}
	switch spec {
	case ViewConns, ViewLinks, ViewLGR, ViewDecline, ViewExpert:
		return spec, "", nil
	}
	return "", "", fmt.Errorf("%w: %q (known: smc,conns smc,links smc,lgr smc,decline smc,timeline,CONN smc,expert smc,expert,SEVERITY)", ErrUnknownView, spec)
}

// OptionsForViews returns opts with what the given -z specs need set
// before the pass (a timeline is recorded only for the connections it
// names). Unknown specs are left for the renderer (zview.View) to report.
func OptionsForViews(opts Options, specs []string) Options {
	for _, s := range specs {
		if name, arg, err := ParseView(s); err == nil && name == ViewTimeline {
			if opts.Timeline != "" && opts.Timeline != arg {
				opts.Timeline = "all"
			} else {
				opts.Timeline = arg
			}
		}
	}
	return opts
}

// NewForViews validates -z specs and returns a tracker set up for them
// (timelines recorded for the connections they name).
func NewForViews(opts Options, specs []string) (*Tracker, error) {
	for _, s := range specs {
		if _, _, err := ParseView(s); err != nil {
			return nil, err
		}
	}
	return New(OptionsForViews(opts, specs)), nil
}

// FindConn finds a connection by tracker ID ("3") or endpoint
// ("10.10.0.2:54812"), as -z smc,timeline,CONN names it.
func (s *Snapshot) FindConn(arg string) (*Conn, error) {
	if id, err := strconv.Atoi(arg); err == nil {
		for i := range s.Conns {
			if s.Conns[i].ID == id {
				return &s.Conns[i], nil
			}
		}
		if s.folded.conns.n > 0 {
			return nil, fmt.Errorf("smc,timeline: no connection %d among the ones kept whole (see smc,conns; %d older ones were folded into the totals)", id, s.folded.conns.n)
		}
		return nil, fmt.Errorf("smc,timeline: no connection %d (see smc,conns)", id)
	}
	for i := range s.Conns {
		c := &s.Conns[i]
		if (c.Client.IsValid() && c.Client.String() == arg) || (c.Server.IsValid() && c.Server.String() == arg) {
			return c, nil
		}
	}
	return nil, fmt.Errorf("smc,timeline: no connection with endpoint %q (see smc,conns)", arg)
}

// ---- smc,conns ----

// ConnsView is the JSON form of smc,conns: the connections and the frame
// counts that say what could not be attributed.
type ConnsView struct {
	Conns []ConnRow `json:"conns"`
	Stats Stats     `json:"stats"`
	// Totals count every connection, link and link group of the capture,
	// listed or not; present when some were folded because there were
	// more than Options.MaxConns.
	Totals *Totals `json:"totals,omitempty"`
}

// ConnRow is one line of smc,conns.
type ConnRow struct {
	ID           int       `json:"id"`
	Client       string    `json:"client,omitempty"`
	Server       string    `json:"server,omitempty"`
	Outcome      string    `json:"outcome"`
	Detail       string    `json:"detail"`
	Version      uint8     `json:"version,omitempty"`
	FirstContact bool      `json:"first_contact"`
	Inferred     bool      `json:"inferred,omitempty"`
	RolesUnknown bool      `json:"roles_unknown,omitempty"`
	EID          string    `json:"eid,omitempty"`
	Offered      string    `json:"offered,omitempty"`
	LGR          int       `json:"lgr,omitempty"`
	Link         int       `json:"link,omitempty"`
	OptionSYN    bool      `json:"option_syn"`
	OptionSYNACK bool      `json:"option_synack"`
	CLC          []string  `json:"clc,omitempty"`
	Handshake    Durations `json:"handshake"`
	Client2Srv   FlowRow   `json:"c2s"`
	Srv2Client   FlowRow   `json:"s2c"`
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
	Close        string    `json:"close,omitempty"`
}

// Durations are handshake steps in milliseconds from the SYN (negative
// when the step was not seen).
type Durations struct {
	Proposal float64 `json:"proposal_ms"`
	Accept   float64 `json:"accept_ms"`
	Confirm  float64 `json:"confirm_ms"`
	FirstCDC float64 `json:"first_cdc_ms"`
}

// FlowRow is one direction of a connection.
type FlowRow struct {
	CDCs          int    `json:"cdcs"`
	Bytes         uint64 `json:"bytes"`
	Consumed      uint64 `json:"consumed"`
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
	Prod          string `json:"prod"`
	Cons          string `json:"cons"`
}

func flowRow(f *Flow) FlowRow {
	return FlowRow{CDCs: f.CDCs, Bytes: f.Bytes, Consumed: f.Consumed, WriteBytes: f.WriteBytes, Writes: f.Writes,
		WritesOutside: f.WritesOutside, TCPBytes: f.TCPBytes, WriteBlocked: f.WriteBlocked,
		UrgentPending: f.UrgentPending, UrgentPresent: f.UrgentPresent, ConsUpdReq: f.ConsUpdReq,
		Failover: f.Failover, SeqGaps: f.SeqGaps, SeqDup: f.SeqDup, CursorErrors: f.CursorErrors,
		Prod: fmt.Sprintf("%d/%d", f.Prod.Wrap, f.Prod.Count), Cons: fmt.Sprintf("%d/%d", f.Cons.Wrap, f.Cons.Count)}
}

func ms(from, to time.Time) float64 {
	if from.IsZero() || to.IsZero() {
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

// ConnRows returns the smc,conns rows: every connection as smcdump's -z
// view and the browser's panes show it (smctop reads Snapshot.Conns).
func (s *Snapshot) ConnRows() []ConnRow { return s.connRows() }

// LinkRows returns the smc,links rows.
func (s *Snapshot) LinkRows() []LinkRow { return s.linkRows() }

// LGRRows returns the smc,lgr rows.
func (s *Snapshot) LGRRows() []LGRRow { return s.lgrRows() }

// ConnsView returns the smc,conns rows with the frame counts.
func (s *Snapshot) ConnsView() ConnsView {
	v := ConnsView{Conns: s.connRows(), Stats: s.Stats}
	if s.Folded() {
		t := s.Totals()
		v.Totals = &t
	}
	return v
}

// DeclineView returns the smc,decline view.
func (s *Snapshot) DeclineView() DeclineView { return s.declineView() }

// Timeline returns the smc,timeline view of connection arg (see FindConn).
func (s *Snapshot) Timeline(arg string) (Timeline, error) {
	c, err := s.FindConn(arg)
	if err != nil {
		return Timeline{}, err
	}
	return timelineOf(c, s.linksByID()), nil
}

func (s *Snapshot) connRows() []ConnRow {
	rows := make([]ConnRow, 0, len(s.Conns))
	links := s.linksByID()
	for i := range s.Conns {
		rows = append(rows, connRow(&s.Conns[i], links))
	}
	return rows
}

func (s *Snapshot) linksByID() map[int]*Link {
	links := make(map[int]*Link, len(s.Links))
	for i := range s.Links {
		links[s.Links[i].ID] = &s.Links[i]
	}
	return links
}

// connRow is c's line of smc,conns; links finds the link of an inferred
// connection, whose hosts stand in for the TCP endpoints.
func connRow(c *Conn, links map[int]*Link) ConnRow {
	start := c.TSYN
	if start.IsZero() {
		start = c.TProposal
	}
	r := ConnRow{
		ID: c.ID, Client: addrString(c.Client), Server: addrString(c.Server),
		Outcome: c.Outcome.String(), Detail: ConnDetail(c), Version: c.Version,
		FirstContact: c.FirstContact, Inferred: c.Inferred, RolesUnknown: c.RolesUnknown, EID: strings.TrimRight(c.EID, " "), Offered: c.Offered,
		LGR: c.LGR, Link: c.Link, OptionSYN: c.OptionSYN, OptionSYNACK: c.OptionSYNACK,
		Handshake:  Durations{ms(start, c.TProposal), ms(start, c.TAccept), ms(start, c.TConfirm), ms(start, c.TFirstCDC)},
		Client2Srv: flowRow(&c.Flow[DirC2S]), Srv2Client: flowRow(&c.Flow[DirS2C]),
		Frames: c.Frames, FirstFrame: c.FirstFrame, LastFrame: c.LastFrame,
		Closed: c.Closed(), Close: CloseInfo(c),
	}
	if l := links[c.Link]; c.Inferred && l != nil {
		// No TCP connection seen: show the hosts from the link.
		r.Client, r.Server = addrString(l.Client.Addr), addrString(l.Server.Addr)
	}
	for _, ty := range c.CLCTypes {
		r.CLC = append(r.CLC, strings.TrimPrefix(clcName(ty), "CLC "))
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

// ConnDetail says in a few words how a connection's handshake ended.
func ConnDetail(c *Conn) string {
	switch c.Outcome {
	case OutcomeFallback:
		fb := &c.Fallback
		if fb.Cause != CauseDecline {
			return fb.Cause.String()
		}
		who := "client"
		if fb.By == DirS2C {
			who = "server"
		}
		code := decode.DeclineCode(fb.Code)
		s := fmt.Sprintf("%s declined %#08x %s %s", who, fb.Code, code, fb.Stage)
		if fb.OutOfSync {
			s += " [out of sync]"
		}
		return s
	case OutcomeSMCR, OutcomeSMCD:
		if c.FirstContact {
			return "first contact (new link group)"
		}
		return "reused link group"
	case OutcomeUnknown:
		return "joined mid-stream (from CDCs)"
	case OutcomeFailed:
		return c.Failure
	}
	if s := pendingDetail(c); s != "" {
		return s
	}
	var s string
	switch {
	case len(c.CLCTypes) > 0:
		s = "handshake incomplete after " + strings.TrimPrefix(clcName(c.CLCTypes[len(c.CLCTypes)-1]), "CLC ")
	case c.SeenSYNACK:
		s = "no CLC yet"
	default:
		s = "SYN only"
	}
	if c.Flow[0].FIN || c.Flow[1].FIN || c.Flow[0].RST || c.Flow[1].RST {
		s += "; TCP closed before the handshake finished"
	}
	return s
}

// CloseInfo says how each side ended a connection ("client closed,
// server FIN"), "" while both are open.
func CloseInfo(c *Conn) string {
	var parts []string
	for d := DirC2S; d <= DirS2C; d++ {
		f := &c.Flow[d]
		who := map[bool]string{false: "client", true: "server"}[d == DirS2C]
		if c.RolesUnknown {
			who = map[bool]string{false: "A", true: "B"}[d == DirS2C]
		}
		switch {
		case f.Aborted:
			parts = append(parts, who+" abort")
		case f.Closed:
			parts = append(parts, who+" closed")
		case f.DoneWriting:
			parts = append(parts, who+" done writing")
		}
		if f.RST {
			parts = append(parts, who+" RST")
		} else if f.FIN {
			parts = append(parts, who+" FIN")
		}
	}
	return strings.Join(parts, ", ")
}

// ---- smc,links ----

// LinkRow is one line of smc,links.
type LinkRow struct {
	ID         int    `json:"id"`
	LGR        int    `json:"lgr"`
	LinkID     uint8  `json:"link_id"`
	State      string `json:"state"`
	Inferred   bool   `json:"inferred,omitempty"`
	DeleteCode string `json:"delete_reason,omitempty"`
	Client     EndRow `json:"client"`
	Server     EndRow `json:"server"`
	C2S        RCRow  `json:"c2s"`
	S2C        RCRow  `json:"s2c"`
	TestLinks  int    `json:"test_links,omitempty"`
	Conns      []int  `json:"conns"`
	// ConnsFolded connections of the link are not in Conns: folded into
	// the totals (more than Options.MaxConns connections).
	ConnsFolded int      `json:"conns_folded,omitempty"`
	History     []string `json:"history"`
}

// EndRow is one side of a link.
type EndRow struct {
	Addr string `json:"addr,omitempty"`
	GID  string `json:"gid,omitempty"`
	MAC  string `json:"mac,omitempty"`
	QPN  string `json:"qpn"`
	PSN  string `json:"initial_psn,omitempty"`
	UID  string `json:"link_uid,omitempty"`
}

// RCRow counts one direction of a link.
type RCRow struct {
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

func endRow(e *LinkEnd) EndRow {
	r := EndRow{Addr: addrString(e.Addr), GID: addrString(e.GID), QPN: fmt.Sprintf("%#06x", e.QPN)}
	if e.MAC != ([6]byte{}) {
		r.MAC = net.HardwareAddr(e.MAC[:]).String()
	}
	if e.PSN != 0 {
		r.PSN = fmt.Sprintf("%#06x", e.PSN)
	}
	if e.UID != 0 {
		r.UID = fmt.Sprintf("%08x", e.UID)
	}
	return r
}

func rcRow(r *RC) RCRow {
	row := RCRow{Packets: r.Packets, Sends: r.Sends, WritePkts: r.WritePkts, LLCs: r.LLCs, CDCs: r.CDCs, Acks: r.Acks,
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

func (s *Snapshot) linkRows() []LinkRow {
	rows := make([]LinkRow, 0, len(s.Links))
	for i := range s.Links {
		l := &s.Links[i]
		r := LinkRow{ID: l.ID, LGR: l.LGR, LinkID: l.LinkID, State: l.State.String(), Inferred: l.Inferred,
			Client: endRow(&l.Client), Server: endRow(&l.Server), C2S: rcRow(&l.RC[DirC2S]), S2C: rcRow(&l.RC[DirS2C]),
			TestLinks: l.TestLinks, Conns: append([]int{}, l.Conns...), ConnsFolded: l.ConnsFolded}
		if l.State == LinkDeleted {
			r.DeleteCode = fmt.Sprintf("%#08x %s", l.DeleteCode, decode.DeleteLinkReason(l.DeleteCode))
		}
		for _, h := range l.History {
			r.History = append(r.History, fmt.Sprintf("frame %d: %s", h.Frame, h.What))
		}
		rows = append(rows, r)
	}
	return rows
}

// ---- smc,lgr ----

// LGRRow is one line of smc,lgr.
type LGRRow struct {
	ID           int      `json:"id"`
	State        string   `json:"state"`
	Inferred     bool     `json:"inferred,omitempty"`
	ServerPeerID string   `json:"server_peer_id"`
	ClientPeerID string   `json:"client_peer_id"`
	ServerLGRID  string   `json:"server_lgr_id,omitempty"`
	ClientLGRID  string   `json:"client_lgr_id,omitempty"`
	Version      uint8    `json:"version"`
	MaxLinks     uint8    `json:"max_links"`
	MaxConns     uint8    `json:"max_conns"`
	Links        []int    `json:"links"`
	LinkStates   []string `json:"link_states"` // "ID(link N):state" per link
	Conns        []int    `json:"conns"`
	// Links and connections of the group folded into the totals, not in
	// Links and Conns (more than Options.MaxConns).
	LinksFolded int    `json:"links_folded,omitempty"`
	ConnsFolded int    `json:"conns_folded,omitempty"`
	DeleteCode  string `json:"delete_reason,omitempty"`
	FirstFrame  int    `json:"first_frame"`
	// History is the group's life: links confirmed, added, rejected and
	// deleted (with reason), and connections moved to another link.
	History []string `json:"history,omitempty"`
}

func peerID(id [8]byte) string {
	if id == ([8]byte{}) {
		return "-"
	}
	return fmt.Sprintf("%02x%02x@%s", id[0], id[1], net.HardwareAddr(id[2:]))
}

func (s *Snapshot) lgrRows() []LGRRow {
	state := map[int]string{}
	confirmed := map[int]bool{} // link groups with a link that can carry connections
	for i := range s.Links {
		l := &s.Links[i]
		confirmed[l.LGR] = confirmed[l.LGR] || linkConfirmed(l)
		state[l.ID] = fmt.Sprintf("%d:%s", l.ID, l.State)
		if l.LinkID != 0 {
			state[l.ID] = fmt.Sprintf("%d(link %d):%s", l.ID, l.LinkID, l.State)
		}
	}
	rows := make([]LGRRow, 0, len(s.LinkGroups))
	for i := range s.LinkGroups {
		g := &s.LinkGroups[i]
		r := LGRRow{ID: g.ID, State: "active", Inferred: g.Inferred, ServerPeerID: peerID(g.ServerPeerID),
			ClientPeerID: peerID(g.ClientPeerID), Version: g.Version, MaxLinks: g.MaxLinks, MaxConns: g.MaxConns,
			Links: append([]int{}, g.Links...), Conns: append([]int{}, g.Conns...), FirstFrame: g.FirstFrame,
			LinksFolded: g.LinksFolded, ConnsFolded: g.ConnsFolded}
		if g.ServerLGRID != 0 {
			r.ServerLGRID = fmt.Sprintf("%#x", g.ServerLGRID)
		}
		if g.ClientLGRID != 0 {
			r.ClientLGRID = fmt.Sprintf("%#x", g.ClientLGRID)
		}
		if !confirmed[g.ID] && len(g.Links) > 0 {
			// As its connections: not usable before a link is confirmed.
			r.State = "confirming"
		}
		if g.Deleted {
			r.State = "deleted"
			r.DeleteCode = fmt.Sprintf("%#08x %s", g.DeleteCode, decode.DeleteLinkReason(g.DeleteCode).Meaning())
		}
		for _, id := range g.Links {
			r.LinkStates = append(r.LinkStates, state[id])
		}
		r.History = s.lgrHistory(g)
		rows = append(rows, r)
	}
	return rows
}

// lgrHistory merges the group-level events of its links: the same LLC frame
// is in the history of the link it was sent on and of the link it is about,
// so frames are listed once.
func (s *Snapshot) lgrHistory(g *LinkGroup) []string {
	type ev struct {
		frame int
		what  string
	}
	var evs []ev
	seen := map[int]bool{}
	for i := range s.Links {
		l := &s.Links[i]
		if l.LGR != g.ID {
			continue
		}
		for _, h := range l.History {
			if seen[h.Frame] || !groupLevel(h.What) {
				continue
			}
			seen[h.Frame] = true
			evs = append(evs, ev{h.Frame, h.What})
		}
	}
	for i := range s.Conns {
		c := &s.Conns[i]
		if c.LGR != g.ID {
			continue
		}
		n := c.Flow[DirC2S].Failover + c.Flow[DirS2C].Failover
		if n == 0 {
			continue
		}
		first := c.Flow[DirC2S].FailoverFrame
		if f := c.Flow[DirS2C].FailoverFrame; first == 0 || (f != 0 && f < first) {
			first = f
		}
		evs = append(evs, ev{first, fmt.Sprintf("failover: connection %d moved to link %d (%d failover-validation CDCs)", c.ID, c.Link, n)})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].frame < evs[j].frame })
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = fmt.Sprintf("frame %d: %s", e.frame, e.what)
	}
	return out
}

// groupLevel keeps what changes the group's shape; rkey traffic stays in smc,links.
func groupLevel(what string) bool {
	for _, p := range []string{"announced", "CONFIRM_LINK", "ADD_LINK", "DELETE_LINK"} {
		if strings.HasPrefix(what, p) {
			return true
		}
	}
	return false
}

// ---- smc,decline ----

// DeclineView lists the fallbacks and counts them by reason.
type DeclineView struct {
	Fallbacks []DeclineRow  `json:"fallbacks"`
	ByReason  []ReasonCount `json:"by_reason"` // over all fallbacks, listed and folded
	// Folded counts the fallbacks that are not listed: connections folded
	// into the totals because there were more than Options.MaxConns.
	Folded int `json:"folded,omitempty"`
}

// DeclineRow is one connection that stayed on TCP.
type DeclineRow struct {
	ID        int    `json:"id"`
	Client    string `json:"client"`
	Server    string `json:"server"`
	Cause     string `json:"cause"`
	By        string `json:"by"`
	Stage     string `json:"stage"`
	Code      string `json:"code,omitempty"`
	Name      string `json:"name,omitempty"`
	Meaning   string `json:"meaning"`
	OutOfSync bool   `json:"out_of_sync,omitempty"`
	Frame     int    `json:"frame"`
}

// ReasonCount counts fallbacks with one reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

func (s *Snapshot) declineView() DeclineView {
	v := DeclineView{Fallbacks: []DeclineRow{}, ByReason: []ReasonCount{}}
	count := map[string]int{}
	for i := range s.Conns {
		c := &s.Conns[i]
		if c.Outcome != OutcomeFallback {
			continue
		}
		r, reason := declineRow(c)
		count[reason]++
		v.Fallbacks = append(v.Fallbacks, r)
	}
	for k, n := range s.folded.reasons {
		count[reasonText(k)] += n
		v.Folded += n
	}
	for k, n := range count {
		v.ByReason = append(v.ByReason, ReasonCount{k, n})
	}
	sortReasons(v.ByReason)
	return v
}

// declineRow is c's line of smc,decline and the reason it is counted under.
func declineRow(c *Conn) (DeclineRow, string) {
	fb := &c.Fallback
	r := DeclineRow{ID: c.ID, Client: addrString(c.Client), Server: addrString(c.Server),
		Cause: fb.Cause.String(), Stage: fb.Stage.String(), Frame: fb.Frame, OutOfSync: fb.OutOfSync}
	r.By = "client"
	if fb.By == DirS2C {
		r.By = "server"
	}
	var reason string
	switch fb.Cause {
	case CauseDecline:
		code := decode.DeclineCode(fb.Code)
		r.Code, r.Name, r.Meaning = fmt.Sprintf("%#08x", fb.Code), code.String(), code.Meaning()
		reason = r.Code + " " + r.Name + " (" + r.By + ")"
	case CauseNoOptionSYNACK:
		// Same meaning as the client's local reason 0x03010000 PEERNOSMC.
		code := decode.DeclinePeerNoSMC
		r.Code, r.Name, r.Meaning = fmt.Sprintf("%#08x", uint32(code)), code.String(), "server did not answer the SMC option: "+code.Meaning()
		reason = "no SMC option on SYN-ACK (" + r.Code + " " + r.Name + " locally)"
	default:
		r.Meaning = fb.Cause.String()
		reason = r.Meaning
	}
	return r, reason
}

// reasonText is the reason a folded fallback is counted under, as for a
// listed one.
func reasonText(k fallbackReason) string {
	if k == reasonOther {
		return fmt.Sprintf("other reasons (more than %d distinct among the folded connections)", maxReasons)
	}
	_, reason := declineRow(&Conn{Outcome: OutcomeFallback, Fallback: Fallback{Cause: k.cause, Code: k.code, By: k.by}})
	return reason
}

// ---- smc,timeline ----

// Timeline is the life of one connection.
type Timeline struct {
	Conn   ConnRow         `json:"conn"`
	Events []TimelineEvent `json:"events"`
	Cut    int             `json:"events_not_kept,omitempty"`
	Note   string          `json:"note,omitempty"`
}

// TimelineEvent is one frame of a timeline.
type TimelineEvent struct {
	Frame int     `json:"frame"`
	Rel   float64 `json:"rel_s"`
	Dir   string  `json:"dir"`
	What  string  `json:"what"`
	Info  string  `json:"info"`
}

func timelineOf(c *Conn, links map[int]*Link) Timeline {
	tl := Timeline{Conn: connRow(c, links), Events: []TimelineEvent{}, Cut: c.TimelineCut}
	if len(c.Timeline) == 0 && c.Frames > 0 {
		tl.Note = "no events recorded: the tracker records a timeline only for connections named before the pass (Options.Timeline / track.OptionsForViews)"
	}
	var t0 time.Time
	if len(c.Timeline) > 0 {
		t0 = c.Timeline[0].Time
	}
	for _, e := range c.Timeline {
		tl.Events = append(tl.Events, TimelineEvent{Frame: e.Frame, Rel: e.Time.Sub(t0).Seconds(), Dir: dirName(e.Dir, c.RolesUnknown), What: e.What, Info: e.Info})
	}
	return tl
}
