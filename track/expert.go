package track

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/numfmt"
)

// Expert analysis: the findings of package expert's catalogue that the
// wire shows, computed from the typed model. Where a finding is an event
// (a sequence gap, a NAK, a DELETE_LINK), the branch that handles the
// event raises it: the frame then carries it (smc.expert.* fields), and
// its object (connection, link, link group) marks it with first and last
// frame and a count. Where it is the absence of something (an LLC request
// without response, a first link never confirmed, a consumer that stops
// reading), it is decided later, from the times the model keeps, and it
// names the frame that waited; no frame carries it in -Y, which sees each
// frame once, when it goes by. Every raising branch is off the fast path
// (fastRoCE steps aside for each such frame), so following the steady
// stream costs nothing more.

const (
	// slowHandshake: a CLC handshake from Proposal to Confirm (or
	// Decline) longer than this is worth a note. Linux waits up to
	// CLC_WAIT_TIME (6 s, net/smc/smc_clc.h) for each message; the lab's
	// emulated guests take 15-70 ms.
	slowHandshake = 500 * time.Millisecond
	// llcWait is how long Linux waits for an LLC response
	// (SMC_LLC_WAIT_TIME, 2 s, net/smc/smc_llc.h) before it gives up on
	// the flow (and, for TEST_LINK, takes the link down).
	llcWait = 2 * time.Second
	// stallAfter: a peer RMBE that stays full for this long means its
	// reader stopped consuming, not just that a bulk sender outran it.
	stallAfter = 500 * time.Millisecond
)

// mark is where one finding was seen on one object.
type mark struct {
	id              expert.ID
	count           int
	first, last     int // frames
	firstNS, lastNS int64
	text            string // a detail known when it was first raised
}

// marks are an object's findings, one mark per finding (a few at most).
type marks []mark

// add counts one more occurrence of id at frame n.
func (ms *marks) add(id expert.ID, n int, ns int64, text string) {
	for i := range *ms {
		if m := &(*ms)[i]; m.id == id {
			m.count++
			if n < m.first { // decided late (an unanswered request)
				m.first, m.firstNS = n, ns
			}
			if n > m.last {
				m.last, m.lastNS = n, ns
			}
			return
		}
	}
	*ms = append(*ms, mark{id: id, count: 1, first: n, last: n, firstNS: ns, lastNS: ns, text: text})
}

// unmark takes back one occurrence of finding id (a frame later ones
// showed was not what it seemed); its first and last frames stay.
func (ms *marks) unmark(id expert.ID) {
	if m := ms.find(id); m != nil {
		if m.count--; m.count == 0 {
			ms.drop(id)
		}
	}
}

// drop forgets finding id: what raised it was not what it seemed.
func (ms *marks) drop(id expert.ID) {
	*ms = slices.DeleteFunc(*ms, func(m mark) bool { return m.id == id })
}

func (ms marks) find(id expert.ID) *mark {
	for i := range ms {
		if ms[i].id == id {
			return &ms[i]
		}
	}
	return nil
}

// raise records finding id on the frame being fed (its smc.expert.*
// fields) and on the object whose marks ms are.
func (t *Tracker) raise(ms *marks, id expert.ID, in *input) {
	if id == expert.BadICRC || id == expert.BadIPSum {
		// The frame alone says what is wrong: both values, as the
		// frame's line shows them ("-" said nothing).
		t.raiseText(ms, id, in, func() string { return damageText(id, &in.roce, nil) })
		return
	}
	t.cur.expert |= 1 << id
	ms.add(id, in.number, in.ns, "")
}

// raiseText is raise with a detail kept from the first occurrence; text
// is made only then (a lossy link retransmits by the thousand).
func (t *Tracker) raiseText(ms *marks, id expert.ID, in *input, text func() string) {
	t.cur.expert |= 1 << id
	s := ""
	if ms.find(id) == nil {
		s = text()
	}
	ms.add(id, in.number, in.ns, s)
}

// earlyLLC is a response that came with no request waiting, at ns.
type earlyLLC struct {
	typ decode.LLCType
	ns  int64
}

// earlyLLCs holds one direction's early responses, oldest first: two
// hosts' captures merged with their clocks apart can show several flows'
// responses (a first link's CONFIRM_LINK, then the ADD_LINK reject) before
// the first request.
type earlyLLCs struct {
	e [maxEarlyLLC]earlyLLC
	n int
}

// maxEarlyLLC bounds the early responses kept per direction: the LLC
// flows of lateMax (one at a time, smc_llc_flow_start, a few each).
const maxEarlyLLC = 8

// expire forgets the responses older than lateMax at ns.
func (q *earlyLLCs) expire(ns int64) {
	i := 0
	for i < q.n && ns-q.e[i].ns > int64(lateMax) {
		i++
	}
	q.drop(0, i)
}

// drop removes the k responses from index i.
func (q *earlyLLCs) drop(i, k int) {
	copy(q.e[i:q.n], q.e[i+k:q.n])
	q.n -= k
	clear(q.e[q.n : q.n+k])
}

// add keeps a response of type typ at ns (the oldest goes when full).
func (q *earlyLLCs) add(typ decode.LLCType, ns int64) {
	q.expire(ns)
	if q.n == maxEarlyLLC {
		q.drop(0, 1)
	}
	q.e[q.n] = earlyLLC{typ: typ, ns: ns}
	q.n++
}

// take reports whether a response of typ's type came up to lateMax
// before ns, and forgets the oldest such one.
func (q *earlyLLCs) take(typ decode.LLCType, ns int64) bool {
	q.expire(ns)
	for i := range q.n {
		if q.e[i].typ.Base() == typ.Base() {
			q.drop(i, 1)
			return true
		}
	}
	return false
}

