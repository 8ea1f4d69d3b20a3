// Package mutate damages captures the way real captures are damaged: a
// mirror port or sniffer that drops a frame or a burst of frames, a frame
// seen twice, a byte flipped on the way to the disk, a capture started late
// or stopped early. Its mutations are seeded, and each one names itself
// ("drop 10005", "cut 12"), so a test that fails on a variant says how to
// make it again: go run ./internal/mutate/cmd/smcmutate -seed S -n N FILE.
//
// The differential test (differential_test.go) feeds the variants of every
// capture of the repository to smcdump's tracker and smctop's wire replay,
// and holds them to each other and to what the capture can tell.
package mutate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
)

// Frame is one captured frame.
type Frame struct {
	CI   gopacket.CaptureInfo
	Data []byte
}

// Kind is what a mutation does.
type Kind uint8

// The mutations. Frame indexes are 0-based; String names frames 1-based,
// as smcdump and editcap number them.
const (
	Drop      Kind = iota + 1 // leave out frame At
	DropRange                 // leave out frames At..At+N-1
	Duplicate                 // frame At twice in a row
	Flip                      // XOR byte N of frame At with Mask
	Cut                       // keep frames 0..At only (the capture stopped after At)
	Start                     // keep frames At.. only (the capture started at At)
	Thin                      // leave out every N-th frame from At on (a mirror port that drops)
	Late                      // frame At put N frames later, the times left in place (a capture point that reorders)
	Snap                      // every frame cut to N bytes (a snap length)
	OneWay                    // only the frames one way, side N (1 or 2): a mirror of a port's egress, tcpdump -Q out
	Skew                      // side 2's frames N microseconds later, merged by time: two hosts' captures merged, their clocks apart
	Mirror                    // every Ethernet frame twice, the copy 20 us later tagged with VLAN N: a mirror of both directions of a port, one side tagged
	Step                      // frames At.. stamped N ms earlier: the capture host's clock stepped back (NTP) while it ran
	Twice                     // every frame twice, the copy N microseconds later (side 1's At more, side 2's At less: the path's delay), merged by time: two hosts' captures of both directions merged, their clocks apart
)

var kindNames = [...]string{"", "drop", "drop", "dup", "flip", "cut", "start", "thin", "late", "snap", "oneway", "skew", "mirror", "step", "twice"}

// Mutation is one damage done to a capture.
type Mutation struct {
	Kind Kind
	At   int  // frame index
	N    int  // DropRange: frames; Flip: byte offset in the frame
	Mask byte // Flip
}

// String names m as editcap-like arguments, frames 1-based: "drop 7",
// "drop 40-7204", "dup 12", "flip 27:66^0x40", "cut 12", "start 40".
func (m Mutation) String() string {
	switch m.Kind {
	case DropRange:
		return fmt.Sprintf("drop %d-%d", m.At+1, m.At+m.N)
	case Flip:
		return fmt.Sprintf("flip %d:%d^%#02x", m.At+1, m.N, m.Mask)
	case Thin:
		return fmt.Sprintf("thin %d/%d", m.At+1, m.N)
	case Late:
		return fmt.Sprintf("late %d+%d", m.At+1, m.N)
	case Snap:
		return fmt.Sprintf("snap %d", m.N)
	case OneWay:
		return fmt.Sprintf("oneway %d", m.N)
	case Skew:
		return fmt.Sprintf("skew %dus", m.N)
	case Mirror:
		return fmt.Sprintf("mirror vlan %d", m.N)
	case Step:
		return fmt.Sprintf("step %d-%dms", m.At+1, m.N)
	case Twice:
		if m.At != 0 {
			return fmt.Sprintf("twice %dus+%dus", m.N, m.At)
		}
		return fmt.Sprintf("twice %dus", m.N)
	}
	if int(m.Kind) < len(kindNames) && m.Kind != 0 {
		return fmt.Sprintf("%s %d", kindNames[m.Kind], m.At+1)
	}
	return "mutation?"
}

