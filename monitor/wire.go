package monitor

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// Wire runs the decoders and the tracker over a capture file or a live
// interface, beside (or instead of) the kernel's view: queue pairs, CDC
// rates, retransmissions and PSN gaps per link, which the kernel does not
// expose. A file replay can be paused, stepped, moved forward and back in
// capture time, and restarted (the dashboard's replay keys).
type Wire struct {
	ctx    context.Context // OpenWireContext's
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
	at    time.Time
	err   error
	done  bool
	ended bool   // Ended
	note  string // Note
	// Replay control (files only).
	hold   bool      // at the end, wait for a restart instead of returning
	paused bool      // no frame is read
	until  time.Time // read without pacing up to this capture time (seek, step)
	// ahead is a step or seek asked for before the first frame: until is
	// then the first frame's time plus ahead.
	ahead   time.Duration
	restart bool // reopen the file at the next frame
	gen     int  // restarts so far: the tracker and frame numbers began again
	// next is the frame Advance read and did not feed (past its step).
	next *capture.Frame
}

// OpenWire opens a capture file (path) or a live interface (iface, with
// an optional capture filter). speed paces a file by its timestamps (1 =
// real time, 10 = ten times faster); 0 reads it as fast as possible.
func OpenWire(path, iface, filter string, speed float64) (*Wire, error) {
	return OpenWireContext(context.Background(), path, iface, filter, speed)
}

// OpenWireContext is OpenWire whose reads of a FIFO or pipe, which wait
// for their writer in the kernel, end when ctx does: the replay then
// stops where it stands, as at a capture's end, without an error.
func OpenWireContext(ctx context.Context, path, iface, filter string, speed float64) (*Wire, error) {
	w := &Wire{ctx: ctx, name: path, path: path, filter: filter, live: iface != "", speed: speed, wake: make(chan struct{}, 1)}
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
	} else if r, err = capture.OpenContext(w.ctx, w.path); err != nil && w.ctx.Err() != nil {
		// Stopped before the header was whole: nothing was read, a
		// replay of no frames.
		r, err = capture.NoFrames(w.path), nil
	}
	if err != nil {
		return nil, err
	}
	// The tracker reads the layers itself; no field record is needed,
	// but what every tracker reads besides (the ICRC verdict) is.
	r.SetFieldDemand(track.FieldDemand())
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
			if w.readOnce() {
				return
			}
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

// Restart replays the file from its first frame. A FIFO or stdin is
// read once: Restart then leaves the replay as it is and says so (Note).
func (w *Wire) Restart() {
	w.control(func() {
		if w.readOnce() {
			return
		}
		w.restart, w.until = true, time.Time{}
	})
}

// readOnce reports whether the replay's input cannot be read again (a
// FIFO or stdin: a second open would wait for a writer that has gone, and
// hold w.mu meanwhile), noting it for the status line (w.mu held).
func (w *Wire) readOnce() bool {
	if w.live || !w.r.Waits() {
		return false
	}
	w.note = "read once: no restart"
	return true
}

// Note is what the replay has to say besides its progress: a control
// it could not follow.
func (w *Wire) Note() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.note
}

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
				if w.ctx.Err() != nil {
					// Stopped waiting on a pipe's writer: the capture
					// did not end, and nothing failed.
				} else if err != io.EOF {
					w.err = err
				} else if w.r == r {
					// The replay read its file to the end: what was
					// pending there is a finding (expert.EndedPending).
					end, _, _ := r.Recorded()
					w.tr.EndCapture(end)
					w.ended = true
					// Read to its end past damage: the file's error
					// all the same (capture.Reader.Damage).
					w.err = r.Damage()
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
	w.frames, w.last, w.at, w.err, w.done, w.restart, w.ended = 0, time.Time{}, time.Time{}, nil, false, false, false
	w.gen++
	return nil
}