// pendingLLC is an LLC request waiting for its response.
type pendingLLC struct {
	typ   decode.LLCType
	frame int
	ns    int64
}

// llcSlot is the slot of a request's pending entry: TEST_LINK keepalives
// run beside the other flows (smc_llc_testlink_work), the rest one at a
// time (the link group's LLC flow).
func llcSlot(typ decode.LLCType) int {
	if typ.Base() == decode.LLCTestLink {
		return 1
	}
	return 0
}

// answered reports whether Linux answers a request of this type:
// DELETE_LINK is not paired (a request for every link is never answered,
// and a client's request is answered by the server's own request).
func answered(typ decode.LLCType) bool {
	switch typ.Base() {
	case decode.LLCConfirmLink, decode.LLCAddLink, decode.LLCConfirmRKey, decode.LLCDeleteRKey, decode.LLCTestLink:
		return true
	}
	return false
}

// unansweredID is the finding of an unanswered request of this type.
func unansweredID(typ decode.LLCType) expert.ID {
	if typ.Base() == decode.LLCTestLink {
		return expert.TestLinkUnanswered
	}
	return expert.LLCUnanswered
}

// llcPairs follows requests and responses on l (the frame's LLC m sent in
// direction d): a request waits in its slot, a response clears the other
// direction's; one that waited longer than llcWait is marked unanswered
// at its own frame when the next LLC on the link shows it.
func (t *Tracker) llcPairs(l *Link, d Dir, in *input) {
	m := &in.roce.llc
	l.expireLLC(in.ns)
	if !answered(m.typ) {
		return
	}
	s := llcSlot(m.typ)
	if m.resp {
		if !l.answerLLC(d, m.typ) {
			// No request waits: it may come just after, put late by the
			// capture (two hosts' captures merged, their clocks apart).
			l.llcEarly[d.Reverse()].add(m.typ, in.ns)
		}
		return
	}
	if l.llcEarly[d].take(m.typ, in.ns) {
		return // answered already
	}
	if l.unknownNS[d.Reverse()] >= in.ns {
		// Followed after the other direction's requests whose content
		// the capture lacks were taken (held for its sequence): its
		// response may be one of them.
		return
	}
	// Linux runs one LLC flow at a time (smc_llc_flow_start): a request
	// while another waits means the first got no answer the capture
	// shows. The older one stays: it is the one that decides.
	if p := &l.llcPend[d][s]; p.frame == 0 {
		*p = pendingLLC{typ: m.typ, frame: in.number, ns: in.ns}
	}
}

// answerLLC clears the request of the other direction that a response of
// type typ, sent in direction d, answers, and reports whether one waited.
func (l *Link) answerLLC(d Dir, typ decode.LLCType) bool {
	if p := &l.llcPend[d.Reverse()][llcSlot(typ)]; p.frame != 0 && p.typ.Base() == typ.Base() {
		*p = pendingLLC{}
		return true
	}
	return false
}

// expireLLC marks the requests of l that waited longer than llcWait by
// now as unanswered, and forgets them.
func (l *Link) expireLLC(now int64) {
	for d := range l.llcPend {
		for s := range l.llcPend[d] {
			if p := &l.llcPend[d][s]; p.frame != 0 && now-p.ns >= int64(llcWait) {
				// Not judged when one side of the group is not in the
				// capture (linkMarks).
				if !l.oneWay() {
					l.expert.add(unansweredID(p.typ), p.frame, p.ns, p.typ.String()+" req")
				}
				*p = pendingLLC{}
			}
		}
	}
}

// Finding is one finding on one object, with the frames that show it.
type Finding struct {
	ID       expert.ID
	Object   expert.Object
	ObjectID int // the tracker's connection, link or link-group ID (0: the capture)
	Count    int // frames that show it (for a decided absence: requests that waited)
	First    int // frame
	Last     int
	// FirstTime and LastTime are the frames' times.
	FirstTime, LastTime time.Time
	// Detail says what the object shows: the reason, the direction, the
	// counts and rates.
	Detail string
	// Check, when set, replaces the catalogue's advice for this object:
	// what the object shows makes that advice wrong (see teardownCopies).
	Check string
}

// CheckText is what to check next for f: its own advice, or the
// catalogue's.
func (f *Finding) CheckText() string {
	if f.Check != "" {
		return f.Check
	}
	return f.ID.Def().Check
}

// Severity is the finding's severity in the catalogue.
func (f *Finding) Severity() expert.Severity { return f.ID.Severity() }

// findingOf turns a mark into a finding of object o.
func findingOf(m *mark, o expert.Object, id int) Finding {
	return Finding{ID: m.id, Object: o, ObjectID: id, Count: m.count, First: m.first, Last: m.last,
		FirstTime: time.Unix(0, m.firstNS), LastTime: time.Unix(0, m.lastNS), Detail: m.text}
}

// now is the capture time of the newest frame the snapshot shows, or the
// capture's end (Snapshot.End).
func (s *Snapshot) now() int64 {
	var n int64
	if !s.End.IsZero() {
		n = s.End.UnixNano()
	}
	for i := range s.Conns {
		n = max(n, s.Conns[i].lastNS)
	}
	for i := range s.Links {
		n = max(n, s.Links[i].lastNS)
	}
	return n
}

