package monitor

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/track"
)

// Wire runs the decoders and the tracker over a capture file or a live
// interface, beside (or instead of) the kernel's view: queue pairs, CDC
// rates, retransmissions and PSN gaps per link, which the kernel does not
// expose. A file replay can be paused, stepped, moved forward and back in
// capture time, and restarted (the dashboard's replay keys).
type Wire struct {
	name   string
	path   string
	filter string
	live   bool
	speed  float64

	closeOnce sync.Once
	closeErr  error

	mu     sync.Mutex
	wake   chan struct{} // a control changed: Run re-reads it
	r      *capture.Reader
	tr     *track.Tracker
	frames int
	last   time.Time // capture time of the newest frame
	// at is where the replay stands in capture time: the newest frame's
	// time, or later when a step or seek ended between two frames.
	at   time.Time
	err  error
	done bool
	// Replay control (files only).
	hold   bool      // at the end, wait for a restart instead of returning
	paused bool      // no frame is read
	until  time.Time // read without pacing up to this capture time (seek, step)
	// ahead is a step or seek asked for before the first frame: until is
	// then the first frame's time plus ahead.
	ahead   time.Duration
	restart bool // reopen the file at the next frame
	gen     int  // restarts so far: the tracker and frame numbers began again
}

// OpenWire opens a capture file (path) or a live interface (iface, with
// an optional capture filter). speed paces a file by its timestamps (1 =
// real time, 10 = ten times faster); 0 reads it as fast as possible.
func OpenWire(path, iface, filter string, speed float64) (*Wire, error) {
	w := &Wire{name: path, path: path, filter: filter, live: iface != "", speed: speed, wake: make(chan struct{}, 1)}
	if iface != "" {
		w.name = iface
	}
	r, err := w.open(iface)
	if err != nil {
		return nil, err
	}
	w.r, w.tr = r, track.New(track.Options{})
	return w, nil
}

func (w *Wire) open(iface string) (*capture.Reader, error) {
	var (
		r   *capture.Reader
		err error
	)
	if iface != "" {
		r, err = capture.OpenLive(iface, w.filter, 0)
	} else {
		r, err = capture.Open(w.path)
	}
	if err != nil {
		return nil, err
	}
	// The tracker reads the layers itself; no field record is needed,
	// but the ICRC is checked: a bad one is a finding (roce.icrc.bad).
	r.SetFieldDemand([]decode.FieldID{decode.FieldICRCOK})
	return r, nil
}

// Name says where the frames come from: "capture FILE" or "live IFACE".
func (w *Wire) Name() string {
	if w.live {
		return "live " + w.name
	}
	return "capture " + w.name
}

// Live reports whether the frames come from an interface.
func (w *Wire) Live() bool { return w.live }

// Hold makes Run wait at the end of a file for a restart (or its context)
// instead of returning: the dashboard can replay it again.
func (w *Wire) Hold() {
	w.mu.Lock()
	w.hold = true
	w.mu.Unlock()
}