// Advance reads at once the frames of the next d of capture time (from
// the first frame's time on the first call, then from where the previous
// call stopped) and reports whether the capture ended, with the read
// error that ended it. It reads a file replay in steps of capture time
// instead of Run (smctop --count -r: one snapshot per interval of the
// capture); the two are not used on one Wire.
func (w *Wire) Advance(d time.Duration) (ended bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var until time.Time
	if !w.at.IsZero() {
		until = w.at.Add(d)
	}
	for !w.done {
		if w.next == nil {
			f, err := w.r.Next()
			if err != nil {
				w.done = true
				if err == io.EOF {
					w.ended = true
					w.err = w.r.Damage()
				} else if w.ctx.Err() == nil { // not OpenWireContext's stop
					w.err = err
				}
				break
			}
			w.next = f
		}
		ts := w.next.CI.Timestamp
		if until.IsZero() {
			until = ts.Add(d)
		}
		if ts.After(until) {
			w.at = until
			return false, nil
		}
		w.tr.Feed(w.next)
		w.next = nil
		w.frames++
		w.last = ts
		if ts.After(w.at) {
			w.at = ts
		}
	}
	return true, w.err
}

// Ended reports whether a file replay read its capture to the end (not
// stopped before it, by its context or a read error).
func (w *Wire) Ended() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
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

// Snapshot copies the tracker's state. A live capture's tracker first
// follows what it held for frames that can no longer come (track's
// Settle): a capture that goes quiet is shown whole.
func (w *Wire) Snapshot() track.Snapshot {
	w.mu.Lock()
	tr, live := w.tr, w.live
	w.mu.Unlock()
	if live {
		tr.Settle(time.Now())
	}
	return tr.Snapshot()
}

// wireView is the dashboard's reading of one tracker snapshot: its rows
// and every event the capture shows so far. It copies the rows package's
// rows (the ones smcdump's views show) into the dashboard's; a capture is
// seen from the client (LOCAL is the client, the client's link-group ID,
// the client's own decline reason).
type wireView struct {
	conns  []ConnRow
	groups []LinkGroupRow
	events []Event
	// fallbacks counts the capture's fallbacks by side and local reason,
	// as each side's kernel counts them (SMC_NETLINK_GET_FBACK_STATS).
	fallbacks []ReasonCount
	success   int // connections that became SMC-R or SMC-D in the capture
	joined    int // SMC connections the capture joined after their handshake
	// findings are the capture's expert findings as events, one per
	// finding and object (Monitor.wire logs each once), and expert their
	// counts over the whole capture.
	findings []Event
	expert   []ExpertCount
	totals   WireTotals
}

// wireFindings files the snapshot's findings by the object they are on,
// as rows show them, and makes an event of each.
type wireFindings struct {
	conns  map[int][]Finding
	links  map[int][]Finding // by tracker link ID
	groups map[int][]Finding
	events []Event
}

// wireNames names the capture's link groups and links as every row and
// event does.
type wireNames struct {
	groups map[int]*LinkGroupRow // by tracker ID
	links  map[int]*rows.Link    // by tracker ID
}