// Apply returns frames with m done to them. frames is not changed; a
// flipped frame's bytes are copied.
func (m Mutation) Apply(frames []Frame) []Frame {
	n := len(frames)
	at := min(max(m.At, 0), n)
	switch m.Kind {
	case Drop:
		if at >= n {
			return append([]Frame(nil), frames...)
		}
		return append(append(make([]Frame, 0, n-1), frames[:at]...), frames[at+1:]...)
	case DropRange:
		end := min(at+max(m.N, 0), n)
		return append(append(make([]Frame, 0, n-(end-at)), frames[:at]...), frames[end:]...)
	case Duplicate:
		if at >= n {
			return append([]Frame(nil), frames...)
		}
		out := make([]Frame, 0, n+1)
		out = append(out, frames[:at+1]...)
		return append(out, frames[at:]...)
	case Flip:
		out := append([]Frame(nil), frames...)
		if at < n && m.N >= 0 && m.N < len(out[at].Data) {
			d := append([]byte(nil), out[at].Data...)
			d[m.N] ^= m.Mask
			out[at].Data = d
		}
		return out
	case Cut:
		return append([]Frame(nil), frames[:min(at+1, n)]...)
	case Start:
		return append([]Frame(nil), frames[at:]...)
	case Thin:
		out := append(make([]Frame, 0, n), frames[:at]...)
		for i := at; i < n; i++ {
			if m.N < 2 || (i-at)%m.N != m.N-1 {
				out = append(out, frames[i])
			}
		}
		return out
	case Late:
		out := append([]Frame(nil), frames...)
		end := min(at+max(m.N, 0), n-1)
		if at >= end {
			return out
		}
		late := out[at]
		copy(out[at:end], out[at+1:end+1])
		out[end] = late
		// The capture stamps frames as it writes them: the times stay
		// in order, each slot keeping its own.
		for i := at; i <= end; i++ {
			out[i].CI.Timestamp = frames[i].CI.Timestamp
		}
		return out
	case Snap:
		out := append([]Frame(nil), frames...)
		for i := range out {
			if m.N > 0 && len(out[i].Data) > m.N {
				out[i].Data = out[i].Data[:m.N:m.N]
				out[i].CI.CaptureLength = m.N
			}
		}
		return out
	case OneWay:
		out := make([]Frame, 0, n)
		for _, f := range frames {
			if s, ok := sideOf(f.Data); !ok || s == m.N {
				out = append(out, f)
			}
		}
		return out
	case Skew:
		// Each host's capture keeps its own order; mergecap puts the two
		// in time order, the earlier first where the times tie.
		var one, two []Frame
		for _, f := range frames {
			if s, ok := sideOf(f.Data); ok && s == 2 {
				f.CI.Timestamp = f.CI.Timestamp.Add(time.Duration(m.N) * time.Microsecond)
				two = append(two, f)
			} else {
				one = append(one, f)
			}
		}
		out := make([]Frame, 0, n)
		for len(one) > 0 && len(two) > 0 {
			if two[0].CI.Timestamp.Before(one[0].CI.Timestamp) {
				out, two = append(out, two[0]), two[1:]
			} else {
				out, one = append(out, one[0]), one[1:]
			}
		}
		return append(append(out, one...), two...)
	case Mirror:
		out := make([]Frame, 0, 2*n)
		for _, f := range frames {
			out = append(out, f)
			if len(f.Data) < 14 {
				continue
			}
			d := make([]byte, 0, len(f.Data)+4)
			d = append(append(append(d, f.Data[:12]...), 0x81, 0x00, byte(m.N>>8)&0x0f, byte(m.N)), f.Data[12:]...)
			c := f
			c.Data = d
			c.CI.CaptureLength += 4
			c.CI.Length += 4
			c.CI.Timestamp = f.CI.Timestamp.Add(20 * time.Microsecond)
			out = append(out, c)
		}
		return out
	case Twice:
		// Each host's capture holds every frame of the two, a frame one
		// side sent stamped by the other the path's delay later;
		// mergecap puts them in time order, the earlier first where the
		// times tie.
		later := make([]Frame, 0, n)
		for _, f := range frames {
			us := m.N
			if s, ok := sideOf(f.Data); ok && s == 2 {
				us -= m.At
			} else {
				us += m.At
			}
			c := f
			c.CI.Timestamp = f.CI.Timestamp.Add(time.Duration(us) * time.Microsecond)
			later = append(later, c)
		}
		slices.SortStableFunc(later, func(a, b Frame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
		out := make([]Frame, 0, 2*n)
		for _, f := range frames {
			for len(later) > 0 && later[0].CI.Timestamp.Before(f.CI.Timestamp) {
				out, later = append(out, later[0]), later[1:]
			}
			out = append(out, f)
		}
		return append(out, later...)
	case Step:
		out := append([]Frame(nil), frames...)
		for i := at; i < n; i++ {
			out[i].CI.Timestamp = out[i].CI.Timestamp.Add(-time.Duration(m.N) * time.Millisecond)
		}
		return out
	}
	return append([]Frame(nil), frames...)
}

// sideOf says which way an Ethernet frame with IPv4 or IPv6 goes: 1 when
// its source address is below its destination (the address, then, where
// both are one host's, the TCP or UDP port), 2 when above. Every frame one
// host sends to another is of one side; a frame of neither kind is kept by
// both (ok false).
func sideOf(d []byte) (side int, ok bool) {
	if len(d) < 14 {
		return 0, false
	}
	p := d[14:]
	var src, dst, l4 []byte
	switch et := binary.BigEndian.Uint16(d[12:14]); {
	case et == 0x0800 && len(p) >= 20:
		ihl := int(p[0]&0x0f) * 4
		src, dst, l4 = p[12:16], p[16:20], p[min(ihl, len(p)):]
	case et == 0x86dd && len(p) >= 40:
		src, dst, l4 = p[8:24], p[24:40], p[40:]
	default:
		return 0, false
	}
	c := bytes.Compare(src, dst)
	if c == 0 && len(l4) >= 4 {
		c = bytes.Compare(l4[0:2], l4[2:4])
	}
	switch c {
	case -1:
		return 1, true
	case 1:
		return 2, true
	}
	return 0, false
}

// Reordered returns up to n Late mutations of frames chosen from seed,
// each putting an RC request of RoCEv2 over IPv4 just after the
// responder's ACK of it or the next request of its queue pair, whichever
// comes first within 8 frames and 5 ms: what a capture point that takes
// the two directions apart (a multi-queue NIC, a tap with a feed per
// direction), or one flow's packets (a tap aggregating links), makes of
// them.
func Reordered(seed uint64, frames []Frame, n int) []Mutation {
	var cands []Mutation
	for i := range frames {
		q, ok := rcOf(frames[i].Data)
		if !ok || q.op > 0x0b {
			continue
		}
		for j := i + 1; j < len(frames) && j <= i+8; j++ {
			a, ok := rcOf(frames[j].Data)
			if !ok || frames[j].CI.Timestamp.Sub(frames[i].CI.Timestamp) > 5*time.Millisecond {
				continue
			}
			if a.op == 0x11 && a.syndrome>>5 == 0 && a.src == q.dst && a.dst == q.src && (a.psn-q.psn)&0xFFFFFF < 256 {
				// After the responder's ACK of it.
				cands = append(cands, Mutation{Kind: Late, At: i, N: j - i})
				break
			}
			if a.op <= 0x0b && a.src == q.src && a.dst == q.dst && a.psn == (q.psn+1)&0xFFFFFF {
				// After the next request of its queue pair.
				cands = append(cands, Mutation{Kind: Late, At: i, N: j - i})
				break
			}
		}
	}
	if len(cands) <= n {
		return cands
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(frames))+2))
	rng.Shuffle(len(cands), func(a, b int) { cands[a], cands[b] = cands[b], cands[a] })
	return cands[:n]
}

