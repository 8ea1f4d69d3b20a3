package track

import (
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Options tune memory and what is recorded. The zero value is usable.
type Options struct {
	// IdleTimeout removes a connection from the live tables when no frame
	// of it was seen for this long (capture time). Default 15 minutes: an
	// SMC-R connection's TCP stays silent while data flows over RDMA, and
	// Linux keeps an idle link group for 10 minutes.
	IdleTimeout time.Duration
	// MaxConns caps how many connections are kept for the views; the
	// oldest finished ones are dropped first and counted in Stats.Evicted.
	// Default 100000.
	MaxConns int
	// Timeline selects connections whose frames are recorded one by one
	// for the smc,timeline view: "" none, "all", a tracker connection ID
	// ("3") or an endpoint ("10.10.0.2:49018") of the TCP connection.
	// Recorded events cost memory per frame (up to TimelineMax per
	// connection), so "all" is for small captures.
	Timeline string
	// TimelineMax caps the events kept per connection (default 100000).
	TimelineMax int
}

const (
	defaultIdle        = 15 * time.Minute
	defaultMaxConns    = 100000
	defaultTimelineMax = 100000
	maxLinkHistory     = 256
	maxCLCTypes        = 8
	maxUnknownQPs      = 4096
)

// Tracker follows connections, links and link groups over a stream of
// frames. Feed it every frame in capture order; Snapshot and the views may
// be called at any time, also from another goroutine.
type Tracker struct {
	mu    sync.Mutex
	opts  Options
	stats Stats

	conns []*Conn
	links []*Link
	lgrs  []*LinkGroup

	byTuple   map[tcpKey]*Conn
	byQP      map[qpKey]linkRef
	halfLinks map[addrPair][]*Link // inferred links whose reverse direction is not keyed yet
	unknownQP map[qpKey]*unknownQP
	// pendingHalf holds connections whose Confirm came before any traffic
	// of their link (the capture started after the Accept); their S->C
	// CDCs claim them once the link shows up (claimHalf).
	pendingHalf []*Conn

	nextConn, nextLink, nextLGR int
	lastSweep                   time.Time
	timelineID                  int            // > 0 when Options.Timeline names an ID
	timelineEP                  netip.AddrPort // valid when Options.Timeline names an endpoint

	in  input
	cur attribution
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
	last   time.Time
}

// attribution is what the last fed frame was tied to, for AppendFields.
type attribution struct {
	frame      int
	conn       *Conn
	link       *Link
	dir        Dir
	cdcBytes   uint64
	hasCDC     bool
	retrans    bool
	psnGap     int
	unattached bool
}

// New returns a Tracker.
func New(opts Options) *Tracker {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = defaultIdle
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = defaultMaxConns
	}
	if opts.TimelineMax <= 0 {
		opts.TimelineMax = defaultTimelineMax
	}
	t := &Tracker{
		opts:      opts,
		byTuple:   make(map[tcpKey]*Conn),
		byQP:      make(map[qpKey]linkRef),
		halfLinks: make(map[addrPair][]*Link),
		unknownQP: make(map[qpKey]*unknownQP),
	}
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
	t.cur = attribution{frame: in.number}
	t.stats.Frames++
	switch {
	case in.isTCP:
		t.tcp(in)
	case in.isRoCE:
		t.roce(in)
	default:
		t.stats.Other++
	}
	t.account()
	if t.stats.Frames&1023 == 0 && in.ts.Sub(t.lastSweep) > t.opts.IdleTimeout/4 {
		t.sweep(in.ts)
	}
}

// account files the frame under exactly one of the Stats buckets.
func (t *Tracker) account() {
	switch {
	case t.cur.conn != nil:
		t.stats.ConnAttached++
	case t.cur.unattached:
		t.stats.Unattached++
	case t.cur.link != nil:
		t.stats.LinkOnly++
	}
}

func (t *Tracker) touchConn(c *Conn, in *input, d Dir) {
	if c.FirstFrame == 0 {
		c.FirstFrame = in.number
		c.Start = in.ts
	}
	c.LastFrame = in.number
	c.Last = in.ts
	c.Frames++
	t.cur.conn = c
	t.cur.dir = d
}

func (t *Tracker) newConn(in *input) *Conn {
	t.nextConn++
	c := &Conn{ID: t.nextConn}
	t.conns = append(t.conns, c)
	if len(t.conns) > t.opts.MaxConns {
		t.evict()
	}
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
	c.Timeline = append(c.Timeline, Event{Frame: in.number, Time: in.ts, Dir: d, What: what, Info: info})
}