func readFindings(s *track.Snapshot, n *wireNames) wireFindings {
	w := wireFindings{conns: map[int][]Finding{}, links: map[int][]Finding{}, groups: map[int][]Finding{}}
	for _, f := range s.Findings() {
		d := f.ID.Def()
		row := Finding{ID: FindingID(f.ID), Severity: Severity(d.Severity), Count: f.Count, First: f.First, Last: f.Last, Detail: f.Detail}
		e := Event{Time: f.FirstTime, Kind: EventExpert, Source: EventFromWire, Frame: f.First, Finding: row.ID, Severity: row.Severity}
		what := "the capture"
		switch f.Object {
		case expert.ObjectConn:
			w.conns[f.ObjectID] = append(w.conns[f.ObjectID], row)
			e.Conn = wireConnKey(f.ObjectID)
			what = e.Conn
		case expert.ObjectLink:
			w.links[f.ObjectID] = append(w.links[f.ObjectID], row)
			if l := n.links[f.ObjectID]; l != nil {
				e.LGR, e.Link = WireLGRKey(l.LGR), l.LinkID
				what = fmt.Sprintf("link %s of link group %s", track.LinkName(l.LinkID, l.Facts.ClientQPN, l.Facts.ServerQPN), n.group(l.LGR))
			}
		case expert.ObjectLGR:
			w.groups[f.ObjectID] = append(w.groups[f.ObjectID], row)
			e.LGR = WireLGRKey(f.ObjectID)
			what = "link group " + n.group(f.ObjectID)
		}
		e.Text = fmt.Sprintf("%s %s on %s: %s", row.Severity, d.Name, what, d.Meaning)
		if f.Detail != "" {
			e.Text += " (" + f.Detail + ")"
		}
		w.events = append(w.events, e)
	}
	return w
}

// group names a tracked group as its row does (LinkGroupRow.Name).
func (n *wireNames) group(id int) string {
	if g := n.groups[id]; g != nil {
		return g.Name()
	}
	return "-"
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
			out = append(out, ExpertCount{ID: FindingID(id), Severity: Severity(d.Severity), Source: FindingSource(src), Count: count(d)})
		}
	}
	return out
}

func wireConnKey(id int) string { return "wire:" + strconv.Itoa(id) }

// WireLGRKey is the key of link group id of a capture (the tracker's
// number), as smctop's rows, events and lgr label write it.
func WireLGRKey(id int) string { return "wire-lgr:" + strconv.Itoa(id) }

func readWire(s *track.Snapshot) wireView {
	var v wireView
	lgrs := rows.LGRRows(s)
	names := wireNames{groups: make(map[int]*LinkGroupRow, len(lgrs)), links: map[int]*rows.Link{}}
	tracked := make(map[int]*track.LinkGroup, len(s.LinkGroups))
	for i := range s.LinkGroups {
		tracked[s.LinkGroups[i].ID] = &s.LinkGroups[i]
	}
	v.groups = make([]LinkGroupRow, len(lgrs))
	for i := range lgrs {
		v.groups[i] = wireGroup(tracked[lgrs[i].ID], &lgrs[i])
		names.groups[lgrs[i].ID] = &v.groups[i]
		for j := range lgrs[i].LinkRows {
			names.links[lgrs[i].LinkRows[j].ID] = &lgrs[i].LinkRows[j]
		}
	}
	wf := readFindings(s, &names)
	v.findings, v.expert, v.totals = wf.events, wireExpert(s), wireTotals(s)
	fb := map[[3]uint32]int{} // (side, local reason, ANCK handshake) -> count
	conns := rows.ConnRows(s)
	for i := range s.Conns {
		c, cr := &s.Conns[i], &conns[i]
		r := wireConn(c, cr, names.groups[c.LGR], names.links[c.Link])
		r.ConnDetail.Findings = wf.conns[c.ID]
		if r.State != StateClosed && names.groups[c.LGR] != nil {
			names.groups[c.LGR].Conns++
		}
		switch {
		case !r.Mode.SMC():
		case c.Inferred:
			v.joined++
		default:
			v.success++
		}
		if r.Mode == ModeFallback {
			client, server := fallbackSides(&c.Fallback)
			anck := uint32(0)
			if c.Fallback.ANCK {
				anck = 1
			}
			if client.reason != 0 {
				fb[[3]uint32{0, client.reason, anck}]++
			}
			if server.reason != 0 {
				fb[[3]uint32{1, server.reason, anck}]++
			}
			v.events = append(v.events, Event{Time: c.Fallback.Time, Kind: EventFallback, Source: EventFromWire, Frame: c.Fallback.Frame,
				Conn: r.Key, Text: fmt.Sprintf("%s %s -> %s fell back to TCP: %s", r.Key, endpoint(r.Src), endpoint(r.Dst), cr.Detail)})
		}
		v.conns = append(v.conns, r)
	}
	for k, n := range fb {
		side := RoleClient
		if k[0] == 1 {
			side = RoleServer
		}
		v.fallbacks = append(v.fallbacks, ReasonCount{Side: side, Reason: reasonIn(k[1], k[2] == 1), Count: uint64(n)})
	}
	sort.Slice(v.fallbacks, func(i, j int) bool {
		a, b := v.fallbacks[i], v.fallbacks[j]
		if a.Side != b.Side {
			return a.Side < b.Side
		}
		return a.Reason.Code < b.Reason.Code
	})
	for i := range lgrs {
		g := &v.groups[i]
		g.Findings = wf.groups[lgrs[i].ID]
		for j := range g.Links {
			g.Links[j].Findings = wf.links[g.linkIndex[j]]
		}
		g.linkIndex = nil
		v.events = append(v.events, groupEvents(tracked[lgrs[i].ID], &lgrs[i], g)...)
	}
	return v
}

