package track

import (
	"net/netip"
	"slices"
	"time"

	"github.com/smcscope/smcscope/expert"
)

// Snapshot is a copy of everything the tracker knows, safe to keep and to
// read while the tracker goes on.
type Snapshot struct {
	Stats      Stats
	Conns      []Conn
	Links      []Link
	LinkGroups []LinkGroup

	// End is the time of the capture's newest frame so far, or later
	// where the capture file records its end (Tracker.EndCapture).
	// Findings that are absences are decided at End.
	End time.Time
	// Ended: the capture has ended (Tracker.EndCapture); the steps
	// pending at End are findings (expert.EndedPending).
	Ended bool

	// steps: where the tracker's clock stood at a step back of the
	// capture's (Unmeasured).
	steps clockSteps

	// Mirrors are the mirror sessions whose sequence numbers skip:
	// frames they sent that the capture does not hold
	// (expert.MirrorLost).
	Mirrors []MirrorLoss

	folded folded // sums of what is not listed (Totals adds the rest)
	expert marks  // findings tied to no connection or link
	// carried: frames that carried a finding, by severity (Tracker.carried)
	carried [expert.Error + 1]int
}

// Snapshot copies the current state.
func (t *Tracker) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.snapshot()
}

func (t *Tracker) snapshot() Snapshot {
	s := Snapshot{
		Stats:      t.stats,
		Conns:      make([]Conn, len(t.conns)),
		Links:      make([]Link, len(t.links)),
		LinkGroups: make([]LinkGroup, len(t.lgrs)),
		folded:     t.folded,
		expert:     append(marks(nil), t.expert...),
		carried:    t.carried,
	}
	s.Ended = t.ended
	s.Mirrors = t.mirrors.losses()
	for i := range s.Mirrors {
		s.Stats.MirrorLost += s.Mirrors[i].Missing
	}
	for _, m := range t.mirrors.sessions {
		s.Stats.MirrorDamaged += m.damaged
	}
	s.steps = t.clock.steps.clone()
	end := max(t.lastNS, t.endNS)
	for _, l := range t.links {
		end = max(end, l.lastNS)
	}
	if end != 0 {
		s.End = time.Unix(0, end)
	}
	if t.folded.reasons != nil {
		s.folded.reasons = make(map[fallbackReason]int, len(t.folded.reasons))
		for k, v := range t.folded.reasons {
			s.folded.reasons[k] = v
		}
	}
	// carried: links the capture shows no packet of that SMC-R
	// connections ran on (below).
	var carried map[*Link]bool
	for i, c := range t.conns {
		x := *c
		x.CLCTypes = append([]uint8(nil), c.CLCTypes...)
		x.Timeline = append([]Event(nil), c.Timeline...)
		x.Merged = slices.Sorted(slices.Values(c.Merged))
		x.RolesUnknown = c.Inferred && (c.link == nil || c.link.Inferred)
		x.Last = time.Unix(0, c.lastNS)
		x.expert = append(marks(nil), c.expert...)
		if c.link != nil {
			x.LinkID = c.link.LinkID
		}
		if t.markUnseen(c, &x) {
			if carried == nil {
				carried = map[*Link]bool{}
			}
			carried[c.link] = true
		}
		x.lgr, x.link, x.stream = nil, nil, nil
		s.Conns[i] = x
	}
	for i, l := range t.links {
		x := *l
		x.Conns = append([]int(nil), l.Conns...)
		x.History, x.hist = nil, nil
		if len(l.hist) > 0 {
			x.History = make([]LinkEvent, len(l.hist))
			for i := range l.hist {
				x.History[i] = l.hist[i].linkEvent()
			}
		}
		for d := range x.RC {
			x.RC[d].recent, x.RC[d].curWrite, x.RC[d].pend, x.RC[d].kept = [16]psnConn{}, nil, nil, nil
			x.RC[d].lastFirst = writeSpan{}
		}
		x.groupOneWay = l.oneWay()
		if l.State == LinkConfirming && carried[l] {
			// Its connections are SMC-R from their TCP streams (above):
			// up, in a state the capture does not show.
			x.State = LinkUnknown
		}
		x.lgr, x.conns, x.history, x.rkeys = nil, nil, nil, [2]map[uint32]rmbRef{}
		x.Last = time.Unix(0, l.lastNS)
		x.expert = append(marks(nil), l.expert...)
		s.Links[i] = x
	}
	for i, g := range t.lgrs {
		x := *g
		x.Links = append([]int(nil), g.Links...)
		x.Conns = append([]int(nil), g.Conns...)
		// Only what the views show: gone points at folded links that the
		// tracker recycles.
		x.links, x.conns, x.tokens, x.pendingRKeys, x.gone = nil, nil, [2]map[uint32]*Conn{}, nil, nil
		x.expert = append(marks(nil), g.expert...)
		s.LinkGroups[i] = x
	}
	return s
}