// rc is what Reordered reads of a RoCEv2 frame over IPv4.
type rc struct {
	src, dst [4]byte
	op       byte
	psn      uint32
	syndrome byte
}

func rcOf(d []byte) (rc, bool) {
	const ip, bth = 14, 14 + 20 + 8
	if len(d) < bth+13 || binary.BigEndian.Uint16(d[12:14]) != 0x0800 || d[ip] != 0x45 || d[ip+9] != 17 ||
		binary.BigEndian.Uint16(d[ip+20+2:]) != 4791 {
		return rc{}, false
	}
	return rc{src: [4]byte(d[ip+12 : ip+16]), dst: [4]byte(d[ip+16 : ip+20]), op: d[bth],
		psn: uint32(d[bth+9])<<16 | uint32(d[bth+10])<<8 | uint32(d[bth+11]), syndrome: d[bth+12]}, true
}

// Thinned returns n mutations of frames chosen from seed that leave out
// every k-th frame (k from 2 to 12) from a place on: what a mirror port or
// a busy capture host that drops frames makes of a capture, many gaps at
// once where Generate makes one.
func Thinned(seed uint64, frames []Frame, n int) []Mutation {
	if len(frames) == 0 || n <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(frames))+1))
	out := make([]Mutation, 0, n)
	for range n {
		out = append(out, Mutation{Kind: Thin, At: rng.IntN(max(1, len(frames)/2)), N: 2 + rng.IntN(11)})
	}
	return out
}