// wireTotals counts what the capture shows of the kernels' statistics,
// folded connections included (track.Snapshot.Totals): a counter never
// goes down when the tracker folds what it no longer lists.
func wireTotals(s *track.Snapshot) WireTotals {
	t := s.Totals().Conns
	w := WireTotals{SMCRSuccess: uint64(t.Outcomes[track.OutcomeSMCR.String()]), SMCDSuccess: uint64(t.Outcomes[track.OutcomeSMCD.String()]),
		SMCRRxBytes: t.S2C.Bytes, SMCRTxBytes: t.C2S.Bytes}
	count := func(fb *track.Fallback, n int) {
		client, server := fallbackSides(fb)
		if client.fell {
			w.ClientFallbacks += uint64(n)
		}
		if server.fell {
			w.ServerFallbacks += uint64(n)
		}
	}
	for i := range s.Conns {
		if c := &s.Conns[i]; c.Outcome == track.OutcomeFallback {
			count(&c.Fallback, 1)
		}
	}
	for _, f := range s.FoldedFallbacks() {
		if f.Other {
			// Reasons beyond the tracker's cap: the client fell back in
			// every case; who declined is not kept.
			w.ClientFallbacks += uint64(f.Count)
			continue
		}
		count(&track.Fallback{Cause: f.Cause, Code: f.Code, By: f.By}, f.Count)
	}
	return w
}

// sideFallback is what one side's kernel counts of a fallback: whether
// it fell back, and its local reason (smc_sock fallback_rsn), 0 where the
// capture does not hold it.
type sideFallback struct {
	fell   bool
	reason uint32
}

// fallbackSides says what each side's kernel counts of a fallback: the
// side that declined falls back with its own code, the other with
// SMC_CLC_DECL_PEERDECL (smc_clc_wait_msg); a client whose SYN-ACK had no
// SMC option with SMC_CLC_DECL_PEERNOSMC, its server not at all (it never
// spoke SMC); a fallback whose Decline the capture missed, both sides
// (the one that declined, and its peer), for a reason the capture does
// not hold; one whose Decline's code the snap length cut, the side that
// declined for a reason the capture does not hold.
func fallbackSides(fb *track.Fallback) (client, server sideFallback) {
	switch fb.Cause {
	case track.CauseDecline, track.CauseDeclineCut:
		// (A cut Decline's Code is 0: no reason held.)
		declined, peer := sideFallback{true, fb.Code}, sideFallback{true, uint32(decode.DeclinePeerDecl)}
		if fb.By == track.DirC2S {
			return declined, peer
		}
		return peer, declined
	case track.CauseNoOptionSYNACK:
		return sideFallback{true, uint32(decode.DeclinePeerNoSMC)}, sideFallback{}
	case track.CauseUncaptured:
		return sideFallback{fell: true}, sideFallback{fell: true}
	}
	return sideFallback{}, sideFallback{}
}