// Findings lists every finding of the kept connections, links and link
// groups and of the capture, the most severe first, then by first frame.
// Findings that are absences are decided at the newest frame seen.
func (s *Snapshot) Findings() []Finding {
	now := s.now()
	var out []Finding
	links := s.linkIndex()
	for i := range s.Conns {
		out = s.connFindings(&s.Conns[i], links[s.Conns[i].Link], now, out)
	}
	for i := range s.Links {
		out = linkFindings(&s.Links[i], now, s.Ended, out)
	}
	for i := range s.LinkGroups {
		out = lgrFindings(&s.LinkGroups[i], out)
	}
	s.teardownCopies(out)
	for i := range s.expert {
		out = append(out, findingOf(&s.expert[i], expert.ObjectCapture, 0))
		f := &out[len(out)-1]
		if f.Detail == "" && f.ID == expert.Malformed {
			f.Detail = "SMC messages tied to no connection or link"
		}
		switch f.ID {
		case expert.MirrorLost:
			f.Detail = mirrorDetail(s.Mirrors)
		case expert.CaptureDuplicate:
			f.Detail = copiesDetail(&s.Stats)
		}
	}
	SortFindings(out)
	return out
}

// teardownCopies re-reads the retransmissions of a link that come after
// its link group's DELETE_LINK of every link: the last message of the
// group (the DELETE_LINK, or its response) went to a peer that had
// already destroyed its queue pair, so no ACK could come and the RNIC sent
// it again until its retry count ran out. Nothing was lost on the path: the loss advice (PFC/ECN, the switch) would send a reader
// after a fault that is not there.
func (s *Snapshot) teardownCopies(fs []Finding) {
	ended := map[int]int{} // link group ID -> frame of its first DELETE_LINK ALL
	for i := range s.LinkGroups {
		g := &s.LinkGroups[i]
		if m := g.expert.find(expert.LGRDeleted); m != nil && g.Deleted {
			ended[g.ID] = m.first
		}
	}
	if len(ended) == 0 {
		return
	}
	lgrOf := map[int]int{}
	for i := range s.Links {
		lgrOf[s.Links[i].ID] = s.Links[i].LGR
	}
	for i := range fs {
		f := &fs[i]
		if f.Object != expert.ObjectLink || (f.ID != expert.RCRetransmission && f.ID != expert.LLCRetransmitted) {
			continue
		}
		end, ok := ended[lgrOf[f.ObjectID]]
		if !ok || f.First <= end {
			continue
		}
		f.Detail += fmt.Sprintf(" (after the link group's DELETE_LINK of every link, frame %d: the peer had destroyed its QP, so no ACK came)", end)
		f.Check = "nothing on the path: copies of a link group's last message sent after the peer tore the link down are the kernel's teardown, not loss"
	}
}

// SortFindings orders findings the most severe first, then by first
// frame, then by finding and object.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if sa, sb := a.Severity(), b.Severity(); sa != sb {
			return sa > sb
		}
		if a.First != b.First {
			return a.First < b.First
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.ObjectID < b.ObjectID
	})
}

// connMarks appends to ms c's marks and the absences decided at now.
func connMarks(c *Conn, now int64, ms marks) marks {
	ms = append(ms, c.expert...)
	for d := range c.Flow {
		f := &c.Flow[d]
		if c.stalled(Dir(d), c.lastNS) {
			ms.add(expert.ConsumerStall, f.fullFrame, f.fullSince, "")
		}
		if e := c.endWithoutClose(Dir(d), now); e != 0 {
			ms.add(expert.ClosedWithoutClose, e, f.finNS, "")
		}
	}
	return ms
}

// connFindings appends c's findings, decided at now.
func (s *Snapshot) connFindings(c *Conn, l *Link, now int64, out []Finding) []Finding {
	ms := connMarks(c, now, nil)
	if p, ok := c.pendingAtEnd(l); ok && s.Ended {
		ms.add(expert.EndedPending, c.LastFrame, c.lastNS, p.text(now))
	}
	for i := range ms {
		f := findingOf(&ms[i], expert.ObjectConn, c.ID)
		f.Detail = c.findingDetail(s, f.ID, now, f.Detail)
		out = append(out, f)
	}
	return out
}

// endWithoutClose is the frame of direction d's FIN or RST when it ended
// an SMC-R connection that d never closed (no peer_conn_closed or abort
// CDC) and a second has gone by since (the CDC travels over RoCE, the FIN
// over TCP: a capture may show them out of order); 0 otherwise.
func (c *Conn) endWithoutClose(d Dir, now int64) int {
	f := &c.Flow[d]
	// A direction whose link the capture missed requests of since its
	// last CDC may have closed in one of them. One of which no CDC was
	// followed at all (its link not in the capture, or its data taken
	// for another connection's: a capture of one direction lacks what
	// ties them) says nothing of its close.
	if c.Outcome != OutcomeSMCR || f.finFrame == 0 || f.Closed || f.Aborted || f.uncaptured || f.CDCs == 0 || now-f.finNS < int64(time.Second) {
		return 0
	}
	return f.finFrame
}

// flowText names direction d of c for a detail: "C>S", or "A>B" when the
// roles are unknown.
func (c *Conn) flowText(d Dir) string {
	unknown := c.RolesUnknown || c.Inferred && (c.link == nil || c.link.Inferred)
	switch {
	case unknown && d == DirC2S:
		return "A>B"
	case unknown:
		return "B>A"
	case d == DirC2S:
		return "C>S"
	}
	return "S>C"
}