// control changes the replay under the lock and wakes Run.
func (w *Wire) control(f func()) {
	w.mu.Lock()
	f()
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// SetPaused pauses or resumes reading a file.
func (w *Wire) SetPaused(p bool) { w.control(func() { w.paused = p; w.until = time.Time{} }) }

// Step reads the next d of capture time at once and pauses there (paused
// or not before).
func (w *Wire) Step(d time.Duration) {
	w.control(func() { w.paused = true; w.moveBy(d) })
}

// Seek moves the replay by d of capture time: forward reads the frames up
// to there at once; backward restarts the file and reads up to there.
func (w *Wire) Seek(d time.Duration) {
	w.control(func() {
		if d < 0 {
			w.restart = true
		}
		w.moveBy(d)
	})
}

// moveBy sets the capture time to read up to: d from the newest frame, or
// from the first one when none was read (w.mu held).
func (w *Wire) moveBy(d time.Duration) {
	if w.at.IsZero() {
		w.ahead, w.until = max(d, time.Nanosecond), time.Time{}
		return
	}
	w.until = w.at.Add(d)
}

// Restart replays the file from its first frame.
func (w *Wire) Restart() { w.control(func() { w.restart, w.until = true, time.Time{} }) }

// Replay says where a file replay stands: paused, its pace (0: as fast
// as it reads), how many restarts (a new generation begins the tracker
// and the frame numbers again) and its position in capture time.
func (w *Wire) Replay() (paused bool, speed float64, gen int, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.paused && w.until.IsZero() && w.ahead == 0, w.speed, w.gen, w.at
}

// Run feeds every frame to the tracker until the capture ends (a held
// file: until ctx is done), ctx is done or a read fails. It is meant to
// run in its own goroutine; Snapshot may be called meanwhile.
func (w *Wire) Run(ctx context.Context) error {
	defer w.Close()
	var (
		first, start time.Time      // pacing: the capture time and wall time it is paced from
		pend         *capture.Frame // read, not fed yet (a step or seek stopped before it, or a pause)
	)
	waitCtl := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-w.wake:
			return true
		}
	}
	for ctx.Err() == nil {
		w.mu.Lock()
		if w.restart && !w.live {
			if err := w.reopen(); err != nil {
				w.err, w.done = err, true
				w.mu.Unlock()
				return err
			}
			pend, first = nil, time.Time{}
		}
		paused, until, done, hold, r, err := w.paused && !w.live, w.until, w.done, w.hold, w.r, w.err
		ahead := w.ahead
		w.mu.Unlock()
		if done {
			if !hold || w.live {
				return err
			}
			if !waitCtl() {
				return nil
			}
			continue
		}
		if pend == nil {
			f, err := r.Next()
			if err != nil {
				w.mu.Lock()
				w.done, w.until = true, time.Time{}
				if err != io.EOF {
					w.err = err
				} else if w.r == r {
					// The replay read its file to the end: what was
					// pending there is a finding (expert.EndedPending).
					end, _, _ := r.Recorded()
					w.tr.EndCapture(end)
				}
				w.mu.Unlock()
				continue
			}
			pend = f
		}
		ts := pend.CI.Timestamp
		if ahead > 0 {
			w.mu.Lock()
			w.until, w.ahead = ts.Add(ahead), 0
			until = w.until
			w.mu.Unlock()
		}
		switch {
		case !until.IsZero() && ts.After(until):
			// The step or seek reached its capture time: stop before this
			// frame, which waits (paused) or is paced from here.
			w.mu.Lock()
			w.at, w.until = until, time.Time{}
			w.mu.Unlock()
			first = time.Time{}
			continue
		case !until.IsZero():
			// Stepping or seeking: read at once.
		case paused:
			first = time.Time{}
			if !waitCtl() {
				return nil
			}
			continue
		case w.speed > 0 && !w.live:
			if first.IsZero() {
				first, start = ts, time.Now()
			}
			if d := time.Until(start.Add(time.Duration(float64(ts.Sub(first)) / w.speed))); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-ctx.Done():
					t.Stop()
					return nil
				case <-w.wake:
					// A control changed while the frame waited: take it up
					// first; the pacing starts again from this frame.
					t.Stop()
					first = time.Time{}
					continue
				case <-t.C:
				}
			}
		}
		w.mu.Lock()
		if w.r == r { // not restarted meanwhile
			w.tr.Feed(pend)
			w.frames++
			w.last = ts
			if ts.After(w.at) {
				w.at = ts
			}
		}
		w.mu.Unlock()
		pend = nil
	}
	return nil
}

// reopen starts the file again with a new tracker (w.mu held).
func (w *Wire) reopen() error {
	r, err := w.open("")
	if err != nil {
		return err
	}
	_ = w.r.Close()
	w.r, w.tr = r, track.New(track.Options{})
	w.frames, w.last, w.at, w.err, w.done, w.restart = 0, time.Time{}, time.Time{}, nil, false, false
	w.gen++
	return nil
}