// wireModes are the rows package's modes by the dashboard's spelling.
var wireModes = [...]Mode{rows.ModePending: ModePending, rows.ModeSMCR: ModeSMCR, rows.ModeSMCD: ModeSMCD,
	rows.ModeFallback: ModeFallback, rows.ModeFailed: ModeFailed}

// wireConn is the row of one tracked connection, seen from the client:
// cr, its smc,conns row, with the group and link rows it is on.
func wireConn(c *track.Conn, cr *rows.Conn, g *LinkGroupRow, l *rows.Link) ConnRow {
	r := ConnRow{
		Key: wireConnKey(c.ID), Source: SourceWire, Src: c.Client, Dst: c.Server,
		RxBytes: c.Flow[track.DirS2C].Bytes, TxBytes: c.Flow[track.DirC2S].Bytes,
		RateUnknown: true, // until a refresh measures it (Monitor.carry)
		Mode:        wireModes[cr.Mode], ConnLink: &ConnLink{Role: RoleClient, LinkID: cr.Link},
		ConnDetail: &ConnDetail{Detail: cr.Detail, Notes: cr.Notes(), Start: c.Start},
		RxUnknown:  cr.Srv2Client.NotShown || cr.Srv2Client.BytesUnknown,
		TxUnknown:  cr.Client2Srv.NotShown || cr.Client2Srv.BytesUnknown,
	}
	if c.RolesUnknown {
		r.ConnLink.Role = "" // which end is the client is not on the wire
	}
	// The client's token and both RMBE sizes are on the wire only in the
	// CLC Accept and Confirm: without them they are absent, not 0.
	if c.ClientEP.Valid {
		r.Token, r.RMBE = c.ClientEP.Token, c.ClientEP.RMBESize
	}
	if c.ServerEP.Valid {
		r.PeerRMBE = c.ServerEP.RMBESize
	}
	switch {
	case cr.Ended:
		r.State = StateClosed
	case r.Mode == ModePending:
		r.State = StateInit
	default:
		r.State = StateActive
	}
	if c.Outcome == track.OutcomeFallback {
		client, _ := fallbackSides(&c.Fallback)
		r.ConnDetail.Fallback = reasonIn(client.reason, c.Fallback.ANCK)
		if c.Fallback.Cause == track.CauseDecline && c.Fallback.By == track.DirS2C {
			r.ConnDetail.PeerDiagnosis = reasonIn(c.Fallback.Code, c.Fallback.ANCK)
		}
	}
	for _, st := range rows.Steps(c) {
		r.ConnDetail.Handshake = append(r.ConnDetail.Handshake, Step{Time: st.Time, What: st.What})
	}
	if g != nil {
		r.ConnLink.LGRID, r.ConnLink.LGRKey = g.ID, g.Key
	}
	if l != nil {
		r.ConnLink.GID, r.ConnLink.PeerGID = l.Facts.ClientGID, l.Facts.ServerGID
	}
	return r
}