// markUnseen sets in x, the snapshot of c, what the capture does not show
// of it: its outcome, when a link no packet of which is in the capture
// has carried it since its Confirm for longer than Linux waits before it
// declines (failPending decides the same at the TCP close); its data,
// LinkNotCaptured and both flows NotShown, when it ran SMC-R on such a
// link or on none the capture ties it to (a capture of one direction
// lacks the peer's CLC half, and its CDCs' tokens are the peer's), and
// no CDC of it came from elsewhere (ANCK's dump device); one flow
// NotShown when its link group's capture holds one side only, or when
// the connection, placed from one side's CLC message, lacks the token
// that direction's CDCs carry. It reports
// whether c ran on a link the capture shows no packet of.
func (t *Tracker) markUnseen(c, x *Conn) (unseenLink bool) {
	if c.awaitsUnseenLink() && !c.TConfirm.IsZero() && t.lastNS-c.TConfirm.UnixNano() >= int64(llcWaitFirst) {
		// Frames after the Confirm, not a recorded end alone, tell
		// that the capture went on.
		x.Outcome, x.AwaitingLink = OutcomeSMCR, false
	}
	if c.Flow[0].CDCs == 0 && c.Flow[1].CDCs == 0 {
		switch l := c.link; {
		case l != nil:
			unseenLink = x.Outcome == OutcomeSMCR && !l.Shown()
			x.LinkNotCaptured = unseenLink
		default:
			x.LinkNotCaptured = x.Outcome == OutcomeSMCR || x.Outcome == OutcomePending && c.clcUncaptured
		}
	}
	switch {
	case x.LinkNotCaptured:
		x.Flow[0].NotShown, x.Flow[1].NotShown = true, true
	case c.link != nil && c.link.lgr != nil:
		if n := c.link.lgr.sent(); (n[0] == 0) != (n[1] == 0) {
			for d := range x.Flow {
				x.Flow[d].NotShown = n[d] == 0
			}
		}
	}
	dumped := c.Flow[0].Dumped+c.Flow[1].Dumped > 0
	if t.dumpers != nil && (x.Outcome == OutcomeSMCR || dumped) && (c.link == nil || !c.link.Shown()) {
		// Followed from ANCK's dump device (its link, if the handshake
		// named one, not on the wire; its handshake maybe not followed
		// to its end), which copies its own host's CDCs: a direction
		// from a host whose dump the capture lacks.
		for d, from := range [2]netip.Addr{c.Client.Addr(), c.Server.Addr()} {
			if c.Flow[d].CDCs == 0 && !t.dumpers[from] {
				x.Flow[d].NotShown = true
			}
		}
	}
	if c.halfPlaced {
		// Placed from one side's CLC message: a direction whose token
		// the capture never gave it (its first CDC not told apart from
		// another connection's, claimFirst) has its CDCs on the
		// connection joined from them, not none.
		for d := range x.Flow {
			if !c.hasTok[d] && c.Flow[d].CDCs == 0 {
				x.Flow[d].NotShown = true
			}
		}
	}
	return unseenLink
}

// Stats returns the frame counters.
func (t *Tracker) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

// Conn returns a copy of the connection with tracker ID id.
func (s *Snapshot) Conn(id int) (Conn, bool) {
	for _, c := range s.Conns {
		if c.ID == id {
			return c, true
		}
	}
	return Conn{}, false
}

// FoldedFallback counts the fallbacks of folded connections with one
// reason: cause, decline code (CauseDecline) and the side that declined.
// Other collects what is beyond MaxFoldedReasons distinct reasons.
type FoldedFallback struct {
	Cause FallbackCause
	Code  uint32
	By    Dir
	Other bool
	Count int
}

// FoldedFallbacks counts the fallbacks of the connections folded into
// the totals, by reason, in no particular order.
func (s *Snapshot) FoldedFallbacks() []FoldedFallback {
	out := make([]FoldedFallback, 0, len(s.folded.reasons))
	for k, n := range s.folded.reasons {
		out = append(out, FoldedFallback{Cause: k.cause, Code: k.code, By: k.by, Other: k == reasonOther, Count: n})
	}
	return out
}

// SteppedWithin reports whether the capture's clock stepped back at a
// frame after frame from, up to frame to: the time between the two frames
// lacks the time that passed across the step (as Unmeasured, by frames).
func (s *Snapshot) SteppedWithin(from, to int) bool { return s.steps.withinFrames(from, to) }

// Unmeasured reports whether the time from from to to is not known: the
// capture's clock stepped back between them (expert.TimeBackwards), and
// the tracker's clock stood there, so their difference lacks the time
// that passed across the step. A duration between them is a lower
// bound, not a measure.
func (s *Snapshot) Unmeasured(from, to time.Time) bool {
	if from.IsZero() || to.IsZero() {
		return false
	}
	return s.steps.between(from.UnixNano(), to.UnixNano())
}
