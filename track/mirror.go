package track

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/expert"
)

// A mirror session that numbers its frames (ERSPAN types II and III put
// a GRE sequence number on every frame they mirror, RFC 2890; Linux's
// erspan devices count them in __gre_xmit's o_seqno, net/ipv4/ip_gre.c) says what
// the capture missed of it: a number skipped is a frame the switch sent
// that the collector never wrote, whatever was in it (an ACK, a frame of
// another protocol). That is the capture point's loss, not the network's
// (expert.MirrorLost), and it is known only where the session numbers
// frames: ERSPAN I, VXLAN and Geneve carry no sequence.

// maxMirrors bounds the sessions followed: a collector receives a few.
const maxMirrors = 64

// mirrorOpen is how many of a session's newest gaps a late frame may
// still fill (a collector that took the session's frames out of order).
const mirrorOpen = 8

// mirrorRestart: a step back of more than this many numbers is a session
// that started again (a switch reloaded, a session reconfigured), not a
// late frame; so is a step ahead that more frames than mirrorNSPerFrame
// allows could not have filled since the session's last frame.
const mirrorRestart = 1 << 16

// mirrorTrust is how many frames in their run a session shows before its
// gaps count: a frame whose session ID or outer address was damaged (no
// checksum covers them) makes a session of its own, of a frame or two.
const mirrorTrust = 4

// mirrorNSPerFrame bounds how fast a session numbers frames: one a
// nanosecond is more than two 400 GbE ports of minimal frames.
const mirrorNSPerFrame = 1

type mirrorKey struct {
	kind     capture.TunnelKind
	src, dst netip.Addr
	id       uint32
	hasID    bool
}

// seqGap is a run of sequence numbers a session skipped: from, and n
// numbers from it, of which left are still missing.
type seqGap struct {
	from    uint32
	n, left uint32
	after   int   // the run's frame before it
	at      int   // the frame after it
	atNS    int64 // and its time
}

type mirrorSession struct {
	key     mirrorKey
	strays  *strayRing // the capture's frames no session could place (mirrors.strays)
	next    uint32     // the number expected next
	lastNS  int64
	runAt   int    // the session's newest frame in its run
	runSum  uint64 // and its frameSum
	frames  int
	damaged int    // frames of the session the capture damaged (strays placed in its gaps)
	missing int    // frames the capture does not hold
	gaps    int    // gaps with a frame still missing
	first   seqGap // the first gap (n 0: none yet)
	inRun   int    // frames that came in the run (next's number)
	last    seqGap // the newest
	open    [mirrorOpen]seqGap
	nopen   int // gaps in open, the newest last
	// held is a number off the session's run (ahead of next, or far
	// behind it) that the next frame has yet to confirm: the session
	// going on from it says frames were missed before it (or the
	// session started again); going on from next says the number was
	// damaged (GRE carries no checksum), or a stray.
	held              bool
	heldSeq           uint32
	heldAt, heldPrev  int // its frame, and the run's frame before it
	heldSum           uint64
	heldNS, heldGapNS int64 // its time, and the time since the frame before it
	// early are numbers ahead of the run that came before it got there
	// (out of order): not missing when it does.
	early  [mirrorOpen]uint32
	nearly int
}

// mirrors follows the capture's mirror sessions.
type mirrors struct {
	sessions map[mirrorKey]*mirrorSession
	// numbered: a frame with a GRE sequence number came; from then on,
	// frames a mirror could have sent are looked at for damage (strays).
	numbered bool
	strays   strayRing
	// number and due: the last frame stepped and what it changed
	// (FeedFast, then Feed, step the same frame).
	number int
	due    mirrorChange
	gap    seqGap // with due mirrorGap, the gap
}

type mirrorChange uint8

const (
	mirrorSame   mirrorChange = iota // nothing a finding says
	mirrorGap                        // numbers skipped before the frame
	mirrorFilled                     // a late frame filled the last of a gap
)