// wireGroup is the row of one tracked link group with its links: gr,
// its smc,lgr row, and g, the group's typed facts.
func wireGroup(g *track.LinkGroup, gr *rows.LGR) LinkGroupRow {
	r := LinkGroupRow{
		Key: WireLGRKey(g.ID), Source: SourceWire, ID: LGRID(g.ClientLGRID), PeerID: LGRID(g.ServerLGRID),
		Kind: ModeSMCR, Role: RoleClient, Deleted: gr.GroupState == rows.GroupEnded,
		Version: g.Version, Release: g.Release, EID: strings.TrimRight(g.EID, " "), PeerHost: g.Server.Host,
		MaxLinks: g.MaxLinks, MaxConns: g.MaxConns, Direct: g.Direct, ANCK: gr.ANCK,
		Links: []LinkRow{}, History: []Event{},
	}
	if g.Server.OS != 0 {
		r.PeerOS = decode.OSTypeName(g.Server.OS)
	}
	if gr.RolesUnknown {
		// Joined mid-stream with no CLC or LLC to tell: which host is the
		// client is not on the wire.
		r.Role = ""
	}
	if r.Deleted {
		r.DeleteReason, r.DeleteReasonNotCaptured = deleteReason(g.DeleteCode, g.DeleteKnown), !g.DeleteKnown
	}
	active := 0
	for i := range gr.LinkRows {
		l := &gr.LinkRows[i]
		lr, ok := wireLink(l)
		if !ok {
			continue
		}
		if lr.Active {
			active++
		}
		r.Links = append(r.Links, lr)
		r.linkIndex = append(r.linkIndex, l.ID)
	}
	r.Redundant = active >= 2
	r.RedundancyUnknown = !r.Redundant && !gr.LinksKnown
	for i := range gr.Events {
		e := &gr.Events[i]
		r.History = append(r.History, Event{Time: e.Time, Kind: historyKinds[e.Kind], Source: EventFromWire, Frame: e.Frame,
			LGR: r.Key, Link: e.Link, Conn: failoverConn(e), Text: e.What})
	}
	return r
}

func failoverConn(e *rows.GroupEvent) string {
	if e.Kind == rows.GroupFailover {
		return wireConnKey(e.Conn)
	}
	return ""
}

// historyKinds are the event kinds of a group's steps.
var historyKinds = [...]EventKind{
	rows.GroupLinkAnnounced: EventSMC, rows.GroupLinkConfirm: EventSMC, rows.GroupLinkUp: EventLinkUp,
	rows.GroupLinkAdd: EventSMC, rows.GroupLinkRejected: EventLinkRejected, rows.GroupLinkDeleted: EventLinkDown,
	rows.GroupDeleted: EventLGRDeleted, rows.GroupMerged: EventSMC, rows.GroupFailover: EventFailover,
}

// versionNote is " (vN)" for the SMC version a group's handshake agreed,
// "" when the capture did not show it.
func versionNote(v uint8) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf(" (v%d)", v)
}

// groupEvents are the events of a group's life for the log: its
// creation, and each change its history shows (rows.GroupEvent.Change).
func groupEvents(g *track.LinkGroup, gr *rows.LGR, r *LinkGroupRow) []Event {
	name := "link group " + r.Name()
	var evs []Event
	switch {
	case g.Start.IsZero():
	case gr.Inferred:
		// Its first frame is where the capture joined it, not its start.
		evs = append(evs, Event{Time: g.Start, Kind: EventLGRSeen, Source: EventFromWire, Frame: g.FirstFrame, LGR: r.Key,
			Text: fmt.Sprintf("SMC-R %s first seen: set up before the capture began", name)})
	default:
		evs = append(evs, Event{Time: g.Start, Kind: EventLGRCreated, Source: EventFromWire, Frame: g.FirstFrame, LGR: r.Key,
			Text: fmt.Sprintf("SMC-R %s created%s", name, versionNote(g.Version))})
	}
	for i := range gr.Events {
		e := &gr.Events[i]
		if !e.Change {
			continue
		}
		ev := Event{Time: e.Time, Kind: historyKinds[e.Kind], Source: EventFromWire, Frame: e.Frame, LGR: r.Key, Link: e.Link}
		link := rows.LinkName(e.Link)
		switch e.Kind {
		case rows.GroupLinkUp:
			ev.Text = fmt.Sprintf("%s link %s up (CONFIRM_LINK completed)", name, link)
		case rows.GroupLinkRejected:
			ev.Text = fmt.Sprintf("%s: ADD_LINK of link %s rejected", name, link)
		case rows.GroupDeleted:
			ev.Link = 0
			ev.Text = fmt.Sprintf("SMC-R %s deleted (DELETE_LINK all): %s", name, eventReason(&e.LLC))
		case rows.GroupLinkDeleted:
			ev.Text = fmt.Sprintf("%s link %s deleted: %s", name, link, eventReason(&e.LLC))
		case rows.GroupFailover:
			ev.Conn = wireConnKey(e.Conn)
			ev.Text = fmt.Sprintf("%s failed over to link %s of %s", ev.Conn, link, name)
		default:
			continue
		}
		evs = append(evs, ev)
	}
	return evs
}