// perFlow joins "C>S ..." parts for the directions where n gives one.
func (c *Conn) perFlow(n func(f *Flow) string) string {
	var parts []string
	for d := range c.Flow {
		if s := n(&c.Flow[d]); s != "" {
			parts = append(parts, c.flowText(Dir(d))+" "+s)
		}
	}
	return strings.Join(parts, "; ")
}

// perCount is perFlow for a counter: "C>S 3 many", where n counts 3
// ("C>S 1 one").
func (c *Conn) perCount(n func(f *Flow) int, one, many string) string {
	return c.perFlow(func(f *Flow) string {
		if k := n(f); k > 0 {
			return fmt.Sprintf("%d %s", k, pick(k, one, many))
		}
		return ""
	})
}

// pick is one where n is 1, else many: a noun phrase in the number n
// counts.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func msText(ns int64) string {
	return fmt.Sprintf("%.1f ms", float64(ns)/1e6)
}

// lowerBound is a measured length, "at least" it where the capture's
// clock stepped back within it (the time across the step not known).
func lowerBound(length string, atLeast bool) string {
	if atLeast {
		return "at least " + length + " (the capture's clock stepped back within it)"
	}
	return length
}

// findingDetail says what c shows of finding id.
func (c *Conn) findingDetail(s *Snapshot, id expert.ID, now int64, text string) string {
	switch id {
	case expert.Fallback, expert.OptionEchoed, expert.CreditsDecline:
		return ConnDetail(c)
	case expert.HandshakeFailed:
		return c.Failure
	case expert.HandshakeSlow:
		return text // the time it took, said when it was raised
	case expert.BadTCPSum, expert.BadTCPIPSum:
		// What the wire said of them since: sent again (the receiving
		// host dropped them), or acknowledged with none sent again (the
		// capture's copy is damaged).
		verdict := c.perFlow(func(f *Flow) string {
			var parts []string
			if f.SumResent > 0 {
				parts = append(parts, fmt.Sprintf("%s sent again (dropped on the way)", numfmt.Count(f.SumResent, "segment")))
			}
			if f.SumCopyDamaged > 0 {
				parts = append(parts, fmt.Sprintf("%s the peer acknowledged with none sent again (the capture's copy damaged)", numfmt.Count(f.SumCopyDamaged, "segment")))
			}
			return strings.Join(parts, ", ")
		})
		if verdict == "" {
			return text
		}
		return text + "; " + verdict
	case expert.Malformed:
		if c.failedMalformed && c.Failure != "" {
			return c.Failure
		}
		return text
	case expert.Failover:
		// The kernel's number of the link, as every text names a link.
		return fmt.Sprintf("now on link %s; %s", linkNumber(c.LinkID), c.perFlow(func(f *Flow) string {
			if f.Failover == 0 {
				return ""
			}
			return fmt.Sprintf("%d failover-validation CDCs from frame %d", f.Failover, f.FailoverFrame)
		}))
	case expert.WriteBlocked:
		return c.perFlow(func(f *Flow) string {
			if f.WriteBlocked == 0 {
				return ""
			}
			longest, atLeast := f.WBLongest, f.wbAtLeast
			open := ""
			if f.wbSince != 0 {
				// Measured to the connection's last frame, not past it.
				if d := time.Duration(c.lastNS - f.wbSince); d > longest {
					longest, atLeast = d, s.Unmeasured(time.Unix(0, f.wbSince), time.Unix(0, c.lastNS))
				}
				open = fmt.Sprintf(", the last still open at the end of the capture (the connection's last frame %d, %s)", c.LastFrame, time.Unix(0, c.lastNS).UTC().Format("15:04:05.000000"))
			}
			return fmt.Sprintf("%s in %s%s, longest %s", numfmt.Count(f.WriteBlocked, "write-blocked CDC"), numfmt.Count(f.WBEpisodes, "episode"), open, lowerBound(msText(longest.Nanoseconds()), atLeast))
		})
	case expert.ConsumerStall:
		return c.perFlow(func(f *Flow) string {
			longest, atLeast := f.StallLongest, f.stallAtLeast
			open := ""
			if c.stalled(c.dirOf(f), c.lastNS) {
				if d := time.Duration(c.lastNS - f.fullSince); d > longest {
					longest, atLeast = d, s.Unmeasured(time.Unix(0, f.fullSince), time.Unix(0, c.lastNS))
				}
				open = fmt.Sprintf(", still full at the end of the capture (the connection's last frame %d)", c.LastFrame)
			}
			if longest == 0 {
				return ""
			}
			return fmt.Sprintf("peer's RMBE (%d B) full, consumer cursor still for up to %s%s", c.rmbeSize(c.dirOf(f)), lowerBound(msText(longest.Nanoseconds()), atLeast), open)
		})
	case expert.Urgent:
		return c.perFlow(func(f *Flow) string {
			if f.UrgentPending+f.UrgentPresent == 0 {
				return ""
			}
			return fmt.Sprintf("urgent pending %d, present %d", f.UrgentPending, f.UrgentPresent)
		})
	case expert.ConnAbort:
		return c.perFlow(func(f *Flow) string {
			if !f.Aborted {
				return ""
			}
			return "sent peer_conn_abort"
		})
	case expert.ClosedWithoutClose:
		return c.perFlow(func(f *Flow) string {
			if c.endWithoutClose(c.dirOf(f), now) == 0 {
				return ""
			}
			what := "FIN"
			if f.RST {
				what = "RST"
			}
			return fmt.Sprintf("%s at frame %d without peer_conn_closed", what, f.finFrame)
		})
	case expert.NotCaptured:
		return c.perFlow(func(f *Flow) string {
			switch {
			case f.TCPNotCaptured > 0 && f.FINNotCaptured:
				return fmt.Sprintf("%d TCP bytes and the FIN the peer acknowledged that the capture never showed", f.TCPNotCaptured)
			case f.TCPNotCaptured > 0:
				return fmt.Sprintf("%d TCP bytes the peer acknowledged that the capture never showed", f.TCPNotCaptured)
			case f.FINNotCaptured:
				return "the FIN the peer acknowledged that the capture never showed"
			case f.TCPReordered > 0:
				return "the capture showed every byte later (roce.capture.reordered)"
			case f.Dumped > 0 && f.SeqNotCaptured > 0:
				return fmt.Sprintf("%d CDC sequence numbers the dump device's capture never showed", f.SeqNotCaptured)
			}
			return ""
		})
	case expert.CaptureUnreadable:
		return c.perFlow(func(f *Flow) string {
			if f.TCPUnreadable == 0 {
				return ""
			}
			return fmt.Sprintf("%d TCP bytes the peer acknowledged that the capture holds only in frames damaged past reading", f.TCPUnreadable)
		})
	case expert.CaptureReordered:
		return c.perFlow(func(f *Flow) string {
			if f.TCPReordered == 0 {
				return ""
			}
			return fmt.Sprintf("%d TCP bytes shown after the peer's ACK of them", f.TCPReordered)
		})
	case expert.SeqGap:
		return c.perCount(func(f *Flow) int { return f.SeqGaps }, "sequence number missing", "sequence numbers missing")
	case expert.SeqDup:
		return c.perCount(func(f *Flow) int { return f.SeqDup }, "sequence number repeated", "sequence numbers repeated")
	case expert.CursorBackwards:
		return c.perCount(func(f *Flow) int { return f.CursorErrors }, "cursor not followed", "cursors not followed")
	case expert.DumpDamaged:
		return c.perCount(func(f *Flow) int { return f.DumpDamaged }, "damaged dump-device CDC (not followed, or taken back)", "damaged dump-device CDCs (not followed, or taken back)")
	case expert.CursorPastRMBE:
		return c.perFlow(func(f *Flow) string {
			if f.PastRMBE == 0 {
				return ""
			}
			d := c.dirOf(f)
			return fmt.Sprintf("%d CDCs with a cursor at or past the RMBE (producer: %d B, consumer: %d B)", f.PastRMBE, c.rmbeSize(d), c.rmbeSize(d.Reverse()))
		})
	}
	return text
}

