package track

import (
	"slices"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/expert"
)

// aheadCopies holds the RoCE frames of a capture path whose cut copies
// come before the packets themselves. A mirror session that truncates
// its copies (ERSPAN's T bit) and delivers them to a host whose own
// traffic is captured too puts each copy in the capture before the packet
// where the mirroring host sends it first; captureDup then takes the
// packet, whole, for the copy, and the tracker would follow the cut copy:
// an LLC or CDC message cut inside is a SEND of no known content, a
// WRITE's bytes past the cut are unknown. Once the capture showed one
// such pair (a cut copy, then its packet whole by another path), every
// RoCE frame of that path waits for its packet, for as long as a copy by
// another path is looked for (crossPathWindow): the packet is followed
// and the copy counted (takeTwin); one whose packet the capture lacks is
// followed as it is, in capture order with the path's others, when its
// time is up (releaseHeld).
type aheadCopies struct {
	// on: a path was learned (paths), and FeedFast gives its frames to
	// Feed.
	on    bool
	paths [4]uint32 // the paths learned (capturePath), 0 none
	held  []heldFrame
	// in is what a held frame is fed as (t.in holds the frame being fed).
	in input
}

// heldFrame is a frame of a learned path, as the tracker follows it.
type heldFrame struct {
	keptReq
	skip               *capture.SkipError
	snapKept, snapWire int
	path               uint32 // capturePath
}

// maxHeld bounds the frames held: at the lab's rates, the copies of a
// few milliseconds. The oldest is followed to make room.
const maxHeld = 512

// cutWirePath stands for the cut frames of path 0 (as they went on the
// wire) once cut copies on it came before their packets whole: two
// interfaces captured with two snap lengths, or a capture on a bond (or
// any interface) whose member's snap length is shorter. capturePath's
// paths are odd.
const cutWirePath uint32 = 2

// heldPath is the path f's frame is held by (hold): its capturePath, or
// cutWirePath for a cut frame as it went on the wire.
func heldPath(f *capture.Frame) uint32 {
	if p := capturePath(f); p != 0 || !f.Cut {
		return p
	}
	return cutWirePath
}

// learn adds path to the paths whose copies come before their packets;
// a tunnel's, or cutWirePath (the frames as they went whole, path 0, are
// what the copies wait for).
func (a *aheadCopies) learn(path uint32) {
	if path == 0 {
		return
	}
	for i, p := range a.paths {
		if p == path {
			return
		}
		if p == 0 {
			a.paths[i], a.on = path, true
			return
		}
	}
}

// hold keeps f, a frame of a learned path, for its packet: it reports
// whether it did. A frame whose time steps the capture clock back is
// followed at once (the step is a finding of its own frame).
func (t *Tracker) hold(f *capture.Frame) bool {
	a := &t.ahead
	if f.BTH == nil {
		return false
	}
	path := heldPath(f)
	if path == 0 || !slices.Contains(a.paths[:], path) {
		return false
	}
	in := &a.in
	t.fillFrame(in, f)
	if !in.isRoCE {
		return false
	}
	ns := t.clock.at(in.number, in.ns)
	if t.clock.stepped {
		// feed reads the clock again: the same frame, the same time.
		return false
	}
	in.ns = ns
	if t.mirrors.due != mirrorSame {
		// What the frame's mirror session number said (a gap before
		// it, or one it filled) is noted now: the frame is fed later,
		// after others.
		cur := t.cur
		t.mirrorNote(in)
		t.cur = cur
	}
	if len(a.held) == maxHeld {
		t.releaseFirst(1)
	}
	a.held = append(a.held, heldFrame{keptReq: keptOf(in), skip: in.skip, snapKept: in.snapKept, snapWire: in.snapWire, path: path})
	return true
}