// mirrorStep follows f's place in its mirror session and reports what it
// changed; a change is the general path's (feed raises or takes back the
// finding).
func (t *Tracker) mirrorStep(f *capture.Frame) mirrorChange {
	var tn *capture.TunnelSession
	if f.Tunnel != nil {
		tn = &f.Tunnel.Session
	}
	m := &t.mirrors
	if tn == nil || !tn.HasSeq {
		if m.numbered && (f.Number == 0 || f.Number != m.number) {
			m.number, m.due = f.Number, mirrorSame
			if x, ok := mirrorDamaged(f); ok {
				m.strays.push(x)
			}
		}
		return mirrorSame
	}
	if f.Number != 0 && f.Number == m.number {
		return m.due
	}
	m.number, m.due, m.numbered = f.Number, mirrorSame, true
	k := mirrorKey{kind: tn.Kind, src: tn.Src, dst: tn.Dst, id: tn.ID, hasID: tn.HasID}
	s := m.sessions[k]
	ns, sum := f.UnixNano(), frameSum(f.Data)
	if s == nil {
		// A session is one from its second frame on: a frame whose
		// session ID or outer address the capture damaged (no checksum
		// covers the first, a damaged IPv4 header is read all the same)
		// is a session of its own that never goes on, a stray a gap of
		// its real session may take. A frame whose number is the one
		// another session expects next is that session's, damaged (and
		// so is the next such frame, however alike their damage): it
		// starts no session.
		var x *mirrorStray
		if !m.fits(tn.Seq) {
			x = m.strays.adopt(k, tn.Seq)
		}
		if x == nil {
			m.strays.push(mirrorStray{number: f.Number, ns: ns, key: k, seq: tn.Seq, sum: sum, numbered: true})
			return mirrorSame
		}
		if len(m.sessions) >= maxMirrors {
			return mirrorSame
		}
		if m.sessions == nil {
			m.sessions = make(map[mirrorKey]*mirrorSession)
		}
		s = &mirrorSession{key: k, strays: &m.strays, next: x.seq + 1, lastNS: x.ns, runAt: x.number, runSum: x.sum, frames: 1}
		m.sessions[k] = s
	}
	s.frames++
	if m.due = s.step(tn.Seq, f.Number, ns, sum); m.due == mirrorGap {
		m.gap = s.last
	}
	return m.due
}

// fits reports whether seq is the number a session expects next.
func (m *mirrors) fits(seq uint32) bool {
	for _, s := range m.sessions {
		if s.next == seq {
			return true
		}
	}
	return false
}