// Progress returns the frames read, the capture time of the newest one,
// whether the capture has ended and the read error that ended it.
func (w *Wire) Progress() (frames int, last time.Time, done bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.frames, w.last, w.done, w.err
}

// Close stops a live capture or closes the file; Run calls it when the
// capture ends, so a later call returns the first result.
func (w *Wire) Close() error {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		r := w.r
		w.mu.Unlock()
		w.closeErr = r.Close()
	})
	return w.closeErr
}

// Snapshot copies the tracker's state.
func (w *Wire) Snapshot() track.Snapshot {
	w.mu.Lock()
	tr := w.tr
	w.mu.Unlock()
	return tr.Snapshot()
}

// wireView is the dashboard's reading of one tracker snapshot: its rows
// and every event the capture shows so far. It reads the tracker's typed
// model only; a capture is seen from the client (LOCAL is the client,
// the client's link-group ID, the client's own decline reason).
type wireView struct {
	conns  []ConnRow
	groups []LinkGroupRow
	events []Event
	// fallbacks counts the capture's fallbacks by side and local reason,
	// as each side's kernel counts them (SMC_NETLINK_GET_FBACK_STATS).
	fallbacks []ReasonCount
	success   int // connections that became SMC-R or SMC-D
	// findings are the capture's expert findings as events, one per
	// finding and object (Monitor.wire logs each once), and expert their
	// counts over the whole capture.
	findings []Event
	expert   []ExpertCount
}

// wireFindings files the snapshot's findings by the object they are on,
// as rows show them, and makes an event of each.
type wireFindings struct {
	conns  map[int][]Finding
	links  map[int][]Finding // by tracker link ID
	groups map[int][]Finding
	events []Event
}

func readFindings(s *track.Snapshot, links map[int]*track.Link, groups map[int]*track.LinkGroup) wireFindings {
	w := wireFindings{conns: map[int][]Finding{}, links: map[int][]Finding{}, groups: map[int][]Finding{}}
	for _, f := range s.Findings() {
		d := f.ID.Def()
		row := Finding{ID: d.Name, Severity: d.Severity.String(), Count: f.Count, First: f.First, Last: f.Last, Detail: f.Detail}
		e := Event{Time: f.FirstTime, Kind: EventExpert, Source: EventFromWire, Frame: f.First, Finding: d.Name, Severity: row.Severity}
		what := "the capture"
		switch f.Object {
		case expert.ObjectConn:
			w.conns[f.ObjectID] = append(w.conns[f.ObjectID], row)
			e.Conn = wireConnKey(f.ObjectID)
			what = e.Conn
		case expert.ObjectLink:
			w.links[f.ObjectID] = append(w.links[f.ObjectID], row)
			if l := links[f.ObjectID]; l != nil {
				e.LGR, e.Link = wireLGRKey(l.LGR), l.LinkID
				what = fmt.Sprintf("link %d of link group %s", l.LinkID, lgrOf(groups[l.LGR]))
			}
		case expert.ObjectLGR:
			w.groups[f.ObjectID] = append(w.groups[f.ObjectID], row)
			e.LGR = wireLGRKey(f.ObjectID)
			what = "link group " + lgrOf(groups[f.ObjectID])
		}
		e.Text = fmt.Sprintf("%s %s on %s: %s", row.Severity, d.Name, what, d.Meaning)
		if f.Detail != "" {
			e.Text += " (" + f.Detail + ")"
		}
		w.events = append(w.events, e)
	}
	return w
}

// lgrOf names a tracked group by its client's kernel ID, as rows do.
func lgrOf(g *track.LinkGroup) string {
	if g == nil {
		return "-"
	}
	if g.ClientLGRID != 0 {
		return LGRID(g.ClientLGRID).String()
	}
	return wireLGRKey(g.ID)
}