// Settle follows the frames held for packets that can no longer come by
// now, the capture's time (a live capture's: the clock's), as the next
// frame read would: a live capture that goes quiet shows what it held.
func (t *Tracker) Settle(now time.Time) {
	if !t.opts.Unshared {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	if len(t.ahead.held) > 0 {
		t.releaseHeld(now.UnixNano() - crossPathWindow)
	}
}

// releaseHeld follows the held frames from before before (their packets
// did not come in time: the capture lacks them).
func (t *Tracker) releaseHeld(before int64) {
	n := 0
	for n < len(t.ahead.held) && t.ahead.held[n].ns < before {
		n++
	}
	t.releaseFirst(n)
}

// releaseFirst follows the first n held frames, in capture order.
func (t *Tracker) releaseFirst(n int) {
	a := &t.ahead
	for i := range n {
		t.feedHeld(&a.held[i], false)
	}
	a.held = slices.Delete(a.held, 0, n)
}

// takeTwin follows f, a packet whose copy came by another path before it
// and is held: f is followed, the copy counted as one. It reports whether
// the copy was held. The copy is found by its queue pair, PSN and opcode,
// not by captureDup's memory, whose slot another packet may have taken
// meanwhile. Held or not, the held frames of f's queue pair and
// direction that came before it by another path are followed first: their
// packets, which come in the order their copies did, are not in the
// capture.
func (t *Tracker) takeTwin(f *capture.Frame) bool {
	a := &t.ahead
	b := f.BTH
	if b == nil {
		return false
	}
	var k qpKey
	k.src, k.dst = roceAddrs(f)
	k.qpn = uint64(b.DestQP)
	path := heldPath(f)
	i := slices.IndexFunc(a.held, func(h heldFrame) bool {
		r := &h.roce
		return r.psn == b.PSN && r.key == k && r.opcode == uint8(b.Opcode) && h.path != path
	})
	if i < 0 {
		t.releaseFlow(k, path, len(a.held))
		return false
	}
	i -= t.releaseFlow(k, path, i)
	t.feedFrame(f)
	cur := t.cur
	t.seenCopies.otherPath = a.held[i].path != cutWirePath // captureCopy's count: the copy came by its path
	t.feedHeld(&a.held[i], true)
	t.cur = cur
	a.held = slices.Delete(a.held, i, i+1)
	return true
}

// releaseFlow follows the held frames before index upto of queue pair
// direction k that came by another path than path, in capture order, and
// returns how many it followed.
func (t *Tracker) releaseFlow(k qpKey, path uint32, upto int) int {
	a := &t.ahead
	n := 0
	for j := 0; j < upto-n; {
		if h := &a.held[j]; h.roce.key == k && h.path != path {
			t.feedHeld(h, false)
			a.held = slices.Delete(a.held, j, j+1)
			n++
			continue
		}
		j++
	}
	return n
}

// feedHeld feeds the held frame h, or counts it as a copy. The frame
// being fed keeps its mirror session's change (mirrorNote).
func (t *Tracker) feedHeld(h *heldFrame, asCopy bool) {
	in := &t.ahead.in
	// Only frames of a learned tunnel's path, or cut ones, are held.
	*in = input{number: h.number, ns: h.ns, clocked: true, skip: h.skip, clc: in.clc[:0], carried: h.path != cutWirePath}
	if asCopy {
		in.isCopy = true
	} else {
		in.isRoCE, in.roce, in.snapCut, in.snapKept, in.snapWire = true, h.roce, h.snapCut, h.snapKept, h.snapWire
	}
	due := t.mirrors.due
	t.mirrors.due = mirrorSame
	t.feed(in)
	t.mirrors.due = due
}

// feedRoCEOfCut follows f, a RoCE request whole whose cut copy came
// first (a mirror session that truncates its copies, ahead of the packet
// before its path was learned; two interfaces captured with two snap
// lengths), as its copy, and the LLC or CDC message it carries where the
// cut copy, followed as the request, left it unread (RC.cut): the
// request was counted then, its message is the packet's. A CDC the cut
// copy gave but its ANCK credits gives them (cutCredits); a WRITE the
// bytes the cut copy did not keep (placeUncut).
func (t *Tracker) feedRoCEOfCut(f *capture.Frame) {
	t.feedDup(f)
	write := t.opts.Stream != nil && uint8(f.BTH.Opcode) >= opWriteFirst && uint8(f.BTH.Opcode) <= opWriteOnlyImm
	if f.LLC == nil && f.CDC == nil && !write {
		return
	}
	in := &t.ahead.in
	t.fillFrame(in, f)
	r := &in.roce
	if !in.isRoCE || !r.hasLLC && !r.hasCDC && r.data == nil || r.icrcBad || r.lengthBad || r.ipSumBad || !isRequest(r.opcode) {
		return
	}
	ref, ok := t.lookupQP(&r.key)
	if !ok {
		return
	}
	l, d := ref.link, ref.dir
	rc := &l.RC[d]
	if r.data != nil {
		t.placeUncut(l, d, in)
		return
	}
	if rc.cutPSN != r.psn || rc.cut == cutNone {
		return
	}
	in.ns = t.clock.at(in.number, in.ns)
	cut := rc.cut
	rc.cut = cutNone
	switch {
	case cut == cutCredits:
		// The CDC was followed with its cut copy but what it gives back.
		if r.hasCDC && l.lgr.Credits {
			t.uncutCredits(l, d, in)
		}
		return
	case cut == cutResent:
		if r.hasLLC {
			t.raiseText(&l.expert, expert.LLCRetransmitted, in, func() string { return llcName(&r.llc) })
		}
		return
	}
	t.cur.setLink(l)
	t.cur.dir = d
	// The request and its frame were counted with the cut copy (its
	// credit spent): the message is followed as a kept request's is
	// (touchConn), with what it gives back and says of the link.
	outer := t.replaying
	t.replaying = true
	defer func() { t.replaying = outer }()
	if l.lgr.Credits {
		t.creditsBack(l, d, in)
	}
	t.upByData(l, in)
	t.message(l, d, in)
	if c := t.cur.theConn(); c != nil {
		// The cut copy went by for the link only (its message unread):
		// the request is the connection's, as is its ACK.
		rc.remember(r.psn, c)
		t.stats.LinkOnly--
		t.stats.ConnAttached++
		c.Frames++
	}
}

// feedCLCOfCut follows f, a TCP segment whole whose copy the mirror cut
// came first by another path, as its copy, and the CLC messages it holds
// that the cut copy left unread (the reader decodes them from the segment
// whole, where the stream had taken the cut copy's bytes; a message the
// cut left enough of took its step with the copy). When every cut
// segment of the handshake has come whole, the handshake is followed as
// one the capture holds whole.
func (t *Tracker) feedCLCOfCut(f *capture.Frame) {
	t.feedDup(f)
	if len(f.CLC) == 0 {
		return
	}
	in := &t.ahead.in
	t.fillFrame(in, f)
	in.ns = t.clock.at(in.number, in.ns)
	s := &in.tcp
	c := t.byTuple[makeTCPKey(s.src, s.dst)]
	if c == nil {
		return
	}
	d := DirC2S
	if s.src != c.Client {
		d = DirS2C
	}
	if c.cutSegs > 0 {
		c.cutSegs--
	}
	if c.cutSegs == 0 && c.clcCut && !c.clcHole && c.Flow[0].TCPNotCaptured == 0 && c.Flow[1].TCPNotCaptured == 0 {
		c.clcUncaptured, c.clcCut = false, false
	}
	rec := t.recording(c)
	for i := in.clcN - min(in.clcN, int(c.cutUnread[d])); i < in.clcN; i++ {
		t.clc(c, d, &in.clc[i], in, rec)
	}
	c.cutUnread[d] = 0
}