// dirOf is the direction whose flow f is.
func (c *Conn) dirOf(f *Flow) Dir {
	if f == &c.Flow[DirS2C] {
		return DirS2C
	}
	return DirC2S
}

// linkMarks appends to ms l's marks and the absences decided at now.
func linkMarks(l *Link, now int64, ms marks) marks {
	ms = append(ms, l.expert...)
	// Not judged when one side of the link group is not in the capture
	// (a capture of one direction: not a packet, not an ACK from it on
	// any link): its responses may be as well. (A peer that stops
	// answering on one link still sends on another.)
	if !l.oneWay() {
		for d := range l.llcPend {
			for _, p := range l.llcPend[d] {
				if p.frame != 0 && now-p.ns >= int64(llcWait) {
					ms.add(unansweredID(p.typ), p.frame, p.ns, p.typ.String()+" req")
				}
			}
		}
	}
	// Only a link a CLC handshake announced is known to be a first contact's
	// (joined mid-stream, a CONFIRM_LINK request may as well be an added
	// link's whose ADD_LINK came before the capture).
	if l.State == LinkConfirming && l.announced && now-l.Start.UnixNano() >= int64(llcWait) && !l.uncaptured {
		ms.add(expert.FirstLinkUnconfirmed, l.FirstFrame, l.Start.UnixNano(), "")
	}
	if l.addedUnconfirmed(now) {
		ms.add(expert.AddedUnconfirmed, l.FirstFrame, l.Start.UnixNano(), "")
	}
	return ms
}

// linkFindings appends l's findings, decided at now.
func linkFindings(l *Link, now int64, ended bool, out []Finding) []Finding {
	ms := linkMarks(l, now, nil)
	if frame, at, text := l.llcPendingAtEnd(now); frame != 0 && ended {
		ms.add(expert.EndedPending, frame, at, text)
	} else if text := l.addPendingAtEnd(now); text != "" && ended {
		ms.add(expert.EndedPending, l.FirstFrame, l.Start.UnixNano(), text)
	}
	for i := range ms {
		f := findingOf(&ms[i], expert.ObjectLink, l.ID)
		f.Detail = l.findingDetail(f.ID, f.Detail)
		out = append(out, f)
	}
	return out
}

