package track

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/smcscope/smcscope/expert"
)

// Options tune memory and what is recorded. The zero value is usable.
type Options struct {
	// IdleTimeout removes a connection from the live tables when no frame
	// of it was seen for this long (capture time). Default 15 minutes: an
	// SMC-R connection's TCP stays silent while data flows over RDMA, and
	// Linux keeps an idle link group for 10 minutes.
	IdleTimeout time.Duration
	// MaxConns caps how many connections are kept whole for the views,
	// and a quarter of it (at most MaxClosed) how many links (a link weighs
	// more: its history is listed too). Beyond it the oldest are folded into the views'
	// totals (Snapshot.Totals) and counted in Stats.Evicted and
	// Stats.EvictedLinks: ended ones first, then, only if the cap is held
	// by open ones, the oldest open ones, whose later frames then count as
	// TCP not tracked (or start a connection joined mid-stream). Default
	// 4096: a kept connection costs smcdump's peak memory about 4 KiB (a
	// fallback) to 20 KiB (an SMC-R connection with its link group),
	// views included, so the views stay within tens of MiB on any
	// capture, and a few thousand rows are as many as anyone reads.
	MaxConns int
	// MaxClosed caps how many of those are connections that ended (both
	// sides closed, or idle for IdleTimeout): the oldest ended ones beyond
	// it are folded into the totals in batches (checked after every tenth
	// of MaxClosed new connections, down to 90 % of the cap), so memory
	// follows the open connections and not the capture's length. Links
	// are folded against their own cap (a quarter of MaxConns, at most
	// MaxClosed), ended ones first (foldLinks); a link group goes with
	// its last link. Open connections are folded only beyond MaxConns.
	// Default (0): MaxConns, which keeps the newest MaxConns connections
	// whole whether they ended or not.
	MaxClosed int
	// Timeline selects connections whose frames are recorded one by one
	// for the smc,timeline view: "" none, "all", a tracker connection ID
	// ("3") or an endpoint ("10.10.0.2:49018") of the TCP connection.
	// Recorded events cost memory per frame (up to TimelineMax per
	// connection), so "all" is for small captures.
	Timeline string
	// TimelineMax caps the events kept per connection (default 100000).
	TimelineMax int
	// Unshared says that the goroutine that feeds the tracker is the only
	// one to use it (Snapshot, views, fields), as smcdump does: Feed and
	// AppendFields then skip the mutex, whose two atomic operations per
	// call cost about as much as following a RoCE frame. Leave it false
	// when another goroutine takes snapshots while frames are fed (smctop).
	Unshared bool
	// Stream, when set, receives every SMC-R connection's application
	// bytes as the tracker reassembles them from RDMA WRITEs and CDC
	// cursors (stream.go). Every RoCE frame then takes the general path.
	Stream StreamSink
}

const (
	defaultIdle = 15 * time.Minute
	// DefaultMaxConns is Options.MaxConns when it is not set.
	DefaultMaxConns    = 4096
	defaultTimelineMax = 100000
	maxLinkHistory     = 256
	// maxHistory caps the link events kept over all kept links (about 1
	// MiB with their texts, three times that in the views): a capture with
	// many busy link groups folds the oldest links sooner than the cap on
	// links says.
	maxHistory  = 8192
	maxCLCTypes = 8
	// maxPendingRKeys bounds a group's CONFIRM_RKEYs waiting for their
	// connection's CLC message: Linux has at most 255 RMBs per link group
	// (SMC_RMBS_PER_LGR_MAX, net/smc/smc_core.h) on up to 3 links
	// (SMC_LINKS_PER_LGR_MAX); the rest is a capture joined mid-stream.
	maxPendingRKeys = 1024
	maxUnknownQPs   = 4096
)

