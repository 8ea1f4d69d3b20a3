package track

import (
	"slices"
	"time"
)

// Folding keeps the tracker's memory flat however many connections a
// capture holds: beyond Options.MaxClosed the oldest ended connections,
// beyond Options.MaxConns the oldest of any (and beyond their caps the
// oldest links and link groups) leave the tracker and only their sums
// stay, in folded. The views' totals add what is still listed, so they
// count every connection of the capture.

// folded sums the connections, links and link groups no longer kept whole.
type folded struct {
	conns      connSums
	links      linkSums
	linkGroups lgrSums
	// The rule that folded them, for Totals: Options.MaxClosed,
	// Options.MaxConns, Options.IdleTimeout.
	maxClosed, maxConns int
	idleAfter           time.Duration
	// Fallbacks by reason, as smc,decline counts them. The key space is
	// the wire's (any 32-bit decline code), so it is capped; the rest is
	// counted under reasonOther.
	reasons map[fallbackReason]int
	// expert sums the findings of what was folded, per finding.
	expert expertSums
}

// MaxFoldedReasons is how many distinct fallback reasons are counted
// apart among folded connections (FoldedFallbacks).
const MaxFoldedReasons = maxReasons

// maxReasons caps the distinct fallback reasons kept for folded
// connections; a few are normal (Linux has some forty decline codes).
const maxReasons = 1024

// fallbackReason is what smc,decline counts a fallback by.
type fallbackReason struct {
	cause FallbackCause
	code  uint32
	by    Dir
}

// reasonOther collects folded fallbacks beyond maxReasons distinct reasons.
var reasonOther = fallbackReason{cause: causeOther}

// causeOther is not a cause the tracker finds: it only labels reasonOther.
const causeOther FallbackCause = 0xFF

type connSums struct {
	n, open  int // connections; of those, folded before they ended
	idle     int // folded after no frame for Options.IdleTimeout, not closed
	outcomes [len(outcomeNames)]int
	closed   int
	frames   int
	flow     [2]FlowTotals
}

func (s *connSums) add(c *Conn) {
	s.n++
	if int(c.Outcome) < len(s.outcomes) {
		s.outcomes[c.Outcome]++
	}
	if c.Closed() {
		s.closed++
	}
	s.frames += c.Frames
	for d := range c.Flow {
		s.flow[d].add(&c.Flow[d])
	}
}

func (f *FlowTotals) add(x *Flow) {
	f.CDCs += x.CDCs
	f.Bytes += x.Bytes
	f.WriteBytes += x.WriteBytes
	f.Writes += x.Writes
	f.TCPBytes += x.TCPBytes
}

type linkSums struct {
	n      int
	states [len(linkStateNames)]int
	rc     [2]RCTotals
}

func (s *linkSums) add(l *Link) {
	s.n++
	if int(l.State) < len(s.states) {
		s.states[l.State]++
	}
	for d := range l.RC {
		s.rc[d].add(&l.RC[d])
	}
}

func (r *RCTotals) add(x *RC) {
	r.Packets += x.Packets
	r.Acks += x.Acks
	r.NAKs += x.NAKs
	r.RNRs += x.RNRs
	r.PSNGaps += x.PSNGaps
	r.Retrans += x.Retrans
}

type lgrSums struct {
	n, deleted int
}

func (s *lgrSums) add(g *LinkGroup) {
	s.n++
	if g.Deleted {
		s.deleted++
	}
}

// reasonOf is the reason a fallback connection is counted under.
func reasonOf(c *Conn) fallbackReason {
	r := fallbackReason{cause: c.Fallback.Cause, by: c.Fallback.By}
	if r.cause == CauseDecline {
		r.code = c.Fallback.Code
	}
	return r
}

// doneForGood: nothing more is expected of c. An SMC-R connection's CDCs
// say it closed before its TCP connection sends the FINs.
func doneForGood(c *Conn) bool {
	if c.finished {
		return true
	}
	if !c.Closed() {
		return false
	}
	f0, f1 := &c.Flow[0], &c.Flow[1]
	return c.Inferred || (f0.FIN && f1.FIN) || f0.RST || f1.RST
}