// wireExpert counts the capture's findings, folded connections' included.
func wireExpert(s *track.Snapshot) []ExpertCount {
	found := map[string]uint64{}
	for _, sev := range s.ExpertView().Severities {
		for _, r := range sev.Findings {
			found[r.ID] += uint64(r.Count)
		}
	}
	return catalogueCounts(expert.FromWire, func(d expert.Def) uint64 { return found[d.Name] })
}

// catalogueCounts lists every finding of the catalogue that src finds,
// with its count so far, 0 included: an exported counter exists from the
// start, so that increase() sees its first finding.
func catalogueCounts(src expert.Source, count func(expert.Def) uint64) []ExpertCount {
	var out []ExpertCount
	for id := expert.ID(1); int(id) <= expert.Count; id++ {
		if d := id.Def(); d.Source == src {
			out = append(out, ExpertCount{ID: d.Name, Severity: d.Severity.String(), Source: src.String(), Count: count(d)})
		}
	}
	return out
}

func wireConnKey(id int) string { return "wire:" + strconv.Itoa(id) }
func wireLGRKey(id int) string  { return "wire-lgr:" + strconv.Itoa(id) }

func readWire(s *track.Snapshot) wireView {
	var v wireView
	links := make(map[int]*track.Link, len(s.Links))
	for i := range s.Links {
		links[s.Links[i].ID] = &s.Links[i]
	}
	groups := make(map[int]*track.LinkGroup, len(s.LinkGroups))
	for i := range s.LinkGroups {
		groups[s.LinkGroups[i].ID] = &s.LinkGroups[i]
	}
	wf := readFindings(s, links, groups)
	v.findings, v.expert = wf.events, wireExpert(s)
	open := map[int]int{}     // link group -> open connections
	openLink := map[int]int{} // link -> open connections
	fb := map[[2]uint32]int{} // (side, local reason) -> count
	for i := range s.Conns {
		c := &s.Conns[i]
		r := wireConn(c, links[c.Link], groups[c.LGR])
		r.Findings = wf.conns[c.ID]
		if r.State != StateClosed {
			open[c.LGR]++
			openLink[c.Link]++
		}
		if r.Mode.SMC() {
			v.success++
		}
		if r.Mode == ModeFallback {
			client, server := sideReasons(&c.Fallback)
			if client != 0 {
				fb[[2]uint32{0, client}]++
			}
			if server != 0 {
				fb[[2]uint32{1, server}]++
			}
			v.events = append(v.events, Event{Time: c.Fallback.Time, Kind: EventFallback, Source: EventFromWire, Frame: c.Fallback.Frame,
				Conn: r.Key, Text: fmt.Sprintf("%s %s -> %s fell back to TCP: %s", r.Key, endpoint(r.Src), endpoint(r.Dst), track.ConnDetail(c))})
		}
		v.events = append(v.events, failoverEvents(c, r, groups[c.LGR])...)
		v.conns = append(v.conns, r)
	}
	for k, n := range fb {
		side := RoleClient
		if k[0] == 1 {
			side = RoleServer
		}
		v.fallbacks = append(v.fallbacks, ReasonCount{Side: side, Reason: reason(k[1]), Count: uint64(n)})
	}
	sort.Slice(v.fallbacks, func(i, j int) bool {
		a, b := v.fallbacks[i], v.fallbacks[j]
		if a.Side != b.Side {
			return a.Side < b.Side
		}
		return a.Reason.Code < b.Reason.Code
	})
	for i := range s.LinkGroups {
		g := &s.LinkGroups[i]
		gr, evs := wireGroup(g, links, open[g.ID], openLink, &wf)
		v.groups = append(v.groups, gr)
		v.events = append(v.events, evs...)
	}
	return v
}