// step follows seq, the number the session gave to frame number,
// captured at ns, whose frameSum is sum.
func (s *mirrorSession) step(seq uint32, number int, ns int64, sum uint64) mirrorChange {
	elapsed := max(ns-s.lastNS, 0)
	s.lastNS = max(s.lastNS, ns)
	change := mirrorSame
	if s.held {
		h := s.heldSeq
		switch {
		case seq == s.next:
			// In the run: the held number is later (the frames between
			// came out of order) or damaged; the run goes on.
			s.next++
			s.runAt, s.runSum = number, sum
			s.advance()
			if s.next == h {
				s.held, s.next = false, h+1
				s.advance()
			}
			return mirrorSame
		case seq-s.next >= 1<<31 && s.next-seq <= mirrorRestart:
			// Behind the run: a late frame, a copy or a damaged
			// number; still held.
			return s.behind(seq, number, ns, sum)
		case seq-h-1 < mirrorRestart:
			// The session went on from the held number.
			s.held = false
			change = s.take(h, s.heldAt, s.heldNS, s.heldGapNS)
			if seq == s.next {
				s.next++
				s.runAt, s.runSum = number, sum
				s.advance()
				return change
			}
		case seq == s.next+1 && h-s.next >= mirrorOpen:
			// One number on from the run, and the held frame far off
			// it: the frame was that number, damaged.
			s.held, s.next, s.runAt, s.runSum = false, seq+1, number, sum
			s.advance()
			return mirrorSame
		default:
			// On from neither, or from the run: the held number came
			// early (a collector reorders a few frames), or was
			// damaged; further than mirrorOpen ahead, damaged: a stray
			// a gap between the run's frames around it may take.
			s.held = false
			x := mirrorStray{number: s.heldAt, ns: s.heldNS, key: s.key, seq: h, sum: s.heldSum}
			if h-s.next < mirrorOpen {
				s.keepEarly(h)
				x.early = true
			} else {
				s.frames-- // until a gap takes it
			}
			s.strays.push(x)
		}
	}
	ahead := seq - s.next
	switch {
	case ahead == 0:
		s.next++
		s.inRun++
		s.runAt, s.runSum = number, sum
		s.advance()
	case ahead >= 1<<31 && s.next-seq <= mirrorRestart:
		// Behind: a late frame, a copy or a damaged number.
		if s.behind(seq, number, ns, sum) == mirrorFilled {
			change = mirrorFilled
		}
	default:
		s.held, s.heldSeq, s.heldAt, s.heldPrev, s.heldSum, s.heldNS, s.heldGapNS = true, seq, number, s.runAt, sum, ns, elapsed
	}
	return change
}

// settleMirrors takes the number each session holds when the capture
// ended: no frame comes to say it was damaged, and a capture thinned to
// its end leaves its last frame after a gap. A number far off the run
// stays a damaged one. The finding names the frame after the gap, found
// at the end (no frame carries it in -Y).
func (t *Tracker) settleMirrors() {
	for _, s := range t.mirrors.sessions {
		if !s.held || s.heldSeq-s.next >= mirrorRestart {
			continue
		}
		s.held = false
		if s.take(s.heldSeq, s.heldAt, s.heldNS, s.heldGapNS) == mirrorGap {
			t.expert.add(expert.MirrorLost, s.last.at, s.last.atNS, "")
		}
	}
}

// take moves the session's run to h, a held number the next frame
// confirmed, at frame number after elapsed nanoseconds without a frame: a
// gap of the numbers from next, or, far behind or further ahead than the
// session could have sent in that time, its start again.
func (s *mirrorSession) take(h uint32, number int, ns, elapsed int64) mirrorChange {
	ahead := h - s.next
	s.next, s.runAt, s.runSum = h+1, number, s.heldSum
	if ahead >= 1<<31 || ahead > mirrorRestart && int64(ahead) > mirrorRestart+elapsed/mirrorNSPerFrame || s.inRun < mirrorTrust {
		return mirrorSame
	}
	from, n := h-ahead, ahead
	for i := 0; i < s.nearly; i++ {
		if s.early[i]-from < ahead { // came early, not missing
			n--
		}
	}
	s.advance()
	if n > 0 {
		n -= s.place(from, ahead, s.heldPrev, number, n)
	}
	if n == 0 {
		return mirrorSame
	}
	g := seqGap{from: from, n: ahead, left: n, after: s.heldPrev, at: number, atNS: ns}
	s.last = g
	s.missing += int(n)
	s.gaps++
	if s.first.n == 0 {
		s.first = g
	}
	if s.nopen == mirrorOpen {
		copy(s.open[:], s.open[1:])
		s.nopen--
	}
	s.open[s.nopen] = g
	s.nopen++
	return mirrorGap
}

// keepEarly remembers seq, a number that came before the run got to it
// (the oldest goes when full).
func (s *mirrorSession) keepEarly(seq uint32) {
	if s.nearly == len(s.early) {
		copy(s.early[:], s.early[1:])
		s.nearly--
	}
	s.early[s.nearly] = seq
	s.nearly++
}