// Tracker follows connections, links and link groups over a stream of
// frames. Feed it every frame in capture order; Snapshot and the views may
// be called at any time, also from another goroutine.
type Tracker struct {
	mu    sync.Mutex
	opts  Options
	stats Stats
	// What fastRoCE reads and writes for every frame, kept next to the
	// counters it adds to.
	//
	// fastUntil is the first frame count at which fastRoCE must step
	// aside (a sweep may be due), or 0 while a timeline is recorded (or a
	// fold is due, which feed's own folds leave no frame with:
	// TestNoFoldDueAfterFeed); feed sets it after each frame it handles,
	// and only feed changes what it depends on.
	fastUntil int
	cur       attribution // of the last frame feed handled
	// carried counts the frames that carried a finding, by severity
	// (a frame with two warnings counts once): smc,expert's frames.
	carried [expert.Error + 1]int
	fastCur fastAttribution // of the last frame fastRoCE handled
	hot     hotLink         // fastRoCE's shortcut to the last link it followed

	conns []*Conn
	links []*Link
	lgrs  []*LinkGroup

	byTuple map[tcpKey]*Conn
	// endpoints counts the connections in byTuple each endpoint is one
	// end of: a segment no 4-tuple matches is compared with them only
	// where one of its ends is one (damagedTuple).
	endpoints map[netip.AddrPort]int
	lastTuple *Conn // of the last TCP segment, while it is in byTuple
	// cutSYNs are the last SYNs whose options a snap length cut (where
	// the SMC option would be): a connection its CLC messages show later
	// began there (startConn).
	cutSYNs [8]cutSYN
	// damagedSYNs: connections begun at a SYN whose checksum failed,
	// oldest first (damagedSYNOf).
	damagedSYNs []damagedSYN
	// phantom: a connection whose one segment was a damaged copy, that
	// the segment being fed begins again in its place (newConn).
	phantom *Conn
	// cutShown: the last frames that raised smc.capture.snap_cut, whose
	// whole copy may come after them (uncut).
	cutShown cutShown
	// dumpers are the hosts whose ANCK dump device the capture holds:
	// each copies the CDCs its own host sends, so a connection's
	// direction from any other host is not shown, not silent.
	dumpers map[netip.Addr]bool
	// dumpFirst holds the last dumped CDC of each connection direction
	// no connection has: the next, if they pair, makes the connection
	// (joinDumped).
	dumpFirst map[[2]netip.AddrPort]dumpFirst
	// dumpTwins are the dump device data frames taken for copies since
	// their direction's last CDC: a piece of the same bytes as the one
	// before it is one too, until the CDC tells (dumpPieces).
	dumpTwins []dumpTwin
	byQP      map[qpKey]linkRef
	halfLinks map[addrPair][]*Link // inferred links whose reverse direction is not keyed yet
	unknownQP map[qpKey]*unknownQP
	// announced counts links a first contact's CLC messages announced
	// (place, placeHalfLink): see unknownQP.announced.
	announced int
	// pendingHalf holds connections whose Confirm came before any traffic
	// of their link (the capture started after the Accept); their S->C
	// CDCs claim them once the link shows up (claimHalf).
	pendingHalf []*Conn

	nextConn, nextLink, nextLGR int
	folded                      folded       // what is no longer kept whole
	spare                       []*Conn      // folded connections, nothing points to them: newConn reuses them
	clcBuf                      []byte       // a CLC message read as another type (retype)
	spareLinks                  []*Link      // folded links nothing points to: newLink reuses them (recycle)
	spareLGRs                   []*LinkGroup // folded link groups likewise, for newLGR
	history                     int          // link events held by the kept links (maxHistory)
	linkCap                     int          // how many links are kept whole: a quarter of Options.MaxConns, at most MaxClosed
	foldAt                      int          // len(conns) that calls for a fold (foldConns sets it)
	linkFoldAt, histFoldAt      int          // len(links) and history that call for a fold of links (foldLinks and linkEnded set them)
	foldScratch                 foldScratch
	finishGroups                map[*LinkGroup]bool // finish's set of groups, reused
	lastSweep                   int64               // Unix nanoseconds
	lastNS                      int64               // newest frame feed handled (fastRoCE's are in their links' lastNS)
	seenCopies                  seenCopies          // recent RoCE and dump-device frames (captureDup)
	unread                      []unreadFrame       // recent frames damaged past reading (keepUnread)
	ahead                       aheadCopies         // cut copies that come before the packets (hold)
	mirrors                     mirrors             // the mirror sessions' sequence numbers (mirrorStep)
	endNS                       int64               // the capture's end as its file records it (EndCapture), 0 unknown
	ended                       bool                // EndCapture: no frame comes after the last one fed
	timelineID                  int                 // > 0 when Options.Timeline names an ID
	timelineEP                  netip.AddrPort      // valid when Options.Timeline names an endpoint

	in input
	// replayIn is a kept request followed late (resync), replaying
	// while it is.
	replayIn  input
	clock     captureClock // the time frames are measured by (clock.go)
	replaying bool
	// expert marks findings tied to no connection or link (expert.go).
	expert    marks
	foldMarks marks // foldConnFindings' buffer
	// qpCache holds the last wire keys looked up: RoCE traffic comes in
	// runs on few QPs, and hashing two netip.Addr per frame dominated Feed.
	qpCache [4]qpCacheEntry
	qpNext  int
}