// wireLink is the row of one tracked link; false for a link that never
// was one for the kernels (rows.LinkFacts.Existed: added and never
// confirmed, or rejected; the lab's multilink run has one, link 3, an
// asymmetric ADD_LINK after the failover).
func wireLink(l *rows.Link) (LinkRow, bool) {
	f := &l.Facts
	if !f.Existed {
		return LinkRow{}, false
	}
	lr := LinkRow{
		ID: l.LinkID, Conns: uint32(f.Open), UID: LinkUID(f.ClientUID), PeerUID: LinkUID(f.ServerUID),
		GID: f.ClientGID, PeerGID: f.ServerGID, QPN: f.ClientQPN, PeerQPN: f.ServerQPN,
		Packets: f.Packets, CDCs: f.CDCs, Retransmit: f.Retrans, PSNGaps: f.PSNGaps, NAKs: f.NAKs, RNRs: f.RNRs,
		Credits: l.Credits,
	}
	switch {
	case f.Silent: // set up before the capture, nothing shows it working
		lr.State = LinkNotKnown
	case f.State == track.LinkUp, f.State == track.LinkUnknown: // unknown: set up before the capture, seen working
		lr.State, lr.Active = LinkActive, true
	case f.State == track.LinkDeleted:
		lr.State, lr.DeleteReason, lr.Since = LinkDeleted, deleteReason(f.DeleteCode, f.DeleteKnown), f.Deleted
		lr.DeleteReasonNotCaptured = !f.DeleteKnown
		if f.WithGroup {
			// Ended with its group: not lost from a group that goes on.
			lr.State = LinkInactive
		}
	default: // confirming, adding, added: CONFIRM_LINK not completed
		lr.State = LinkActivating
	}
	return lr, true
}

// deleteReason names a DELETE_LINK reason (SMC_LLC_DEL_*).
// eventReason is the reason a DELETE_LINK event gives, in an event's words.
func eventReason(e *track.LinkEvent) string {
	if !e.ReasonKnown() {
		return track.ReasonNotCaptured
	}
	return reasonText(deleteReason(e.Reason, true))
}

// ReasonNotCaptured is what a screen says of a deletion whose reason the
// capture does not hold (DeleteReasonNotCaptured), in the tracker's words.
const ReasonNotCaptured = track.ReasonNotCaptured

func deleteReason(code uint32, known bool) Reason {
	if !known {
		return Reason{}
	}
	r := decode.DeleteLinkReason(code)
	return Reason{Code: code, Name: r.String(), Meaning: r.Meaning()}
}

// WireSnapshot is what smctop shows of one tracker snapshot of a capture
// replayed without the kernel: the connections, link groups, fallback
// counts, events (findings included) and expert counts that Refresh adds
// from its wire source. It is how smctop's view of a capture is held to
// smcdump's (internal/agree).
func WireSnapshot(s *track.Snapshot) Snapshot {
	v := readWire(s)
	out := Snapshot{Conns: v.conns, LinkGroups: v.groups, Fallbacks: v.fallbacks, Expert: v.expert, WireTotals: &v.totals}
	// Every event, in time order: the log's cap (maxEvents) is the
	// dashboard's, not the capture's.
	out.Events = append(v.events, v.findings...)
	sort.SliceStable(out.Events, func(i, j int) bool { return out.Events[i].Time.Before(out.Events[j].Time) })
	out.nonNil()
	return out
}