// findingDetail says what l shows of finding id.
func (l *Link) findingDetail(id expert.ID, text string) string {
	dirName := func(d int) string {
		if l.Inferred {
			return map[bool]string{true: "A->B", false: "B->A"}[d == 0]
		}
		return Dir(d).String()
	}
	per := func(n func(rc *RC) int, one, many string) string {
		var parts []string
		for d := range l.RC {
			rc := &l.RC[d]
			if k := n(rc); k > 0 {
				dir := dirName(d)
				s := fmt.Sprintf("%s %d %s", dir, k, pick(k, one, many))
				if rc.Packets > 0 {
					s += fmt.Sprintf(" of %d packets", rc.Packets)
				}
				// lastNS: a link being folded has no Last yet.
				if dur := float64(l.lastNS-l.Start.UnixNano()) / 1e9; dur > 0 {
					s += fmt.Sprintf(", %.2f/s", float64(k)/dur)
				}
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "; ")
	}
	switch id {
	case expert.RCRetransmission:
		return per(func(rc *RC) int { return rc.Retrans }, "retransmitted", "retransmitted")
	case expert.PSNGap:
		s := per(func(rc *RC) int { return rc.PSNGaps }, "PSN jump", "PSN jumps") + "; " +
			per(func(rc *RC) int { return rc.PSNMissing }, "PSN missing", "PSNs missing")
		// On a lossy path: the requests the responder dropped, and the
		// lost ones that came later.
		for d := range l.RC {
			if rc := &l.RC[d]; rc.OutOfSeq+rc.Late > 0 {
				s += fmt.Sprintf("; %s %s dropped out of sequence by the responder, %d first seen late", dirName(d), numfmt.Count(rc.OutOfSeq, "request"), rc.Late)
			}
		}
		return s
	case expert.NotCaptured:
		s := per(func(rc *RC) int { return rc.NotCaptured }, "request PSN the responder took that the capture never showed", "request PSNs the responder took that the capture never showed")
		if s == "" {
			// Each came after its ACK: the capture's order.
			s = "the capture showed every one later (roce.capture.reordered)"
		}
		return s
	case expert.CaptureUnreadable:
		return per(func(rc *RC) int { return rc.Unreadable }, "request PSN the responder took that the capture holds only in a frame damaged past reading", "request PSNs the responder took that the capture holds only in frames damaged past reading")
	case expert.CaptureReordered:
		s := per(func(rc *RC) int { return rc.Reordered }, "request shown out of the order the responder took it", "requests shown out of the order the responder took them")
		if n := l.RC[0].ReorderedCarried + l.RC[1].ReorderedCarried; n > 0 {
			s += fmt.Sprintf("; %s by a mirror session or overlay alone, whose copies come behind the packets around them", numfmt.Count(n, "request"))
		}
		return s
	case expert.BadICRC, expert.BadIPSum, expert.BadLength:
		// Copies the responder took show the capture point damaging
		// its copies: where it did, the rest may be its damage too (an
		// ACK's fate no frame tells).
		if n := l.RC[0].Damaged + l.RC[1].Damaged; n > 0 {
			return fmt.Sprintf("%s; the capture damaged %s on this link that the responder took (roce.capture.damaged): these may be its damage too", text, numfmt.Count(n, "request"))
		}
		return text
	case expert.CaptureCopyDamaged:
		var parts []string
		for d := range l.RC {
			if rc := &l.RC[d]; rc.Damaged > 0 {
				parts = append(parts, fmt.Sprintf("%s %s of %d that the responder took, damaged in the capture", dirName(d), numfmt.Count(rc.Damaged, "request"), rc.Packets))
			}
		}
		if text != "" {
			parts = append(parts, text)
		}
		return strings.Join(parts, "; ")
	case expert.RNRNAK:
		return per(func(rc *RC) int { return rc.RNRs }, "RNR NAK sent", "RNR NAKs sent")
	case expert.NAK:
		var parts []string
		for d := range l.RC {
			for code, n := range l.RC[d].NAKCodes {
				if n > 0 {
					parts = append(parts, fmt.Sprintf("%s %d %s", Dir(d), n, decode.NAKCode(code)))
				}
			}
		}
		return strings.Join(parts, "; ")
	case expert.CreditsStarved:
		var parts []string
		for d := range l.Credits {
			if c := &l.Credits[d]; c.Starved > 0 {
				parts = append(parts, fmt.Sprintf("%s held no receive-queue credit %s, longest %s (until frame %d); init %d, returned %d, spent %d",
					linkSideName(l, Dir(d)), times(c.Starved), lowerBound(c.Longest.Round(time.Microsecond).String(), c.longestAtLeast), c.LongestFrame, c.Init, c.Returned, c.Spent))
			}
		}
		return strings.Join(parts, "; ")
	case expert.LinkDeleted:
		// The link is named by the object (ExpertInstance.Name).
		return reasonDetail(l.DeleteCode, l.DeleteKnown)
	case expert.FirstLinkUnconfirmed:
		return fmt.Sprintf("link %d announced by CLC at frame %d, state %s", l.LinkID, l.FirstFrame, l.State)
	case expert.AddedUnconfirmed:
		if l.State == LinkDeleted {
			return fmt.Sprintf("link %d added at frame %d, no CONFIRM_LINK exchange on it; deleted %s later, %s",
				l.LinkID, l.FirstFrame, fmtDur(time.Duration(l.endNS-l.Start.UnixNano())), reasonDetail(l.DeleteCode, l.DeleteKnown))
		}
		return fmt.Sprintf("link %d added at frame %d, no CONFIRM_LINK exchange on it, state %s", l.LinkID, l.FirstFrame, l.State)
	}
	return text
}

// ReasonNotCaptured is what every surface says of a DELETE_LINK whose
// reason the capture does not hold (Link.DeleteKnown).
const ReasonNotCaptured = "reason not captured (the DELETE_LINK response does not carry it)"

// ReasonKnown reports whether e, a DELETE_LINK, states the deletion's
// reason: a request does, a response does not (Link.DeleteKnown).
func (e *LinkEvent) ReasonKnown() bool { return !e.Resp }

// reasonDetail is a finding's words for a DELETE_LINK's reason, code, or
// for its absence where the capture showed the response alone.
func reasonDetail(code uint32, known bool) string {
	if !known {
		return ReasonNotCaptured
	}
	return fmt.Sprintf("reason %#08x %s", code, decode.DeleteLinkReason(code).Meaning())
}

// lgrFindings appends g's findings.
func lgrFindings(g *LinkGroup, out []Finding) []Finding {
	for i := range g.expert {
		f := findingOf(&g.expert[i], expert.ObjectLGR, g.ID)
		if f.ID == expert.LGRDeleted {
			f.Detail = reasonDetail(g.DeleteCode, g.DeleteKnown)
		}
		out = append(out, f)
	}
	return out
}

// expertSums sums, per finding, what was folded: the views still count
// every finding of the capture.
type expertSums [expert.Count + 1]ExpertSum

// add counts the marks of one folded object.
func (s *expertSums) add(ms marks) {
	for i := range ms {
		m := &ms[i]
		e := &s[m.id]
		if e.Objects == 0 || m.first < e.First {
			e.First, e.FirstTime = m.first, time.Unix(0, m.firstNS)
		}
		if m.last > e.Last {
			e.Last, e.LastTime = m.last, time.Unix(0, m.lastNS)
		}
		e.Count += m.count
		e.Objects++
	}
}

// foldConnFindings and its siblings add the findings of a connection,
// link or link group that leaves the tracker to the folded sums (decided
// at the frame being fed), through one reused buffer: a capture of short
// connections folds them by the thousand.
func (t *Tracker) foldConnFindings(c *Conn) {
	t.foldMarks = connMarks(c, t.in.ns, t.foldMarks[:0])
	t.folded.expert.add(t.foldMarks)
}

func (t *Tracker) foldLinkFindings(l *Link) {
	t.foldMarks = linkMarks(l, t.in.ns, t.foldMarks[:0])
	t.folded.expert.add(t.foldMarks)
}

func (t *Tracker) foldLGRFindings(g *LinkGroup) {
	t.folded.expert.add(g.expert)
}

// countCarried counts the frame just handled once for each severity of
// the findings it carries.
func (t *Tracker) countCarried() {
	if t.cur.expert == 0 {
		return
	}
	var seen [expert.Error + 1]bool
	for set := t.cur.expert; set != 0; {
		id := expert.ID(bits.TrailingZeros64(set))
		set &^= 1 << id
		seen[id.Severity()] = true
	}
	for s, ok := range seen {
		if ok {
			t.carried[s]++
		}
	}
}

// ExpertSum is one finding over the whole capture: how many frames and
// objects show it, the first and last frame.
type ExpertSum struct {
	Count               int
	Objects             int
	First, Last         int
	FirstTime, LastTime time.Time
}

// ---- smc,expert ----

// ExpertView is smc,expert: the capture's findings grouped by severity,
// the most severe first, and within a severity by finding, each with the
// objects that show it.
type ExpertView struct {
	// MinSeverity is the floor of -z smc,expert,SEVERITY ("warn"), empty
	// when every severity is shown.
	MinSeverity string `json:"min_severity,omitempty"`
	// Below counts the findings under the floor, left out.
	Below      int              `json:"below,omitempty"`
	Severities []ExpertSeverity `json:"severities"`
}

// AtLeast is v without the severities below min, as tshark's -z
// expert,warn shows them; the findings left out are counted in Below.
func (v ExpertView) AtLeast(min expert.Severity) ExpertView {
	out := ExpertView{MinSeverity: min.String(), Severities: []ExpertSeverity{}}
	for _, g := range v.Severities {
		if g.level < min {
			out.Below += len(g.Findings)
			continue
		}
		out.Severities = append(out.Severities, g)
	}
	return out
}

// ExpertSeverity is the findings of one severity.
type ExpertSeverity struct {
	Severity string `json:"severity"`
	// Frames is how many frames carry a finding of this severity, each
	// once however many it carries: what -Y 'smc.expert.severity ==
	// warn' selects. A finding decided after its frame went by (an
	// unanswered request) is on no frame; the rows' counts include it.
	Frames   int             `json:"frames"`
	Findings []ExpertRow     `json:"findings"`
	level    expert.Severity // Severity, typed: AtLeast compares it
}

// ExpertRow is one finding over the capture.
type ExpertRow struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Group    string `json:"group"`
	Meaning  string `json:"meaning"`
	Check    string `json:"check"`   // the catalogue's; an instance may have its own (ExpertInstance.Check)
	Count    int    `json:"count"`   // frames that show it, folded objects' included
	Objects  int    `json:"objects"` // objects that show it, folded ones included
	First    int    `json:"first_frame"`
	Last     int    `json:"last_frame"`
	// FoldedObjects are objects folded into the totals (Options.MaxConns):
	// counted above, not listed below.
	FoldedObjects int              `json:"folded_objects,omitempty"`
	Instances     []ExpertInstance `json:"instances"`
}