type qpCacheEntry struct {
	key qpKey
	ref linkRef
}

// unknownQP counts frames on a QP direction that no SMC message has
// identified yet; they are promoted to a link at the first LLC or CDC.
type unknownQP struct {
	frames int
	// writes counts, of the frames, RDMA WRITE packets: bytes of some
	// connection the link, once known, does not count (RC.Untied).
	writes int
	last   int64 // Unix nanoseconds
	// announced: Tracker.announced when damagedGIDLink last looked for a
	// link for it (its packets naming none, they match one only if a
	// link was announced since).
	announced int
}

// attribution is what the last fed frame was tied to, for AppendFields.
type attribution struct {
	frame int
	// conn and link are the frame's when hasConn and hasLink. They stay
	// from frame to frame and are written only when they change: most
	// frames belong to the last one's connection, and every pointer
	// written costs a write barrier while the collector runs.
	conn             *Conn
	link             *Link
	hasConn, hasLink bool
	dir              Dir
	cdcBytes         uint64
	hasCDC           bool
	retrans          bool
	psnGap           int
	outOfSeq         bool // a request ahead of the PSN its responder expects: dropped (RC.OutOfSeq)
	outOfOrder       bool // a request first seen after later PSNs (RC.Late)
	notCaptured      int  // request PSNs this ACK or NAK says the capture missed (RC.NotCaptured)
	unattached       bool
	expert           uint64 // findings raised on the frame, a bit per expert.ID
	// placed: the frame is a WRITE packet whose bytes went to RMBE offset
	// rmbeAt of its connection's receiver (smc.stream.*).
	placed bool
	rmbeAt uint64
}

func (a *attribution) reset(frame int) {
	a.frame, a.hasConn, a.hasLink, a.dir = frame, false, false, 0
	a.cdcBytes, a.hasCDC, a.retrans, a.psnGap, a.unattached, a.expert = 0, false, false, 0, false, 0
	a.outOfSeq, a.outOfOrder, a.notCaptured = false, false, 0
	a.placed = false
}

func (a *attribution) setConn(c *Conn) {
	if a.conn != c {
		a.conn = c
	}
	a.hasConn = true
}

func (a *attribution) setLink(l *Link) {
	if a.link != l {
		a.link = l
	}
	a.hasLink = true
}

// theConn and theLink are the frame's connection and link, or nil.
func (a *attribution) theConn() *Conn {
	if a.hasConn {
		return a.conn
	}
	return nil
}

func (a *attribution) theLink() *Link {
	if a.hasLink {
		return a.link
	}
	return nil
}