// Generate returns n mutations of frames chosen from seed: every cut after
// a handshake or link-setup step (Steps) first, then drops, ranges,
// duplicates, flips and late starts in turn at places the seed picks, a
// third of them on the steps (where the damage matters most).
func Generate(seed uint64, frames []Frame, n int) []Mutation {
	if len(frames) == 0 || n <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(frames))))
	steps := Steps(frames)
	var out []Mutation
	for _, s := range steps {
		if len(out) >= n/3 {
			break
		}
		out = append(out, Mutation{Kind: Cut, At: s})
	}
	pick := func() int {
		if len(steps) > 0 && rng.IntN(3) == 0 {
			return steps[rng.IntN(len(steps))]
		}
		return rng.IntN(len(frames))
	}
	for i := 0; len(out) < n; i++ {
		at := pick()
		switch i % 5 {
		case 0:
			out = append(out, Mutation{Kind: Drop, At: at})
		case 1:
			out = append(out, Mutation{Kind: DropRange, At: at, N: 2 + rng.IntN(max(2, len(frames)/20))})
		case 2:
			out = append(out, Mutation{Kind: Duplicate, At: at})
		case 3:
			d := frames[at].Data
			if len(d) <= 14 {
				out = append(out, Mutation{Kind: Drop, At: at})
				break
			}
			// Past the Ethernet header: a flip there only moves the frame.
			out = append(out, Mutation{Kind: Flip, At: at, N: 14 + rng.IntN(len(d)-14), Mask: 1 << rng.IntN(8)})
		case 4:
			out = append(out, Mutation{Kind: Start, At: 1 + rng.IntN(max(1, len(frames)-1))})
		}
	}
	return out
}

// Steps lists the frames where an SMC handshake or link setup moves on:
// TCP segments with SYN or payload (the SMC option, CLC messages) and
// RoCEv2 SENDs (LLC and CDC messages), for Ethernet frames with IPv4 or
// IPv6. It reads the headers itself: the
// mutations must not depend on the decoder they test.
func Steps(frames []Frame) []int {
	var out []int
	for i := range frames {
		if isStep(frames[i].Data) {
			out = append(out, i)
		}
	}
	return out
}

