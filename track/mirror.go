package track

import (
	"cmp"
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
// late frame; so is a step ahead that more frames than mirrorRate allows
// could not have filled since the session's last frame.
const mirrorRestart = 1 << 16

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
	at      int // the frame after it
}

type mirrorSession struct {
	next    uint32 // the number expected next
	lastNS  int64
	frames  int
	missing int    // frames the capture does not hold
	gaps    int    // gaps with a frame still missing
	first   seqGap // the first gap (n 0: none yet)
	open    [mirrorOpen]seqGap
	nopen   int // gaps in open, the newest last
}

// mirrors follows the capture's mirror sessions.
type mirrors struct {
	sessions map[mirrorKey]*mirrorSession
	// number and due: the last frame stepped and what it changed
	// (FeedFast, then Feed, step the same frame).
	number int
	due    mirrorChange
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
	tn := f.Tunnel
	if tn == nil || !tn.HasSeq {
		return mirrorSame
	}
	m := &t.mirrors
	if f.Number != 0 && f.Number == m.number {
		return m.due
	}
	m.number, m.due = f.Number, mirrorSame
	k := mirrorKey{kind: tn.Kind, src: tn.Src, dst: tn.Dst, id: tn.ID, hasID: tn.HasID}
	s := m.sessions[k]
	ns := f.UnixNano()
	if s == nil {
		if len(m.sessions) >= maxMirrors {
			return mirrorSame
		}
		if m.sessions == nil {
			m.sessions = make(map[mirrorKey]*mirrorSession)
		}
		s = &mirrorSession{next: tn.Seq + 1, lastNS: ns, frames: 1}
		m.sessions[k] = s
		return mirrorSame
	}
	s.frames++
	elapsed := max(ns-s.lastNS, 0)
	s.lastNS = max(s.lastNS, ns)
	ahead := tn.Seq - s.next
	switch {
	case ahead == 0:
		s.next++
	case ahead >= 1<<31:
		// Behind: a late frame, a copy, or the session's start again.
		if s.fill(tn.Seq) {
			m.due = mirrorFilled
		} else if s.next-tn.Seq > mirrorRestart {
			s.next = tn.Seq + 1
		}
	case ahead > mirrorRestart && int64(ahead) > mirrorRestart+elapsed/mirrorNSPerFrame:
		// Further ahead than the session could have sent since: it
		// started again.
		s.next = tn.Seq + 1
	default:
		g := seqGap{from: s.next, n: ahead, left: ahead, at: f.Number}
		s.missing += int(ahead)
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
		s.next = tn.Seq + 1
		m.due = mirrorGap
	}
	return m.due
}

// fill takes seq, a late frame, out of the open gap that holds it and
// reports whether that gap is now whole.
func (s *mirrorSession) fill(seq uint32) bool {
	for i := s.nopen - 1; i >= 0; i-- {
		g := &s.open[i]
		if seq-g.from >= g.n || g.left == 0 {
			continue
		}
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
	return false
}

// mirrorNote raises or takes back the capture's mirror finding for the
// frame being fed, as its mirrorStep found.
func (t *Tracker) mirrorNote(in *input) {
	switch t.mirrors.due {
	case mirrorGap:
		t.raise(&t.expert, expert.MirrorLost, in)
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
	Missing  int // the frames it sent that the capture does not hold
	Gaps     int // the runs of them
	// FirstFrom..FirstTo are the first run's sequence numbers, FirstFrame
	// the frame after it.
	FirstFrom, FirstTo uint32
	FirstFrame         int
}

// Session names the session as its collector received it.
func (l *MirrorLoss) Session() string {
	s := l.Kind.String()
	if l.HasID {
		s += fmt.Sprintf(" session %d", l.ID)
		if l.Kind == capture.TunnelGRE {
			s = fmt.Sprintf("GRE key %d", l.ID)
		}
	}
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
			Frames: s.frames, Missing: s.missing, Gaps: s.gaps,
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
	}
	return b.String()
}

// plural is n and word, with an s where n is not one.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