// New returns a Tracker.
func New(opts Options) *Tracker {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = defaultIdle
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.MaxClosed <= 0 || opts.MaxClosed > opts.MaxConns {
		opts.MaxClosed = opts.MaxConns
	}
	if opts.TimelineMax <= 0 {
		opts.TimelineMax = defaultTimelineMax
	}
	t := &Tracker{
		opts:      opts,
		linkCap:   max(min(opts.MaxConns/4, opts.MaxClosed), 1),
		foldAt:    opts.MaxClosed,
		byTuple:   make(map[tcpKey]*Conn),
		endpoints: make(map[netip.AddrPort]int),
		byQP:      make(map[qpKey]linkRef),
		halfLinks: make(map[addrPair][]*Link),
		unknownQP: make(map[qpKey]*unknownQP),
	}
	t.linkFoldAt, t.histFoldAt = t.linkCap, maxHistory
	t.setFastUntil()
	t.folded.maxClosed, t.folded.maxConns, t.folded.idleAfter = opts.MaxClosed, opts.MaxConns, opts.IdleTimeout
	if n, err := strconv.Atoi(opts.Timeline); err == nil && n > 0 {
		t.timelineID = n
	}
	// Parsed once: recording runs per frame. Only the canonical form
	// matches, as the endpoint is shown in smc,conns.
	if ap, err := netip.ParseAddrPort(opts.Timeline); err == nil && ap.String() == opts.Timeline {
		t.timelineEP = ap
	}
	return t
}

// feed runs one frame through the tracker; in is t.in, filled by the adapter.
func (t *Tracker) feed(in *input) {
	// Whatever the frame changes, fastRoCE checks again before it trusts
	// a connection it cached.
	t.hot.forgetConns()
	t.cur.reset(in.number)
	t.fastCur.frame = 0 // cur is the frame's attribution (AppendFields)
	t.stats.Frames++
	if t.mirrors.due != mirrorSame {
		t.mirrorNote(in)
	}
	stamp := in.ns
	if !in.clocked {
		in.ns = t.clock.at(in.number, stamp)
	}
	if !in.clocked && t.clock.stepped {
		prev := t.clock.prev
		t.raiseText(&t.expert, expert.TimeBackwards, in, func() string {
			return fmt.Sprintf("the first is %s before the frame before it", fmtDur(time.Duration(prev-stamp)))
		})
	}
	t.lastNS = max(t.lastNS, in.ns)
	if s := in.skip; s != nil {
		t.raiseText(&t.expert, expert.CaptureDamaged, in, func() string {
			if s.Kept && s.FileHeader {
				return fmt.Sprintf("the file header at file offset %#x is damaged (%s), read all the same: no frame missing", s.Offset, s.Detail)
			}
			if s.Kept {
				return fmt.Sprintf("the block at file offset %#x is damaged (%s), read all the same: no frame missing", s.Offset, s.Detail)
			}
			return fmt.Sprintf("the record header at file offset %#x is damaged (%s): %d bytes skipped to this frame's record, at %#x", s.Offset, s.Detail, s.Skipped, s.At)
		})
	}
	if in.snapCut != 0 {
		t.raiseText(&t.expert, expert.SnapCut, in, func() string { return snapCutText(in) })
		t.cutShown.add(in)
		if in.cutSYN.ns != 0 && !in.cutSYN.ack {
			// A connection its CLC messages show later began here
			// (startConn).
			t.cutSYNs[in.number%len(t.cutSYNs)] = in.cutSYN
		}
	}
	switch {
	case in.isTCP:
		t.tcp(in)
	case in.isRoCE:
		t.roce(in)
	case in.isDump:
		t.dump(in)
	case in.isCopy:
		t.captureCopy(in)
	default:
		t.stats.Other++
		if in.unread {
			t.keepUnread(in, expert.None)
		}
	}
	t.account()
	if t.stats.Frames&1023 == 0 && in.ns-t.lastSweep > int64(t.opts.IdleTimeout/4) {
		t.sweep(in.ns)
	}
	// Folded after the frame, not while it is handled: the frame's
	// connection and link stay whole until it is done with them.
	if t.connsDue() {
		t.foldConns()
	}
	if t.linksDue() {
		t.foldLinks()
	}
	t.setFastUntil()
	t.countCarried()
}