// ExpertInstance is one finding on one object.
type ExpertInstance struct {
	Object string `json:"object"` // connection, link, link group, capture
	ID     int    `json:"id,omitempty"`
	// Name is what the object is called for a person: "connection 3",
	// "link group 1", and a link by the number its kernels gave it (the
	// LLC's link ID) in its group, "link 2 of link group 1", or by its
	// queue pairs where the capture does not show the number, "link
	// qp0x11/0x13 of link group 1" (smctop's name). ID is the object's
	// row in smc,conns, smc,links or smc,lgr.
	Name   string `json:"name"`
	Count  int    `json:"count"`
	First  int    `json:"first_frame"`
	Last   int    `json:"last_frame"`
	Detail string `json:"detail,omitempty"`
	// Check replaces the finding's advice for this object (Finding.Check).
	Check string `json:"check,omitempty"`
}

// linkIndex finds the snapshot's links by tracker ID.
func (s *Snapshot) linkIndex() map[int]*Link {
	links := make(map[int]*Link, len(s.Links))
	for i := range s.Links {
		links[s.Links[i].ID] = &s.Links[i]
	}
	return links
}

// objectName is ExpertInstance.Name of object o with the tracker's ID id
// (links: the snapshot's, by ID).
func objectName(o expert.Object, id int, links map[int]*Link) string {
	if l := links[id]; o == expert.ObjectLink && l != nil {
		return fmt.Sprintf("link %s of link group %d", LinkName(l.LinkID, l.Client.QPN, l.Server.QPN), l.LGR)
	}
	if id == 0 {
		return o.String()
	}
	return fmt.Sprintf("%s %d", o, id)
}