// sideReasons returns the local fallback reason each side's kernel gives
// a fallback (smc_sock fallback_rsn): the side that declined its own code,
// the other SMC_CLC_DECL_PEERDECL (smc_clc_wait_msg); a client whose
// SYN-ACK had no SMC option SMC_CLC_DECL_PEERNOSMC, its server nothing
// (it never spoke SMC).
func sideReasons(fb *track.Fallback) (client, server uint32) {
	switch fb.Cause {
	case track.CauseDecline:
		if fb.By == track.DirC2S {
			return fb.Code, uint32(decode.DeclinePeerDecl)
		}
		return uint32(decode.DeclinePeerDecl), fb.Code
	case track.CauseNoOptionSYNACK:
		return uint32(decode.DeclinePeerNoSMC), 0
	}
	return 0, 0
}

// wireConn is the row of one tracked connection, seen from the client.
func wireConn(c *track.Conn, l *track.Link, g *track.LinkGroup) ConnRow {
	r := ConnRow{
		Key: wireConnKey(c.ID), Source: SourceWire, Src: c.Client, Dst: c.Server, Role: RoleClient,
		RxBytes: c.Flow[track.DirS2C].Bytes, TxBytes: c.Flow[track.DirC2S].Bytes,
		Token: c.ClientEP.Token, RMBE: c.ClientEP.RMBESize, PeerRMBE: c.ServerEP.RMBESize,
		Detail: track.ConnDetail(c), Start: c.Start,
	}
	switch c.Outcome {
	case track.OutcomeSMCR, track.OutcomeUnknown: // joined mid-stream from its CDCs: SMC-R data
		r.Mode = ModeSMCR
	case track.OutcomeSMCD:
		r.Mode = ModeSMCD
	case track.OutcomeFallback:
		r.Mode = ModeFallback
	case track.OutcomeFailed:
		r.Mode = ModeFailed
	default:
		r.Mode = ModePending
	}
	switch {
	case c.Closed() || c.Outcome == track.OutcomeFailed:
		r.State = StateClosed
	case r.Mode == ModePending:
		r.State = StateInit
	default:
		r.State = StateActive
	}
	if c.Outcome == track.OutcomeFallback {
		client, _ := sideReasons(&c.Fallback)
		r.Fallback = reason(client)
		if c.Fallback.Cause == track.CauseDecline && c.Fallback.By == track.DirS2C {
			r.PeerDiagnosis = reason(c.Fallback.Code)
		}
	}
	for _, st := range []struct {
		t    time.Time
		what string
	}{
		{c.TSYN, "TCP SYN"}, {c.TProposal, "CLC Proposal"}, {c.TAccept, "CLC Accept"}, {c.TConfirm, "CLC Confirm"},
		{c.Fallback.Time, "fell back to TCP: " + track.ConnDetail(c)}, {c.TFirstCDC, "first CDC"}, {c.TClose, "closed: " + track.CloseInfo(c)},
	} {
		if !st.t.IsZero() {
			r.Handshake = append(r.Handshake, Step{Time: st.t, What: st.what})
		}
	}
	sort.SliceStable(r.Handshake, func(i, j int) bool { return r.Handshake[i].Time.Before(r.Handshake[j].Time) })
	if g != nil {
		r.LGRID, r.LGRKey = LGRID(g.ClientLGRID), wireLGRKey(g.ID)
	}
	if l != nil {
		r.LinkID = l.LinkID
		r.GID, r.PeerGID = gidText(l.Client.GID), gidText(l.Server.GID)
	}
	return r
}