// setFastUntil sets fastUntil after a frame handled by feed: the next
// frame count that is a multiple of 1024 (feed may sweep then), or 0 when
// fastRoCE must not run at all.
func (t *Tracker) setFastUntil() {
	t.fastUntil = 0
	if t.opts.Timeline == "" && t.opts.Stream == nil && !t.connsDue() && !t.linksDue() {
		t.fastUntil = (t.stats.Frames | 1023) + 1
	}
}

// connsDue and linksDue say that a fold is due after a frame (feed; the
// fast path steps aside then).
func (t *Tracker) connsDue() bool { return len(t.conns) > t.foldAt }

// linkEnded notes that a link can now be folded (deleted, rejected or
// retired): the links' triggers drop back to the caps.
func (t *Tracker) linkEnded() { t.linkFoldAt, t.histFoldAt = t.linkCap, maxHistory }

func (t *Tracker) linksDue() bool {
	return len(t.links) > t.linkFoldAt || t.history > t.histFoldAt
}

// account files the frame under exactly one of the Stats buckets.
func (t *Tracker) account() {
	switch {
	case t.cur.hasConn:
		t.stats.ConnAttached++
	case t.cur.unattached:
		t.stats.Unattached++
	case t.cur.hasLink:
		t.stats.LinkOnly++
	}
}

func (t *Tracker) touchConn(c *Conn, in *input, d Dir) {
	if t.replaying && c.FirstFrame != 0 {
		// A kept request's frame went by, and counted, long ago; it may
		// be older than the frame that made c (a CDC of the other
		// direction, followed first), or newer than c's last: c's frames
		// span it, as do the episodes measured from it.
		if in.number < c.FirstFrame {
			c.FirstFrame, c.Start = in.number, in.ts()
		}
		if in.number > c.LastFrame {
			c.LastFrame, c.lastNS = in.number, in.ns
		}
		t.cur.setConn(c)
		t.cur.dir = d
		return
	}
	if c.FirstFrame == 0 {
		c.FirstFrame = in.number
		c.Start = in.ts()
	}
	c.LastFrame = in.number
	c.lastNS = in.ns
	c.Frames++
	t.cur.setConn(c)
	t.cur.dir = d
}

// captureCopy counts in, a frame the capture already holds (followed
// once).
func (t *Tracker) captureCopy(in *input) {
	t.stats.CaptureDups++
	if t.seenCopies.otherPath {
		t.stats.CaptureDupsOtherPath++
	}
	if s := &t.seenCopies; s.byApart {
		t.stats.CaptureDupsApart++
		t.stats.CaptureApartNS = s.d
	}
	t.raise(&t.expert, expert.CaptureDuplicate, in)
}

func (t *Tracker) newConn(in *input) *Conn {
	if c := t.phantom; c != nil {
		// The connection a damaged copy began, begun again (tcp).
		t.phantom = nil
		*c = Conn{ID: c.ID, CLCTypes: c.CLCTypes[:0], expert: c.expert[:0]}
		return c
	}
	t.nextConn++
	var c *Conn
	if n := len(t.spare); n > 0 {
		c, t.spare = t.spare[n-1], t.spare[:n-1]
		*c = Conn{ID: t.nextConn, CLCTypes: c.CLCTypes[:0], expert: c.expert[:0]}
	} else {
		c = &Conn{ID: t.nextConn}
	}
	t.conns = append(t.conns, c)
	return c
}

// recording reports whether c's frames go into its timeline.
func (t *Tracker) recording(c *Conn) bool {
	switch {
	case t.opts.Timeline == "":
		return false
	case t.opts.Timeline == "all":
		return true
	case t.timelineID > 0:
		return c.ID == t.timelineID
	case t.timelineEP.IsValid():
		return c.Client == t.timelineEP || c.Server == t.timelineEP
	}
	return false
}

func (t *Tracker) note(c *Conn, in *input, d Dir, what, info string) {
	if len(c.Timeline) >= t.opts.TimelineMax {
		c.TimelineCut++
		return
	}
	e := Event{Frame: in.number, Time: in.ts(), Dir: d, What: what, Info: info}
	if n := len(c.Timeline); n > 0 && c.Timeline[n-1].Frame > e.Frame {
		// A frame followed late (a run kept out of sequence): in its
		// place, after the events of its own frame.
		i, _ := slices.BinarySearchFunc(c.Timeline, e.Frame+1, func(x Event, f int) int { return cmp.Compare(x.Frame, f) })
		c.Timeline = slices.Insert(c.Timeline, i, e)
		return
	}
	c.Timeline = append(c.Timeline, e)
}