// advance moves the run past the numbers that came early, and forgets
// those it has passed.
func (s *mirrorSession) advance() {
	for i := 0; i < s.nearly; {
		switch e := s.early[i]; {
		case e == s.next:
			s.next++
			i = 0
			continue
		case e-s.next >= 1<<31: // passed
			copy(s.early[i:], s.early[i+1:s.nearly])
			s.nearly--
			continue
		}
		i++
	}
}

// behind follows seq, a number behind the run, of frame number: a late
// frame fills its gap; the run's newest frame again is a copy the
// capture made (a bond and its member); any other is a number damaged,
// a stray that a gap between the run's frames around it may take.
func (s *mirrorSession) behind(seq uint32, number int, ns int64, sum uint64) mirrorChange {
	took, whole := s.fill(seq)
	switch {
	case whole:
		return mirrorFilled
	case !took && (s.next-seq > 1 || sum != s.runSum):
		s.frames-- // until a gap takes it
		s.strays.push(mirrorStray{number: number, ns: ns, key: s.key, seq: seq, sum: sum})
	}
	return mirrorSame
}

// fill takes seq, a late frame, out of the open gap that holds it and
// reports whether it did and whether that gap is now whole. A number no
// gap holds that came early before says that frame was another number,
// damaged near the run: the number it hid, in the open gap around it, is
// held too.
func (s *mirrorSession) fill(seq uint32) (took, whole bool) {
	for i := s.nopen - 1; i >= 0; i-- {
		if g := &s.open[i]; seq-g.from < g.n && g.left > 0 {
			return true, s.fillOne(g)
		}
	}
	r := s.strays
	for i := r.n - 1; i >= max(r.n-mirrorStrays, 0); i-- {
		x := &r.s[i%mirrorStrays]
		if !x.early || x.used || x.seq != seq || x.key != s.key {
			continue
		}
		for j := s.nopen - 1; j >= 0; j-- {
			if g := &s.open[j]; g.after < x.number && x.number < g.at && g.left > 0 {
				x.used = true
				s.damaged++
				return true, s.fillOne(g)
			}
		}
		return false, false
	}
	return false, false
}

// fillOne takes one frame out of g, an open gap, and reports whether it
// is now whole.
func (s *mirrorSession) fillOne(g *seqGap) bool {
	g.left--
	s.missing--
	if g.left > 0 {
		return false
	}
	s.gaps--
	if g.from == s.first.from {
		s.first.left = 0
	}
	return true
}

// mirrorStrays is how many of the newest strays are kept: a gap takes
// those between its session's frames around it.
const mirrorStrays = 32

// A mirrorStray is a frame a mirror session could have sent that no
// session took: numbered, the first frame of a session (key) not yet
// gone on from, which a frame with a damaged session ID or outer address
// also is; else a frame whose outer headers the capture damaged so that
// its number cannot be read, or a session's own frame whose number is off
// its run (behind it but no copy, far ahead, or early: seq, key the
// session's).
type mirrorStray struct {
	number   int
	ns       int64
	key      mirrorKey // numbered: its session; else the outer addresses
	seq      uint32
	sum      uint64 // its frameSum
	numbered bool
	// anyAddr: its IPv4 header fails its checksum, so its addresses do
	// not say whose it is.
	anyAddr bool
	// early: a session's frame whose number (seq) was off its run, near
	// ahead of it, and is kept as come early (mirrorSession.early).
	early bool
	used  bool
}

// strayRing holds the newest strays.
type strayRing struct {
	s [mirrorStrays]mirrorStray
	n int // strays pushed
}

func (r *strayRing) push(x mirrorStray) {
	r.s[r.n%mirrorStrays] = x
	r.n++
}

// adopt takes the newest stray of session k that seq goes on from: the
// session's first frame.
func (r *strayRing) adopt(k mirrorKey, seq uint32) *mirrorStray {
	for i := r.n - 1; i >= max(r.n-mirrorStrays, 0); i-- {
		x := &r.s[i%mirrorStrays]
		if x.numbered && !x.used && x.key == k && seq-x.seq-1 < mirrorRestart {
			x.used = true
			return x
		}
	}
	return nil
}