// ExpertView builds smc,expert from the snapshot's findings and the sums
// of what was folded.
func (s *Snapshot) ExpertView() ExpertView {
	fs := s.Findings()
	links := s.linkIndex()
	rows := map[expert.ID]*ExpertRow{}
	var order []expert.ID
	row := func(id expert.ID) *ExpertRow {
		r := rows[id]
		if r == nil {
			d := id.Def()
			r = &ExpertRow{ID: d.Name, Severity: d.Severity.String(), Group: d.Group, Meaning: d.Meaning, Check: d.Check, Instances: []ExpertInstance{}}
			rows[id] = r
			order = append(order, id)
		}
		return r
	}
	span := func(r *ExpertRow, first, last int) {
		if r.First == 0 || first < r.First {
			r.First = first
		}
		r.Last = max(r.Last, last)
	}
	for i := range fs {
		f := &fs[i]
		r := row(f.ID)
		r.Count += f.Count
		r.Objects++
		span(r, f.First, f.Last)
		r.Instances = append(r.Instances, ExpertInstance{Object: f.Object.String(), ID: f.ObjectID, Name: objectName(f.Object, f.ObjectID, links),
			Count: f.Count, First: f.First, Last: f.Last, Detail: f.Detail, Check: f.Check})
	}
	for id := range s.folded.expert {
		e := &s.folded.expert[id]
		if e.Objects == 0 {
			continue
		}
		r := row(expert.ID(id))
		r.Count += e.Count
		r.Objects += e.Objects
		r.FoldedObjects += e.Objects
		span(r, e.First, e.Last)
	}
	// Most severe first; within a severity the findings by first frame.
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.Severity() != b.Severity() {
			return a.Severity() > b.Severity()
		}
		if rows[a].First != rows[b].First {
			return rows[a].First < rows[b].First
		}
		return a < b
	})
	v := ExpertView{Severities: []ExpertSeverity{}}
	for _, id := range order {
		r := rows[id]
		if n := len(v.Severities); n == 0 || v.Severities[n-1].Severity != r.Severity {
			v.Severities = append(v.Severities, ExpertSeverity{Severity: r.Severity, Frames: s.carried[id.Severity()], Findings: []ExpertRow{}, level: id.Severity()})
		}
		g := &v.Severities[len(v.Severities)-1]
		g.Findings = append(g.Findings, *r)
	}
	return v
}

// ---- fields ----

var (
	fExpertID = decode.Field(decode.OwnerTrackExpert, "smc.expert.id", decode.KindString,
		"finding this frame shows (package expert's catalogue; smcdump -z smc,expert lists them)")
	fExpertSeverity = decode.Field(decode.OwnerTrackExpert, "smc.expert.severity", decode.KindUint,
		"severity of the finding: 1 chat, 2 note, 3 warn, 4 error (-Y 'smc.expert.severity >= warn')",
		decode.Enum(severityEnum), decode.Names(parseSeverity))
	fExpertGroup = decode.Field(decode.OwnerTrackExpert, "smc.expert.group", decode.KindString,
		"expert group of the finding: sequence, protocol, malformed, checksum, response (Wireshark's groups) or performance, state (smcscope's own)")
	fExpertMessage = decode.Field(decode.OwnerTrackExpert, "smc.expert.message", decode.KindString,
		"what the finding means")
)

// parseSeverity reads a severity as -Y gives it: smcscope's names and
// Wireshark's (expert.ParseSeverity).
func parseSeverity(name string) (uint64, bool) {
	s, ok := expert.ParseSeverity(name)
	return uint64(s), ok
}

func severityEnum(u uint64) string {
	if u == 0 || u > uint64(expert.Error) {
		return ""
	}
	return expert.Severity(u).String()
}

// appendExpert adds the fields of the findings in set (a bit per ID).
func appendExpert(r *decode.Record, set uint64) {
	for set != 0 {
		id := expert.ID(bits.TrailingZeros64(set))
		set &^= 1 << id
		d := id.Def()
		r.AddString(fExpertID, d.Name)
		r.AddUint(fExpertSeverity, uint64(d.Severity))
		r.AddString(fExpertGroup, d.Group)
		r.AddString(fExpertMessage, d.Meaning)
	}
}

// FrameFindings lists the findings a frame's record carries in its
// smc.expert.id fields, and the worst severity among them (for callers
// that read a tracker's fields: the capture browser's index).
func FrameFindings(r *decode.Record) (worst expert.Severity, ids []expert.ID) {
	for i, id := range r.IDs {
		if id == fExpertID {
			if x, ok := expert.ByName(r.Vals[i].S); ok {
				ids = append(ids, x)
				worst = max(worst, x.Severity())
			}
		}
	}
	return worst, ids
}

// times says how many times: "once", "3 times".
func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