// sweep ends connections idle for longer than the idle timeout and forgets
// unknown QPs, so the live tables follow the live connections.
func (t *Tracker) sweep(now int64) {
	timeout := int64(t.opts.IdleTimeout)
	t.lastSweep = now
	// t.conns is in the order the connections began, and every live one
	// is in it (also each of the 4-tuple table): one that began within
	// the idle timeout cannot have been idle for longer, nor can any that
	// began after it. The sweep visits the old ones only.
	var idle []*Conn
	for _, c := range t.conns {
		if now-c.Start.UnixNano() <= timeout {
			break
		}
		if !c.finished && now-c.lastNS > timeout {
			t.untuple(c)
			c.idled = !c.Closed() // a closed one is only tidied away
			idle = append(idle, c)
		}
	}
	t.finish(idle...)
	for k, u := range t.unknownQP {
		if now-u.last > timeout {
			delete(t.unknownQP, k)
		}
	}
	// Links of deleted link groups, and links seen only as traffic, leave
	// the wire-key table once idle, so a later group reusing the QPNs
	// starts clean and the table follows the live links.
	for _, l := range t.links {
		if !l.retired && (l.lgr.Deleted || l.Inferred || l.State == LinkRejected) && now-l.lastNS > timeout {
			t.retire(l)
		}
	}
}

// tuple puts c in the 4-tuple table, in place of any connection there.
func (t *Tracker) tuple(c *Conn) {
	k := makeTCPKey(c.Client, c.Server)
	if old := t.byTuple[k]; old != nil {
		t.endpointsDrop(old)
	}
	t.byTuple[k] = c
	t.endpoints[c.Client]++
	t.endpoints[c.Server]++
}

// untuple takes c out of the 4-tuple table.
func (t *Tracker) untuple(c *Conn) {
	if k := makeTCPKey(c.Client, c.Server); t.byTuple[k] == c {
		delete(t.byTuple, k)
		t.endpointsDrop(c)
	}
	if t.lastTuple == c {
		t.lastTuple = nil
	}
}

// retire takes l out of the lookup tables; it stays in the views.
func (t *Tracker) retire(l *Link) {
	l.retired = true
	t.linkEnded()
	for d := range 2 {
		if l.keyed[d] {
			if ref, ok := t.byQP[l.keys[d]]; ok && ref.link == l {
				delete(t.byQP, l.keys[d])
			}
		}
	}
	t.clearQPCache()
	if l.keyed[0] != l.keyed[1] {
		k := l.keys[l.knownDir()]
		t.removeHalf(addrPair{k.src, k.dst}, l)
	}
	l.conns = nil
	g := l.lgr
	for _, x := range g.links {
		if !x.retired {
			return
		}
	}
	// Emptied, not replaced: a recycled group or link (Tracker.recycle)
	// uses them again instead of making new ones.
	clear(g.tokens[0])
	clear(g.tokens[1])
	clear(g.pendingRKeys)
	g.conns = nil
	for _, x := range g.links {
		clear(x.rkeys[0])
		clear(x.rkeys[1])
	}
}

// finish marks connections as no longer live: out of their link groups'
// lookup tables and connection lists. Several at once (an idle sweep, a
// fold) cost one pass over each group's tables, not one per connection.
func (t *Tracker) finish(cs ...*Conn) {
	// The set is kept from one call to the next: folds call every few
	// dozen connections.
	groups := t.finishGroups
	defer func() { clear(t.finishGroups) }()
	for _, c := range cs {
		if c.finished {
			continue
		}
		c.finished = true
		g := c.lgr
		if g == nil {
			continue
		}
		for d := range 2 {
			if c.hasTok[d] {
				if g.tokens[d][c.tokens[d]] == c {
					delete(g.tokens[d], c.tokens[d])
				}
			}
		}
		if groups == nil {
			groups = map[*LinkGroup]bool{}
			t.finishGroups = groups
		}
		groups[g] = true
	}
	for g := range groups {
		for _, l := range g.links {
			for _, m := range l.rkeys {
				for k, r := range m {
					if r.conn.finished {
						delete(m, k)
					}
				}
			}
		}
		// A connection that moved (failover) is in the lists of each link
		// it used.
		g.conns = liveConns(g.conns)
		for _, l := range g.links {
			l.conns = liveConns(l.conns)
		}
	}
}