// place takes, for a gap of n numbers from from (of which left are not
// accounted for), the strays between the run's frames around it (after
// and before) that were the session's, and reports how many: each is a
// frame of the gap the capture holds, damaged. Those numbered within the
// gap go first; then, by place alone, a frame from the session's switch
// to its collector (any, where the addresses are damaged) that started
// no session or whose number was damaged far off the run. One whose
// number was damaged near the run is taken for the number it hid when
// that number comes again (fill). The frames it takes are the session's,
// damaged.
func (s *mirrorSession) place(from, n uint32, after, before int, left uint32) uint32 {
	r := s.strays
	var took uint32
	for pass := range 2 {
		for i := max(r.n-mirrorStrays, 0); i < r.n && took < left; i++ {
			x := &r.s[i%mirrorStrays]
			if x.used || x.number <= after || x.number >= before {
				continue
			}
			inGap := x.numbered && x.seq-from < n
			ours := x.anyAddr || x.key.src == s.key.src && x.key.dst == s.key.dst
			// An early number is the held one the gap ends with (from+n)
			// carried by a frame not its copy: that one was damaged.
			// Others stay early, come out of order.
			damagedEarly := x.seq == from+n && x.sum != s.runSum
			if pass == 0 && !inGap || pass == 1 && (!ours || x.early && !damagedEarly) {
				continue
			}
			x.used = true
			took++
			s.damaged++
			s.frames++
		}
	}
	return took
}

// mirrorDamaged reports whether f, which carries no GRE sequence number,
// is a frame a mirror session sent that the capture damaged
// (capture.Frame.UndecodedGRE): a stray of the session with its outer
// addresses, or of any session where they are damaged.
func mirrorDamaged(f *capture.Frame) (mirrorStray, bool) {
	src, dst, addrs, ok := f.UndecodedGRE()
	x := mirrorStray{number: f.Number, ns: f.UnixNano(), anyAddr: !addrs}
	x.key.src, x.key.dst = src, dst
	return x, ok
}

// frameSum sums 64 bytes of a frame a mirror session carried, from
// byte 42 on: with an Ethernet and IPv4 outer header, those after the GRE
// sequence number (ERSPAN's header, then the carried frame's headers).
// Two frames of a session differ there (an IPv4 ID, a TCP sequence
// number, a PSN), a copy does not, and a number damaged changes nothing
// there; an application's messages alike end alike, so the frame's end
// is no sum.
func frameSum(d []byte) uint64 {
	d = d[min(42, len(d)):]
	d = d[:min(64, len(d))]
	h := uint64(len(d))
	for len(d) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(d)) * 0x100000001b3
		d = d[8:]
	}
	for _, b := range d {
		h = (h ^ uint64(b)) * 0x100000001b3
	}
	return h
}

// mirrorNote raises or takes back the capture's mirror finding for the
// frame being fed, as its mirrorStep found.
func (t *Tracker) mirrorNote(in *input) {
	switch t.mirrors.due {
	case mirrorGap:
		// The frame after the gap is where it is; this frame, the
		// session's next, is the one that told it.
		g := &t.mirrors.gap
		t.cur.expert |= 1 << expert.MirrorLost
		t.expert.add(expert.MirrorLost, g.at, g.atNS, "")
	case mirrorFilled:
		t.expert.unmark(expert.MirrorLost)
	}
	t.mirrors.due = mirrorSame
}