// foldConns folds the oldest connections into t.folded: ended ones beyond
// Options.MaxClosed, and beyond Options.MaxConns any, down to 90 % of the
// cap so that the work is paid once per batch and not per new connection:
// ended ones first, then ones that closed their SMC side, then open ones.
// The connection whose timeline was asked for by ID or endpoint stays.
func (t *Tracker) foldConns() {
	pin := t.timelinePin()
	excess, ended := 0, 0
	if len(t.conns) > t.opts.MaxConns {
		excess = len(t.conns) - t.opts.MaxConns*9/10
	}
	if t.opts.MaxClosed < t.opts.MaxConns {
		for _, c := range t.conns {
			if c != pin && doneForGood(c) {
				ended++
			}
		}
		if ended > t.opts.MaxClosed {
			ended -= t.opts.MaxClosed * 9 / 10
		} else {
			ended = 0
		}
	}
	defer func() {
		// Counting the ended ones is a pass over the kept connections:
		// the next one comes after a tenth of MaxClosed new connections,
		// so that open connections piling up (which stay) cost a pass per
		// batch, not per connection.
		t.foldAt = min(t.opts.MaxConns, max(t.opts.MaxClosed, len(t.conns)+max(t.opts.MaxClosed/10, 1)))
	}()
	// The batch's lists are kept from one fold to the next: with a small
	// MaxClosed a capture of short connections folds every few dozen.
	fs := &t.foldScratch
	out, at := fs.out[:0], fs.at[:0] // at: their places in t.conns
	defer func() {
		clear(out)
		fs.out, fs.at = out[:0], at[:0]
		clear(fs.gone)
		clear(fs.groups)
	}()
	for pass := 0; pass < 3 && (excess > 0 || pass == 0 && ended > 0); pass++ {
		for i, c := range t.conns {
			if excess <= 0 && (pass > 0 || ended <= 0) {
				break
			}
			if c.folded || c == pin {
				continue
			}
			switch {
			case pass == 0 && !doneForGood(c), pass == 1 && !c.Closed():
				continue
			}
			c.folded = true
			out = append(out, c)
			at = append(at, i)
			excess--
			ended--
		}
	}
	if len(out) == 0 {
		return // all kept back for a timeline
	}
	for _, c := range out {
		if c.idled {
			t.folded.conns.idle++
		}
		if c.finished {
			continue
		}
		if !doneForGood(c) {
			t.folded.conns.open++
		}
		t.untuple(c)
	}
	t.finish(out...)
	if fs.gone == nil {
		fs.gone, fs.groups = map[int]bool{}, map[*LinkGroup]bool{}
	}
	gone, groups := fs.gone, fs.groups
	for _, c := range out {
		t.foldConn(c)
		gone[c.ID] = true
		if c.lgr != nil {
			groups[c.lgr] = true
		}
	}
	// Compacted by place: the kept connections are not visited (each
	// visit is a cache miss, and most of them stay).
	slices.Sort(at)
	n := at[0]
	for k, i := range at {
		end := len(t.conns)
		if k+1 < len(at) {
			end = at[k+1]
		}
		n += copy(t.conns[n:], t.conns[i+1:end])
	}
	clear(t.conns[n:])
	t.conns = t.conns[:n]
	// The link and link-group rows list their connections by ID; folded
	// ones leave the lists and are counted instead.
	for g := range groups {
		g.Conns, g.ConnsFolded = dropIDs(g.Conns, gone, g.ConnsFolded)
		for _, l := range g.links {
			l.Conns, l.ConnsFolded = dropIDs(l.Conns, gone, l.ConnsFolded)
		}
		if g.folded {
			// Its links went before its last connections did.
			t.recycle(g)
		}
	}
	if len(t.pendingHalf) > 0 {
		t.pendingHalf = slices.DeleteFunc(t.pendingHalf, func(c *Conn) bool { return c.folded })
	}
	// Nothing points to the folded connections any more (finish took them
	// out of the tables and lists, foldConn out of the links' recent
	// requests), so they serve the next ones: a connection is 1 KiB, and a
	// capture of short connections otherwise makes the collector run three
	// times as often, slowing the decoders with its write barriers.
	for _, c := range out {
		if len(t.spare) > t.opts.MaxConns/8 {
			break // a batch is a tenth of the cap
		}
		c.Timeline = nil
		t.spare = append(t.spare, c)
	}
}

// foldScratch is what foldConns reuses from one batch to the next.
type foldScratch struct {
	out    []*Conn
	at     []int
	gone   map[int]bool
	groups map[*LinkGroup]bool
}

// dropIDs removes the IDs in gone from ids, in place, and adds how many
// went to n.
func dropIDs(ids []int, gone map[int]bool, n int) ([]int, int) {
	out := ids[:0]
	for _, id := range ids {
		if gone[id] {
			n++
			continue
		}
		out = append(out, id)
	}
	return out, n
}

// foldConn adds c, finished, to the folded sums.
func (t *Tracker) foldConn(c *Conn) {
	// ACKs and WRITE continuations found their connection through these;
	// later ones now count for the link only.
	if g := c.lgr; g != nil {
		for _, l := range g.links {
			for d := range l.RC {
				rc := &l.RC[d]
				for i := range rc.recent {
					if rc.recent[i].conn == c {
						rc.recent[i].conn = nil
					}
				}
				if rc.curWrite == c {
					rc.curWrite = nil
				}
			}
		}
	}
	t.folded.conns.add(c)
	t.foldConnFindings(c)
	if c.Outcome == OutcomeFallback {
		r := reasonOf(c)
		if t.folded.reasons == nil {
			t.folded.reasons = map[fallbackReason]int{}
		}
		if _, ok := t.folded.reasons[r]; !ok && len(t.folded.reasons) >= maxReasons {
			r = reasonOther
		}
		t.folded.reasons[r]++
	}
	t.stats.Evicted++
}