// isStep reports whether an Ethernet frame is a TCP SYN or segment with
// payload, or a RoCEv2 SEND First/Only (opcode 0x00..0x05: LLC, CDC).
func isStep(d []byte) bool {
	if len(d) < 14 {
		return false
	}
	et := binary.BigEndian.Uint16(d[12:14])
	p := d[14:]
	var proto byte
	var l4 []byte
	switch {
	case et == 0x0800 && len(p) >= 20:
		ihl := int(p[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(p[2:4]))
		if ihl < 20 || total < ihl || total > len(p) {
			return false
		}
		proto, l4 = p[9], p[ihl:total]
	case et == 0x86dd && len(p) >= 40:
		total := 40 + int(binary.BigEndian.Uint16(p[4:6]))
		if total > len(p) {
			return false
		}
		proto, l4 = p[6], p[40:total]
	default:
		return false
	}
	switch {
	case proto == 6 && len(l4) >= 20:
		off := int(l4[12]>>4) * 4
		return l4[13]&0x02 != 0 || off >= 20 && len(l4) > off
	case proto == 17 && len(l4) >= 8+12 && binary.BigEndian.Uint16(l4[2:4]) == 4791:
		return l4[8] <= 0x05
	}
	return false
}

// Parse reads a mutation as String writes it.
func Parse(s string) (Mutation, error) {
	var m Mutation
	var a, b, off, mask int
	switch {
	case scan(s, "drop %d-%d", &a, &b) && b >= a:
		m = Mutation{Kind: DropRange, At: a - 1, N: b - a + 1}
	case scan(s, "drop %d", &a):
		m = Mutation{Kind: Drop, At: a - 1}
	case scan(s, "dup %d", &a):
		m = Mutation{Kind: Duplicate, At: a - 1}
	case scan(s, "flip %d:%d^%v", &a, &off, &mask) && mask > 0 && mask < 256:
		m = Mutation{Kind: Flip, At: a - 1, N: off, Mask: byte(mask)}
	case scan(s, "cut %d", &a):
		m = Mutation{Kind: Cut, At: a - 1}
	case scan(s, "start %d", &a):
		m = Mutation{Kind: Start, At: a - 1}
	case scan(s, "thin %d/%d", &a, &b) && b >= 2:
		m = Mutation{Kind: Thin, At: a - 1, N: b}
	case scan(s, "late %d+%d", &a, &b) && b >= 1:
		m = Mutation{Kind: Late, At: a - 1, N: b}
	case scan(s, "snap %d", &b) && b >= 1:
		m = Mutation{Kind: Snap, N: b}
	case scan(s, "oneway %d", &b) && (b == 1 || b == 2):
		m = Mutation{Kind: OneWay, N: b}
	case scan(s, "skew %dus", &b):
		m = Mutation{Kind: Skew, N: b}
	case scan(s, "mirror vlan %d", &b) && b >= 0 && b < 4096:
		m = Mutation{Kind: Mirror, N: b}
	case scan(s, "step %d-%dms", &a, &b) && b >= 1:
		m = Mutation{Kind: Step, At: a - 1, N: b}
	case scan(s, "twice %dus+%dus", &b, &a) && a >= 0 && b >= a:
		m = Mutation{Kind: Twice, N: b, At: a}
	case scan(s, "twice %dus", &b) && b >= 0:
		m = Mutation{Kind: Twice, N: b}
	default:
		return m, fmt.Errorf("mutation %q: want drop N, drop N-M, dup N, flip N:OFFSET^MASK, cut N, start N, thin N/EVERY, late N+K, snap BYTES, oneway 1|2, skew MICROSECONDSus, mirror vlan ID, step N-MILLISECONDSms or twice MICROSECONDSus[+DELAYus]", s)
	}
	if m.At < 0 {
		return m, fmt.Errorf("mutation %q: frames are numbered from 1", s)
	}
	return m, nil
}

// scan is fmt.Sscanf that wants the whole of s.
func scan(s, format string, args ...any) bool {
	var rest string
	n, _ := fmt.Sscanf(s+" \x00", format+" %s", append(args, &rest)...)
	return n == len(args)+1 && rest == "\x00"
}