// wireGroup is the row of one tracked link group with its links, and the
// events its history shows. open counts its connections still open,
// openLink those of each link.
func wireGroup(g *track.LinkGroup, links map[int]*track.Link, open int, openLink map[int]int, wf *wireFindings) (LinkGroupRow, []Event) {
	gr := LinkGroupRow{
		Key: wireLGRKey(g.ID), Source: SourceWire, ID: LGRID(g.ClientLGRID), PeerID: LGRID(g.ServerLGRID),
		Kind: ModeSMCR, Role: RoleClient, Deleted: g.Deleted, Conns: uint32(open),
		Version: g.Version, Release: g.Release, EID: strings.TrimRight(g.EID, " "), PeerHost: g.Server.Host,
		MaxLinks: g.MaxLinks, MaxConns: g.MaxConns, Direct: g.Direct,
		Links: []LinkRow{}, History: []Event{}, Findings: wf.groups[g.ID],
	}
	if g.Server.OS != 0 {
		gr.PeerOS = decode.OSTypeName(g.Server.OS)
	}
	if g.Deleted {
		gr.DeleteReason = deleteReason(g.DeleteCode)
	}
	name := "link group " + lgrName(gr)
	var evs []Event
	ev := func(kind EventKind, h *track.LinkEvent, text string) Event {
		return Event{Time: h.Time, Kind: kind, Source: EventFromWire, Frame: h.Frame, LGR: gr.Key, Link: h.Link, Text: text}
	}
	if !g.Start.IsZero() {
		evs = append(evs, Event{Time: g.Start, Kind: EventLGRCreated, Source: EventFromWire, Frame: g.FirstFrame, LGR: gr.Key,
			Text: fmt.Sprintf("SMC-R %s created (v%d)", name, g.Version)})
	}
	seen := map[int]bool{} // frames already in the history: one LLC message is on two links
	groupDeleted := false
	active := 0
	for _, id := range g.Links {
		l := links[id]
		if l == nil {
			continue
		}
		lr, ok := wireLink(l, openLink[l.ID])
		lr.Findings = wf.links[l.ID]
		if ok {
			if lr.Active {
				active++
			}
			gr.Links = append(gr.Links, lr)
		}
		down := false
		for i := range l.History {
			h := &l.History[i]
			switch {
			case h.Kind == track.LinkEventConfirmLink && h.Resp:
				evs = append(evs, ev(EventLinkUp, h, fmt.Sprintf("%s link %d up (CONFIRM_LINK completed)", name, h.Link)))
			case h.Kind == track.LinkEventRejectNew:
				evs = append(evs, ev(EventLinkRejected, h, fmt.Sprintf("%s: ADD_LINK of link %d rejected", name, h.Link)))
			case (h.Kind == track.LinkEventDeleteLink || h.Kind == track.LinkEventDeleteOther) && h.All:
				if !groupDeleted {
					groupDeleted = true
					e := ev(EventLGRDeleted, h, fmt.Sprintf("SMC-R %s deleted (DELETE_LINK all): %s", name, reasonText(deleteReason(h.Reason))))
					e.Link = 0
					evs = append(evs, e)
				}
			case (h.Kind == track.LinkEventDeleteLink && h.Link == l.LinkID || h.Kind == track.LinkEventDeleteOther) && !h.Resp:
				// The request names the link; retransmissions and the
				// response repeat it.
				if !down {
					down = true
					evs = append(evs, ev(EventLinkDown, h, fmt.Sprintf("%s link %d deleted: %s", name, h.Link, reasonText(deleteReason(h.Reason)))))
				}
			}
			if groupLevel(h.Kind) && !seen[h.Frame] {
				seen[h.Frame] = true
				gr.History = append(gr.History, ev(historyKind(h), h, h.What))
			}
		}
	}
	gr.Redundant = active >= 2
	sort.SliceStable(gr.History, func(i, j int) bool { return gr.History[i].Frame < gr.History[j].Frame })
	return gr, evs
}

// groupLevel keeps the link events that change a group's shape in its
// history; rkey traffic and TEST_LINK stay with the link.
func groupLevel(k track.LinkEventKind) bool {
	switch k {
	case track.LinkEventConfirmRKey, track.LinkEventDeleteRKey, track.LinkEventLLC, track.LinkEventEarlier:
		return false
	}
	return true
}

func historyKind(h *track.LinkEvent) EventKind {
	switch h.Kind {
	case track.LinkEventConfirmLink:
		if h.Resp {
			return EventLinkUp
		}
	case track.LinkEventDeleteLink, track.LinkEventDeleteOther:
		if h.All {
			return EventLGRDeleted
		}
		return EventLinkDown
	case track.LinkEventRejectOn, track.LinkEventRejectNew:
		return EventLinkRejected
	}
	return EventSMC
}