// MirrorLoss is what one mirror session's sequence numbers say the
// capture does not hold of it.
type MirrorLoss struct {
	Kind     capture.TunnelKind
	Src, Dst netip.Addr // the outer addresses: the switch, the collector
	ID       uint32     // the session ID (HasID), or GRE key
	HasID    bool
	Frames   int // the session's frames the capture holds
	Damaged  int // of them, frames whose number or session the capture damaged, placed in the numbers they hid
	Missing  int // the frames it sent that the capture does not hold
	Gaps     int // the runs of them
	// FirstFrom..FirstTo are the first run's sequence numbers, FirstFrame
	// the frame after it.
	FirstFrom, FirstTo uint32
	FirstFrame         int
}

// Session names the session as its collector received it.
func (l *MirrorLoss) Session() string {
	s := string((&capture.Tunnel{Kind: l.Kind, ID: l.ID, HasID: l.HasID}).AppendName(nil))
	if l.Src.IsValid() {
		s += fmt.Sprintf(" from %s to %s", l.Src, l.Dst)
	}
	return s
}

// losses lists the sessions with frames missing, in a stable order.
func (m *mirrors) losses() []MirrorLoss {
	var out []MirrorLoss
	for k, s := range m.sessions {
		if s.missing <= 0 {
			continue
		}
		first := s.first
		for i := 0; first.left == 0 && i < s.nopen; i++ {
			first = s.open[i] // the first one filled by late frames
		}
		out = append(out, MirrorLoss{Kind: k.kind, Src: k.src, Dst: k.dst, ID: k.id, HasID: k.hasID,
			Frames: s.frames, Damaged: s.damaged, Missing: s.missing, Gaps: s.gaps,
			FirstFrom: first.from, FirstTo: first.from + first.n - 1, FirstFrame: first.at})
	}
	slices.SortFunc(out, func(a, b MirrorLoss) int { return cmp.Compare(a.FirstFrame, b.FirstFrame) })
	return out
}

// mirrorDetail is the mirror finding's detail: each session's count.
func mirrorDetail(ls []MirrorLoss) string {
	var b strings.Builder
	for i := range ls {
		l := &ls[i]
		if i > 0 {
			b.WriteString("; ")
		}
		first := fmt.Sprintf("%d..%d", l.FirstFrom, l.FirstTo)
		if l.FirstFrom == l.FirstTo {
			first = fmt.Sprintf("number %d", l.FirstFrom)
		}
		if l.Gaps > 1 {
			first = "the first " + first
		}
		fmt.Fprintf(&b, "%s: %s missing in %s of its GRE sequence (%s, before frame %d), %s held",
			l.Session(), plural(l.Missing, "frame"), plural(l.Gaps, "gap"), first, l.FirstFrame, plural(l.Frames, "frame"))
		if l.Damaged > 0 {
			fmt.Fprintf(&b, " (%d damaged in the capture, taken for the numbers they hid)", l.Damaged)
		}
	}
	return b.String()
}

// copiesDetail is roce.capture.duplicate's detail: how many copies, and
// how many of them came by another path than their original, or apart.
func copiesDetail(st *Stats) string {
	d := plural(st.CaptureDups, "frame") + " held twice, followed once"
	if st.CaptureDupsOtherPath > 0 {
		d += fmt.Sprintf(" (%d of them came by another path than the first: one of the two carried by a mirror session or an overlay)", st.CaptureDupsOtherPath)
	}
	if a := st.ApartText(); a != "" {
		d += " (" + a + ")"
	}
	return d
}

// ApartText says how many of the copies the capture holds came the time
// two merged captures are apart after their originals, and that time;
// "" where none did.
func (st *Stats) ApartText() string {
	if st.CaptureDupsApart == 0 {
		return ""
	}
	return fmt.Sprintf("%d of them %s after the first: two captures of the same packets merged, their clocks apart", st.CaptureDupsApart, fmtApart(st.CaptureApartNS))
}

// fmtApart is a time between a frame and its copy: "300.000 ms".
func fmtApart(ns int64) string {
	return fmt.Sprintf("%.3f ms", float64(ns)/1e6)
}

// plural is n and word, with an s where n is not one.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