// liveConns drops finished connections from list, in place.
func liveConns(list []*Conn) []*Conn {
	out := list[:0]
	for _, c := range list {
		if !c.finished {
			out = append(out, c)
		}
	}
	clear(list[len(out):])
	return out
}

func removeConn(list []*Conn, c *Conn) []*Conn {
	for i, x := range list {
		if x == c {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// unregister takes c out of its link group's lookup tables.
func (t *Tracker) unregister(c *Conn) {
	g := c.lgr
	if g == nil {
		return
	}
	for d := range 2 {
		if c.hasTok[d] && g.tokens[d][c.tokens[d]] == c {
			delete(g.tokens[d], c.tokens[d])
		}
	}
	for _, l := range g.links {
		for _, m := range l.rkeys {
			for k, r := range m {
				if r.conn == c {
					delete(m, k)
				}
			}
		}
	}
}

// EndCapture says that the capture ended: no frame comes after the last
// one fed. What was pending then (a handshake step, a link's
// confirmation, an LLC response) becomes a finding of its own
// (expert.EndedPending); a capture still being read, live or replayed,
// has no end yet. end is when the capture ended where the capture file
// says so (a pcapng Interface Statistics Block's isb_endtime: a capture
// may go on after its last frame), or zero: at its last frame.
func (t *Tracker) EndCapture(end time.Time) {
	if !t.opts.Unshared {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	t.ended = true
	if !end.IsZero() {
		t.endNS = t.clock.project(end.UnixNano())
	}
	t.releaseHeld(math.MaxInt64)
	for _, c := range t.conns {
		if c.noCLCEarly != nil && !c.SeenSYNACK {
			t.noSYNACKFallback(c, nil)
		}
	}
	t.adoptDeleted()
	t.settleRuns()
	t.settleMirrors()
}

// settleRuns settles every run out of sequence still open when the
// capture ended (settleRun).
func (t *Tracker) settleRuns() {
	end := max(t.lastNS, t.endNS)
	for _, l := range t.links {
		for d := range Dir(2) {
			t.settleRun(l, d, end)
		}
	}
}

// settleRun ends the run out of sequence of direction d of l when no word
// of the network can come any more (the capture ended, the link was
// deleted or its connections moved off it) and none came: no NAK, no
// resend of the PSN the responder waited for. The responder NAKs the first
// request of a run as it comes and the requester goes back at once, so a
// run the capture went on past for lateMax with neither is the capture's
// miss, as when it outgrows its window: the requests kept from it are
// followed, in PSN order. This is how a capture of one direction (where
// the responder's ACKs are never seen) that dropped a frame still counts
// the CDCs and bytes that came after the drop. A younger run stays open,
// the network's word may have come just after; unless the capture shows
// nothing the responder's side sent on the link group: then no word was
// ever to come. A run whose loss the wire showed stays as it is.
func (t *Tracker) settleRun(l *Link, d Dir, now int64) {
	rc := &l.RC[d]
	w := &rc.ahead
	if !w.run || w.shown || rc.resyncing || !l.oneWay() && now-w.since < int64(lateMax) {
		return
	}
	saved := t.cur
	// An input of its own: a run may be settled while another is (a
	// failover CDC among the requests followed), and this is rare.
	in := &input{number: w.frame, ns: w.since, isRoCE: true}
	t.cur.reset(in.number)
	t.resync(l, d, (rc.maxPSN+1)&0xFFFFFF, in)
	t.cur = saved
}