// wireLink is the row of one tracked link; false for a link that never
// was one (its ADD_LINK was rejected).
func wireLink(l *track.Link, open int) (LinkRow, bool) {
	lr := LinkRow{
		ID: l.LinkID, Conns: uint32(open), UID: l.Client.UID, PeerUID: l.Server.UID,
		GID: gidText(l.Client.GID), PeerGID: gidText(l.Server.GID), QPN: l.Client.QPN, PeerQPN: l.Server.QPN,
		Packets: l.RC[0].Packets + l.RC[1].Packets, CDCs: l.RC[0].CDCs + l.RC[1].CDCs,
		Retransmit: l.RC[0].Retrans + l.RC[1].Retrans, PSNGaps: l.RC[0].PSNGaps + l.RC[1].PSNGaps,
		NAKs: l.RC[0].NAKs + l.RC[1].NAKs, RNRs: l.RC[0].RNRs + l.RC[1].RNRs,
	}
	confirmed := l.Inferred // set up before the capture
	for i := range l.History {
		if h := &l.History[i]; h.Kind == track.LinkEventConfirmLink && h.Resp {
			confirmed = true
		}
	}
	switch l.State {
	case track.LinkRejected:
		return lr, false
	case track.LinkUp, track.LinkUnknown: // unknown: set up before the capture, seen carrying traffic
		lr.State, lr.Active = LinkActive, true
	case track.LinkDeleted:
		if !confirmed {
			// Added, never confirmed, then deleted: neither kernel ever
			// listed it as a link of the group (the lab's multilink run:
			// link 3, an asymmetric ADD_LINK after the failover).
			return lr, false
		}
		lr.State, lr.DeleteReason = LinkDeleted, deleteReason(l.DeleteCode)
		for i := range l.History {
			h := &l.History[i]
			if h.Kind == track.LinkEventDeleteOther || h.Kind == track.LinkEventDeleteLink && (h.All || h.Link == l.LinkID) {
				lr.Since = h.Time
				break
			}
		}
	default: // confirming, adding, added: CONFIRM_LINK not completed
		lr.State = LinkActivating
	}
	return lr, true
}

// failoverEvents says when a connection moved to another link: the first
// failover-validation CDC (smc_cdc_msg_validate) in either direction.
func failoverEvents(c *track.Conn, r ConnRow, g *track.LinkGroup) []Event {
	var first *track.Flow
	for d := range c.Flow {
		f := &c.Flow[d]
		if f.Failover > 0 && (first == nil || f.FailoverFrame < first.FailoverFrame) {
			first = f
		}
	}
	if first == nil {
		return nil
	}
	e := Event{Time: first.FailoverTime(), Kind: EventFailover, Source: EventFromWire, Frame: first.FailoverFrame, Conn: r.Key, Link: r.LinkID,
		Text: fmt.Sprintf("%s failed over to link %d", r.Key, r.LinkID)}
	if g != nil {
		e.LGR = wireLGRKey(g.ID)
		e.Text = fmt.Sprintf("%s failed over to link %d of link group %s", r.Key, r.LinkID, LGRID(g.ClientLGRID))
	}
	return []Event{e}
}

// deleteReason names a DELETE_LINK reason (SMC_LLC_DEL_*).
func deleteReason(code uint32) Reason {
	r := decode.DeleteLinkReason(code)
	return Reason{Code: code, Name: r.String(), Meaning: r.Meaning()}
}

// gidText writes a GID as the kernel's SMC netlink does
// ("0000:0000:0000:0000:0000:ffff:0a0a:0001"), so a link's GIDs read the
// same from the wire and from the kernel.
func gidText(a netip.Addr) string {
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

// lgrName is how events name a group: its kernel ID, or its row key when
// the capture does not show the ID.
func lgrName(g LinkGroupRow) string {
	if g.ID != 0 {
		return g.ID.String()
	}
	return g.Key
}