// sweep ends connections idle for longer than the idle timeout and forgets
// unknown QPs, so the live tables follow the live connections.
func (t *Tracker) sweep(now time.Time) {
	t.lastSweep = now
	for k, c := range t.byTuple {
		if now.Sub(c.Last) > t.opts.IdleTimeout {
			delete(t.byTuple, k)
			t.finish(c)
		}
	}
	for _, c := range t.conns {
		if !c.finished && c.Inferred && now.Sub(c.Last) > t.opts.IdleTimeout {
			t.finish(c) // inferred connections have no tuple entry
		}
	}
	for k, u := range t.unknownQP {
		if now.Sub(u.last) > t.opts.IdleTimeout {
			delete(t.unknownQP, k)
		}
	}
	// Links of deleted link groups, and links seen only as traffic, leave
	// the wire-key table once idle, so a later group reusing the QPNs
	// starts clean and the table follows the live links.
	for _, l := range t.links {
		if !l.retired && (l.lgr.Deleted || l.Inferred || l.State == LinkRejected) && now.Sub(l.Last) > t.opts.IdleTimeout {
			t.retire(l)
		}
	}
	if len(t.links) > t.opts.MaxConns {
		t.evictLinks()
	}
}

// retire takes l out of the lookup tables; it stays in the views.
func (t *Tracker) retire(l *Link) {
	l.retired = true
	for d := range 2 {
		if l.keyed[d] {
			if ref, ok := t.byQP[l.keys[d]]; ok && ref.link == l {
				delete(t.byQP, l.keys[d])
			}
		}
	}
	t.qpCache = [4]qpCacheEntry{}
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
	g.tokens, g.rkeys, g.pendingRKeys, g.conns = map[tokenKey]*Conn{}, map[rkeyKey]rmbRef{}, map[rkeyKey][]rkeyOther{}, nil
}

// evictLinks drops the oldest retired links and their empty link groups
// from the views beyond Options.MaxConns.
func (t *Tracker) evictLinks() {
	var n int
	t.links, n = dropOldest(t.links, len(t.links)-t.opts.MaxConns*9/10, func(l *Link) bool { return l.retired })
	t.stats.EvictedLinks += n
	live := map[*LinkGroup]bool{}
	for _, l := range t.links {
		live[l.lgr] = true
	}
	gs := t.lgrs[:0]
	for _, g := range t.lgrs {
		if live[g] {
			gs = append(gs, g)
		}
	}
	clear(t.lgrs[len(gs):])
	t.lgrs = gs
}

// finish marks c as no longer live.
func (t *Tracker) finish(c *Conn) {
	c.finished = true
	t.unregister(c)
	if c.lgr != nil {
		c.lgr.conns = removeConn(c.lgr.conns, c)
	}
	if c.link != nil {
		c.link.conns = removeConn(c.link.conns, c)
	}
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
		if c.hasTok[d] {
			k := tokenKey{Dir(d), c.tokens[d]}
			if g.tokens[k] == c {
				delete(g.tokens, k)
			}
		}
	}
	for k, r := range g.rkeys {
		if r.conn == c {
			delete(g.rkeys, k)
		}
	}
}

// evict drops the oldest finished connections beyond Options.MaxConns; if
// too few are finished the oldest live ones go (their counters are lost,
// the count says so).
func (t *Tracker) evict() {
	// Evict in batches down to 90 % so that the scan is not paid per
	// new connection once the cap is reached.
	excess := len(t.conns) - t.opts.MaxConns*9/10
	out, n := dropOldest(t.conns, excess, func(c *Conn) bool { return c.finished })
	t.stats.Evicted += n
	excess -= n
	for excess > 0 && len(out) > 1 {
		c := out[0]
		if k := makeTCPKey(c.Client, c.Server); t.byTuple[k] == c {
			delete(t.byTuple, k)
		}
		t.finish(c)
		out = out[1:]
		excess--
		t.stats.Evicted++
	}
	t.conns = out
}

// dropOldest removes from list, in place and oldest first, up to n
// elements for which done is true, and says how many went.
func dropOldest[T any](list []*T, n int, done func(*T) bool) ([]*T, int) {
	out := list[:0]
	dropped := 0
	for _, x := range list {
		if dropped < n && done(x) {
			dropped++
			continue
		}
		out = append(out, x)
	}
	clear(list[len(out):])
	return out, dropped
}