// timelinePin is the connection a timeline was asked for by ID or
// endpoint: the first one recorded, which smc,timeline shows (FindConn).
// With Timeline "all" every connection is recorded and none is kept back.
func (t *Tracker) timelinePin() *Conn {
	if t.opts.Timeline == "" || t.opts.Timeline == "all" {
		return nil
	}
	for _, c := range t.conns {
		if t.recording(c) {
			return c
		}
	}
	return nil
}

// foldLinks folds the oldest links beyond linkCap, or while their
// histories hold more than maxHistory events, down to 90 %: links out of
// the lookup tables first, then links of deleted groups and rejected ones,
// and of those first the ones no kept connection uses (so that a listed
// connection's link stays listed with it). Links in use are folded only
// beyond Options.MaxConns of them: one that is still used would come back
// as a link joined mid-stream. A link group goes with its last link.
func (t *Tracker) foldLinks() {
	excess := len(t.links) - t.linkCap*9/10
	hist := t.history - maxHistory*9/10
	over := func() bool { return excess > 0 || hist > 0 }
	passes := 4
	if len(t.links) > t.opts.MaxConns {
		passes, excess = 5, len(t.links)-t.opts.MaxConns*9/10
	}
	for pass := 0; pass < passes && over(); pass++ {
		for _, l := range t.links {
			if !over() {
				break
			}
			if l.folded {
				continue
			}
			ended := l.retired
			if pass%2 == 1 {
				ended = ended || l.lgr.Deleted || l.State == LinkRejected || l.State == LinkDeleted
			}
			if !ended && pass < 4 || pass < 2 && len(l.Conns) > 0 {
				continue
			}
			hist -= len(l.hist)
			t.foldLink(l)
			excess--
		}
	}
	kept := t.links[:0]
	for _, l := range t.links {
		if !l.folded {
			kept = append(kept, l)
		}
	}
	clear(t.links[len(kept):])
	t.links = kept
	gs := t.lgrs[:0]
	for _, g := range t.lgrs {
		if len(g.links) > 0 {
			gs = append(gs, g)
			continue
		}
		t.folded.linkGroups.add(g)
		t.foldLGRFindings(g)
		t.stats.EvictedLGRs++
		g.folded = true
		t.recycle(g)
	}
	clear(t.lgrs[len(gs):])
	t.lgrs = gs
	// Live links are folded only beyond MaxConns: when more of them than
	// linkCap, or their histories, stay after this fold, the next comes
	// after a tenth of the cap more, not on every frame.
	t.linkFoldAt, t.histFoldAt = t.linkCap, maxHistory
	if len(t.links) > t.linkCap {
		t.linkFoldAt = min(t.opts.MaxConns, len(t.links)+max(t.linkCap/10, 1))
	}
	if t.history > maxHistory {
		t.histFoldAt = t.history + maxHistory/10
	}
}

// foldLink takes l out of the lookup tables and out of its group, and adds
// it to the folded sums.
func (t *Tracker) foldLink(l *Link) {
	if !l.retired {
		t.retire(l)
	}
	l.folded = true
	t.history -= len(l.hist)
	clear(l.hist)
	l.hist = l.hist[:0]
	g := l.lgr
	for i, x := range g.links {
		if x == l {
			g.links = append(g.links[:i], g.links[i+1:]...)
			break
		}
	}
	if len(g.gone) < maxGone {
		g.gone = append(g.gone, l)
	}
	g.Links = removeID(g.Links, l.ID)
	g.LinksFolded++
	t.folded.links.add(l)
	t.foldLinkFindings(l)
	t.stats.EvictedLinks++
}

// maxGone caps the folded links a group keeps for recycle; Linux has at
// most 3 links per group (SMC_LINKS_PER_LGR_MAX, net/smc/smc_core.h), more
// come and go only in a group that fails over again and again.
const maxGone = 8

// recycle keeps a folded link group and its folded links for newLGR and
// newLink when nothing points to them any more: no kept connection is in
// the group (a connection's link is one of its group's), their lookup
// tables were emptied when the links retired, and snapshots copy what they
// show. It is called when the group is folded and, if connections of it
// were still kept then, when the last of them is. A capture that sets up a link group per connection then makes no
// garbage per connection, and the heap, and peak RSS, stay flat however
// long it is. A group that still has connections is left to the collector.
func (t *Tracker) recycle(g *LinkGroup) {
	if len(g.Conns) > 0 || len(g.conns) > 0 {
		return // foldConns calls again when they are folded
	}
	gone := g.gone
	g.gone = nil
	spares := max(t.linkCap/2, 64) // a batch of folds is a tenth of the caps, of links twice that
	for _, l := range gone {
		if len(t.spareLinks) < spares {
			l.lgr = nil
			t.spareLinks = append(t.spareLinks, l)
		}
	}
	if len(t.spareLGRs) < spares {
		t.spareLGRs = append(t.spareLGRs, g)
	}
}
