package mutate_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/agree"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// The differential test: every capture of the repository, whole and
// damaged as real captures are (Generate), through the tracker, held to
// what the damage can and cannot tell. A failure names the capture, the
// seed and the mutation; go run ./internal/mutate/cmd/smcmutate -m
// "MUTATION" CAPTURE writes the variant to look at.

// diffSeed is the seed of the mutations; SMCSCOPE_MUTATE_SEED overrides
// it, to try others.
const diffSeed = 28

// mutateSeed is diffSeed, or SMCSCOPE_MUTATE_SEED where set.
func mutateSeed(t *testing.T) uint64 {
	seed := uint64(diffSeed)
	if s := os.Getenv("SMCSCOPE_MUTATE_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("SMCSCOPE_MUTATE_SEED=%q: %v", s, err)
		}
	}
	return seed
}

// variantsPerCapture: with the captures of samples/ and testdata/ about
// 2,000 variants in all; and thinnedPerCapture more, each missing many
// frames (mutate.Thinned).
const (
	variantsPerCapture = 52
	thinnedPerCapture  = 4
	// reorderedPerCapture: requests put after the responder's ACK of
	// them (mutate.Reordered); and three snap lengths per capture.
	reorderedPerCapture = 4
)

// captures lists the repository's SMC captures.
func captures(t *testing.T) []string {
	root := testutil.Root(t)
	var out []string
	for _, p := range []string{"samples/*.pcap", "samples/*.pcapng", "testdata/reference/*.pcap", "testdata/expert/*.pcap", "testdata/anck/*.pcap"} {
		m, _ := filepath.Glob(filepath.Join(root, p))
		for _, p := range m {
			if !testutil.DamagedFile(p) {
				out = append(out, p)
			}
		}
	}
	if len(out) < 30 {
		t.Fatalf("%d captures found under %s, want the repository's samples and test captures", len(out), root)
	}
	return out
}

// wireFrame is what the test reads of a frame itself, without the
// tracker: its RC transport (BTH) and the decoder's ICRC verdict.
type wireFrame struct {
	roce     bool
	src, dst string // IP addresses
	qp       uint32 // DestQP
	psn      uint32
	opcode   uint8
	syndrome uint8 // AETH, for an ACK
	icrcBad  bool
	cdcAt    int // the CDC message's offset in the frame; -1: none
}

func (w *wireFrame) request() bool { return w.roce && w.opcode <= 0x0b } // RC SEND and RDMA WRITE
func (w *wireFrame) ack() bool     { return w.roce && w.opcode == 0x11 && w.syndrome>>5 == 0 }

// run is one pass over a variant: the tracker's snapshot and findings,
// the frames' own view, and the frames the tracker marked out of
// sequence.
type run struct {
	snap     track.Snapshot
	findings map[expert.ID]int // occurrences (frames) per finding
	wire     []wireFrame
	outOfSeq int
	frames   int
}

func feed(t *testing.T, name string, lt layers.LinkType, frames []mutate.Frame) (r run) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s: panic: %v", name, p)
		}
	}()
	rd, err := capture.NewReader(name, mutate.NewSource(frames), lt)
	if err != nil {
		t.Fatal(err)
	}
	tr := track.New(track.Options{Unshared: true})
	outOfSeq, ok := decode.LookupField("smc.rc.out_of_seq")
	if !ok {
		t.Fatal("no field smc.rc.out_of_seq")
	}
	var rec decode.Record
	for {
		f, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r.frames++
		tr.Feed(f)
		rec.Reset()
		tr.AppendFields(f, &rec)
		if rec.Has(outOfSeq.ID) {
			r.outOfSeq++
		}
		var w wireFrame
		if b := f.BTH; b != nil && f.IPv4 != nil {
			w = wireFrame{roce: true, src: f.IPv4.SrcIP.String(), dst: f.IPv4.DstIP.String(), qp: b.DestQP, psn: b.PSN, opcode: uint8(b.Opcode),
				icrcBad: f.ICRC.Checked && !f.ICRC.OK}
			if f.AETH != nil {
				w.syndrome = uint8(f.AETH.Syndrome)
			}
			w.cdcAt = -1
			if f.CDC != nil {
				w.cdcAt = cap(f.Data) - cap(f.CDC.Contents)
			}
		}
		r.wire = append(r.wire, w)
	}
	tr.EndCapture(time.Time{})
	r.snap = tr.Snapshot()
	r.findings = map[expert.ID]int{}
	for _, f := range r.snap.Findings() {
		r.findings[f.ID] += f.Count
	}
	return r
}

// noMore reports the findings among ids that the variant shows more
// often than the whole capture.
func noMore(base, v run, ids ...expert.ID) string {
	var out []string
	for _, id := range ids {
		if v.findings[id] > base.findings[id] {
			out = append(out, fmt.Sprintf("%s %d (whole capture: %d)", id, v.findings[id], base.findings[id]))
		}
	}
	return strings.Join(out, ", ")
}

// coveredLater reports whether, after frame i's request was left out of
// the capture, an ACK of its responder covering its PSN is in the variant
// (ack), and whether that ACK comes before the next request of the same
// queue pair (first). A request whose PSN the whole capture shows twice
// (sent again) is not such a frame.
func coveredLater(base run, i int) (ack, first bool) {
	q := base.wire[i]
	if !q.request() {
		return false, false
	}
	sameQP := func(w wireFrame) bool { return w.request() && w.src == q.src && w.dst == q.dst && w.qp == q.qp }
	for j, w := range base.wire {
		if j != i && sameQP(w) && w.psn == q.psn {
			return false, false
		}
	}
	// The covering ACK is looked for up to 512 frames past the next
	// request of the queue pair.
	next := -1
	for j := i + 1; j < len(base.wire) && (next < 0 || j < next+512); j++ {
		w := base.wire[j]
		if w.ack() && w.src == q.dst && w.dst == q.src && covers(w.psn, q.psn) {
			return true, next < 0
		}
		if next < 0 && sameQP(w) && (w.psn-q.psn)&0xFFFFFF < 0x800000 {
			next = j
		}
	}
	return false, false
}

// nakOfLate reports whether the responder of frame i's request NAKs its
// PSN with a PSN sequence error after it.
func nakOfLate(base run, i int) bool {
	q := base.wire[i]
	if !q.request() {
		return false
	}
	for _, w := range base.wire[i+1:] {
		if w.roce && w.opcode == 0x11 && w.syndrome == 0x60 && w.src == q.dst && w.dst == q.src && w.psn == q.psn {
			return true
		}
	}
	return false
}

// covers: an ACK of PSN a acknowledges PSN p (24-bit, within RC's window).
func covers(a, p uint32) bool { return (a-p)&0xFFFFFF < 256 }

// TestDifferential runs every capture's variants and checks that
// smcdump's views and smctop's wire replay agree on them (connections,
// links, link groups, outcomes, findings: package agree), and what a
// damaged capture can and cannot tell:
//   - a request the capture missed whose ACK is in it makes no PSN gap,
//     sequence gap, unanswered LLC request, close without close or stall, and
//     no frame out of sequence when the ACK comes before the next request;
//   - a frame with a bad ICRC makes no cursor or sequence finding, and,
//     a request its responder's ACK covers, is the capture's damaged copy
//     (roce.capture.damaged), not an ICRC error or a missed request;
//   - a request put just after its responder's ACK (mutate.Reordered)
//     makes no retransmission, PSN or sequence gap, and every CDC and byte
//     is followed as in the whole capture;
//   - a snap length makes no malformed message, and from 96 bytes no
//     connection more than the whole capture lists;
//   - a capture that misses frames (mutate.Thinned) makes no consumer
//     stall the whole capture does not have;
//   - no episode lasts longer than its connection;
//   - the tracker takes every frame (no panic, none lost).
func TestDifferential(t *testing.T) {
	seed := mutateSeed(t)
	start := time.Now()
	variants, covered, badICRC, reordered, damagedCopies, mendedCDCs := 0, 0, 0, 0, 0, 0
	eachCapture(t, func(rel string, lt layers.LinkType, frames []mutate.Frame, base run) {
		ms := append(mutate.Generate(seed, frames, variantsPerCapture), mutate.Thinned(seed, frames, thinnedPerCapture)...)
		ms = append(ms, mutate.Reordered(seed, frames, reorderedPerCapture)...)
		for _, n := range []int{80, 96, 128} {
			ms = append(ms, mutate.Mutation{Kind: mutate.Snap, N: n})
		}
		for _, m := range ms {
			variants++
			name := fmt.Sprintf("%s seed %d %q", rel, seed, m)
			v := checkVariant(t, name, lt, m.Apply(frames))
			switch m.Kind {
			case mutate.Drop:
				ack, first := coveredLater(base, m.At)
				if !ack {
					break
				}
				covered++
				if s := noMore(base, v, expert.PSNGap, expert.SeqGap, expert.LLCUnanswered, expert.TestLinkUnanswered, expert.ClosedWithoutClose, expert.ConsumerStall); s != "" {
					t.Errorf("%s: the responder's ACK covers the missing request, yet %s", name, s)
				}
				if first && v.outOfSeq > base.outOfSeq {
					t.Errorf("%s: the ACK came before the next request, yet %d frames out of sequence (whole capture: %d)", name, v.outOfSeq, base.outOfSeq)
				}
			case mutate.Late:
				// The request put after its responder's ACK: the
				// capture's order, not the network's.
				reordered++
				ids := []expert.ID{expert.RCRetransmission, expert.SeqGap, expert.LLCUnanswered, expert.ClosedWithoutClose}
				if !nakOfLate(base, m.At) || v.findings[expert.PSNGap] > base.findings[expert.PSNGap]+1 {
					// Unless the responder NAKs the late request's own
					// PSN: it got later ones first, the network's order,
					// one run (a responder's runs are its NAKs).
					ids = append(ids, expert.PSNGap)
				}
				if s := noMore(base, v, ids...); s != "" {
					t.Errorf("%s: a request shown just after its ACK, yet %s", name, s)
				}
				if got, want := flowTotals(&v.snap), flowTotals(&base.snap); got != want {
					t.Errorf("%s: a request shown just after its ACK, yet CDCs and bytes %v, whole capture %v", name, got, want)
				}
			case mutate.Snap:
				// A snap length cuts frames, never a message the sender
				// got wrong. (Not CursorBackwards: a handshake cut before
				// its RMBE size leaves the connection joined mid-stream,
				// where a cursor that jumps a whole RMBE, as in
				// consumer-stall.pcap, cannot be followed.)
				if s := noMore(base, v, expert.Malformed, expert.CursorPastRMBE); s != "" {
					t.Errorf("%s: %s", name, s)
				}
				// From 96 bytes a CDC's fields are all kept: each
				// connection is placed by its CDCs though its CLC
				// messages are cut, never listed twice.
				if m.N >= 96 && len(v.snap.Conns) > len(base.snap.Conns) {
					t.Errorf("%s: %d connections, the whole capture %d", name, len(v.snap.Conns), len(base.snap.Conns))
				}
			case mutate.Thin:
				// Frames the capture missed never make a receiver
				// slower: a request sent again is dated by the copy the
				// responder took, not by one it dropped.
				if s := noMore(base, v, expert.ConsumerStall); s != "" {
					t.Errorf("%s: %s", name, s)
				}
			case mutate.Flip:
				if m.At >= len(v.wire) || !v.wire[m.At].icrcBad || base.wire[m.At].icrcBad {
					break
				}
				badICRC++
				if s := noMore(base, v, expert.CursorPastRMBE, expert.CursorBackwards, expert.SeqGap, expert.SeqDup); s != "" {
					t.Errorf("%s: a frame with a bad ICRC (the RNIC drops it) made %s", name, s)
				}
				// A request damaged where its BTH and addresses are
				// intact, which its responder's ACK covers with no copy
				// sent again: the capture's copy is damaged, the
				// network's packet was not. Unless the responder NAKed
				// its PSN as the one it waits for: then it dropped
				// that packet, as a damaged one is.
				b, w := base.wire[m.At], v.wire[m.At]
				if ack, _ := coveredLater(base, m.At); ack && !nakOfLate(base, m.At) && b.src == w.src && b.dst == w.dst && b.qp == w.qp && b.psn == w.psn && b.opcode == w.opcode {
					damagedCopies++
					if s := noMore(base, v, expert.BadICRC, expert.NotCaptured); s != "" || v.findings[expert.CaptureCopyDamaged] <= base.findings[expert.CaptureCopyDamaged] {
						t.Errorf("%s: a damaged copy of a request its responder took made %s, roce.capture.damaged %d (whole capture: %d)", name, s,
							v.findings[expert.CaptureCopyDamaged], base.findings[expert.CaptureCopyDamaged])
					}
					// One byte of its CDC: the ICRC names it, and the CDC
					// is followed as sent.
					if b.cdcAt >= 0 && m.N >= b.cdcAt && m.N < b.cdcAt+44 {
						mendedCDCs++
						if got, want := flowTotals(&v.snap), flowTotals(&base.snap); got != want {
							t.Errorf("%s: a CDC's byte damaged in the capture, yet CDCs and bytes %v, whole capture %v", name, got, want)
						}
					}
				}
			}
		}
	})
	if variants < 2000 {
		t.Errorf("%d variants, want at least 2000", variants)
	}
	t.Logf("%d variants of %d captures in %v: %d with a missed request the ACK covers, %d with a bad ICRC (%d of them a request the ACK covers, %d in its CDC), %d with a request after its ACK", variants, len(captures(t)),
		time.Since(start).Round(time.Millisecond), covered, badICRC, damagedCopies, mendedCDCs, reordered)
	if reordered < 50 {
		t.Errorf("only %d variants put a request after its ACK", reordered)
	}
	if covered < 50 || badICRC < 50 || damagedCopies < 50 || mendedCDCs < 10 {
		t.Errorf("too few variants test the capture's gaps (%d), bad ICRCs (%d), damaged copies the responder took (%d) and their CDCs (%d): the mutations missed them", covered, badICRC, damagedCopies, mendedCDCs)
	}
}

// sentTotals is the CDCs, bytes and WRITE bytes of every connection of s
// sent by side (as mutate.OneWay names them: 1 the lower address), or by
// either side for 0.
func sentTotals(s *track.Snapshot, side int) [3]uint64 {
	var t [3]uint64
	for i := range s.Conns {
		c := &s.Conns[i]
		for d := range c.Flow {
			if side != 0 {
				src, dst := c.Client.Addr(), c.Server.Addr()
				if !src.IsValid() {
					// Joined mid-stream: the ends of its link.
					for j := range s.Links {
						if l := &s.Links[j]; l.ID == c.Link {
							src, dst = l.Client.Addr, l.Server.Addr
						}
					}
				}
				if d == int(track.DirS2C) {
					src, dst = dst, src
				}
				if (src.Compare(dst) < 0) != (side == 1) {
					continue
				}
			}
			f := &c.Flow[d]
			t[0] += uint64(f.CDCs)
			t[1] += f.Bytes
			t[2] += f.WriteBytes
		}
	}
	return t
}

// flowTotals is the CDCs and bytes of every connection of s, both ways.
func flowTotals(s *track.Snapshot) [2]uint64 {
	var t [2]uint64
	for i := range s.Conns {
		for _, f := range s.Conns[i].Flow {
			t[0] += uint64(f.CDCs)
			t[1] += f.Bytes
		}
	}
	return t
}

// checkStats: every frame is counted once, in one of the frame counts
// (a frame claimed by a connection later moves from the count it was in).
func checkStats(t *testing.T, name string, s *track.Snapshot) {
	st := s.Stats
	for _, n := range []int{st.ConnAttached, st.LinkOnly, st.Unattached, st.TCPUntracked, st.Other, st.LateAttached} {
		if n < 0 {
			t.Errorf("%s: a negative frame count: %+v", name, st)
			return
		}
	}
	if sum := st.ConnAttached + st.LinkOnly + st.Unattached + st.TCPUntracked + st.Other + st.CaptureDups; sum != st.Frames {
		t.Errorf("%s: the frame counts add up to %d of %d frames: %+v", name, sum, st.Frames, st)
	}
}

// checkDurations: an episode (write-blocked, RMBE full) is measured
// within its connection's frames, never past them.
func checkDurations(t *testing.T, name string, s *track.Snapshot) {
	for i := range s.Conns {
		c := &s.Conns[i]
		span := c.Last.Sub(c.Start)
		for d := range c.Flow {
			f := &c.Flow[d]
			if f.WBLongest > span || f.StallLongest > span {
				t.Errorf("%s: connection %d %v: write-blocked %v, stall %v, longer than the connection's %v", name, c.ID, track.Dir(d), f.WBLongest, f.StallLongest, span)
			}
		}
	}
}

// TestDifferentialOneWay runs every capture of one direction (a mirror of a
// port's egress, tcpdump -Q out), whole and with request frames dropped,
// checked as TestDifferential's variants are, and held to what such a
// capture can tell:
//   - without the responder's packets, no LLC request is unanswered, no
//     close missing, no link left unconfirmed, no handshake failed, and no
//     loss or gap made that the whole capture does not show;
//   - a request the capture of one direction missed is never sent again:
//     it makes no PSN or sequence gap, and every other CDC is followed;
//     nor do many missed (a mirror that also drops) make a gap, a
//     repeat, a cursor it cannot follow or an unconfirmed link.
func TestDifferentialOneWay(t *testing.T) {
	const dropsPerSide, thinnedOneWay = 6, 4
	variants := 0
	eachCapture(t, func(rel string, lt layers.LinkType, frames []mutate.Frame, base run) {
		if carriedAlready(frames) {
			// One way by the outer addresses is not one way: a
			// mirror session carries both directions from one host.
			return
		}
		for side := 1; side <= 2; side++ {
			m := mutate.Mutation{Kind: mutate.OneWay, N: side}
			vf := m.Apply(frames)
			if len(vf) == len(frames) || len(vf) == 0 {
				continue // not a capture of two IP hosts
			}
			name := fmt.Sprintf("%s %q", rel, m)
			v := checkVariant(t, name, lt, vf)
			variants++
			for i := range v.snap.Conns {
				c := &v.snap.Conns[i]
				for d := range c.Flow {
					if (c.Flow[d].FIN || c.Flow[d].RST) && !c.Flow[1-d].TCPShown() && !c.Inferred && !rows.Ended(c, false) {
						t.Errorf("%s: connection %d: a FIN or RST, no segment the other way, yet not ended", name, c.ID)
					}
				}
				// The client's side: its Confirm names the client's QP,
				// which the link's first CONFIRM_LINK response (or, for a
				// reused group, the first connection's) names too. Its
				// CDCs carry the server's token, which only the Accept
				// gave: the first one (sequence 1) ties them to it where
				// no other handshake waits for its first CDC, else they
				// go to a connection joined from them, and this one's
				// counts are unknown, not zero.
				if !c.Inferred && c.ClientEP.Valid && !c.ServerEP.Valid && !c.SMCD && c.Outcome == track.OutcomeSMCR && c.ClientEP.Token != 0 {
					if c.LGR == 0 && onLink(&base.snap, c) {
						t.Errorf("%s: connection %d: a Confirm in a capture of the client's side, yet on no link", name, c.ID)
					}
					if f := &c.Flow[track.DirC2S]; f.CDCs == 0 && !f.NotShown {
						t.Errorf("%s: connection %d: its CDCs carry a token the capture does not hold, yet counted as none", name, c.ID)
					}
				}
				// The server's side of a first contact: its first
				// CONFIRM_LINK request names the Accept's QP, and Linux
				// sends it only once the Confirm came.
				if !c.Inferred && c.ServerEP.Valid && !c.ClientEP.Valid && !c.SMCD && c.FirstContact && onLink(&base.snap, c) {
					if c.LGR == 0 || c.Outcome != track.OutcomeSMCR {
						t.Errorf("%s: connection %d: an Accept and its link's CONFIRM_LINK in a capture of the server's side, yet %v on link group %d", name, c.ID, c.Outcome, c.LGR)
					}
					if f := &c.Flow[track.DirS2C]; f.CDCs == 0 && !f.NotShown {
						t.Errorf("%s: connection %d: its CDCs carry a token the capture does not hold, yet counted as none", name, c.ID)
					}
				}
			}
			// (Not where the whole capture's cursors announce other bytes
			// than its WRITEs carry, as a crafted vector's may: a capture of
			// one direction can follow only what is consistent.)
			if got, want := sentTotals(&v.snap, 0), sentTotals(&base.snap, side); got != want && want[1] == want[2] {
				t.Errorf("%s: CDCs, bytes and WRITE bytes %v, the whole capture's of that side %v", name, got, want)
			}
			if s := noMore(base, v, expert.LLCUnanswered, expert.TestLinkUnanswered, expert.ClosedWithoutClose, expert.AddedUnconfirmed,
				expert.HandshakeFailed, expert.FirstLinkUnconfirmed, expert.PSNGap, expert.SeqGap); s != "" {
				t.Errorf("%s: one direction, yet %s", name, s)
			}
			var reqs []int
			for i := range v.wire {
				if v.wire[i].request() {
					reqs = append(reqs, i)
				}
			}
			for k := range min(dropsPerSide, len(reqs)) {
				d := mutate.Mutation{Kind: mutate.Drop, At: reqs[len(reqs)*(2*k+1)/(2*dropsPerSide)]}
				dname := fmt.Sprintf("%s, then %q", name, d)
				dv := checkVariant(t, dname, lt, d.Apply(vf))
				variants++
				ids := []expert.ID{expert.SeqGap, expert.LLCUnanswered, expert.ClosedWithoutClose}
				if base.findings[expert.RCRetransmission] == 0 {
					// Where the requester goes back for a loss the capture
					// point did not see (lossy.pcap), its resend of a PSN
					// the capture missed is the loss the wire shows: one
					// direction cannot tell the two apart.
					ids = append(ids, expert.PSNGap)
				}
				if s := noMore(v, dv, ids...); s != "" {
					t.Errorf("%s: a request the capture missed, yet %s", dname, s)
				}
				if got, want := flowTotals(&dv.snap)[0], flowTotals(&v.snap)[0]; got+1 < want {
					t.Errorf("%s: one request missed, yet %d CDCs followed of %d", dname, got, want)
				}
			}
			// A mirror of one direction that also drops frames, many.
			thins := append(mutate.Thinned(uint64(diffSeed), vf, thinnedOneWay),
				mutate.Mutation{Kind: mutate.Thin, At: 49, N: 7}, mutate.Mutation{Kind: mutate.Thin, At: 99, N: 3})
			for _, th := range thins {
				tname := fmt.Sprintf("%s, then %q", name, th)
				tv := checkVariant(t, tname, lt, th.Apply(vf))
				variants++
				ids := []expert.ID{expert.SeqGap, expert.SeqDup, expert.LLCUnanswered, expert.ClosedWithoutClose,
					expert.FirstLinkUnconfirmed, expert.HandshakeFailed}
				if base.findings[expert.RCRetransmission] == 0 {
					ids = append(ids, expert.PSNGap)
				}
				if base.findings[expert.CursorBackwards] == 0 {
					// (consumer-stall.pcap's crafted cursor jumps a whole
					// RMBE: joined mid-stream, as one direction is, it
					// cannot be followed, and how often depends on the cut.)
					ids = append(ids, expert.CursorBackwards)
				}
				if s := noMore(base, tv, ids...); s != "" {
					t.Errorf("%s: frames the capture missed, yet %s", tname, s)
				}
			}
		}
	})
	if variants < 100 {
		t.Errorf("%d variants of one direction, want at least 100", variants)
	}
}

// onLink reports whether the connection of snap with c's 4-tuple ran
// SMC-R on a link of which the capture shows packets (its first
// CONFIRM_LINK exchange among them).
func onLink(snap *track.Snapshot, c *track.Conn) bool {
	for i := range snap.Conns {
		x := &snap.Conns[i]
		if x.Client == c.Client && x.Server == c.Server && !x.Inferred {
			// (Not one followed from ANCK's dump device: no link on the
			// wire, its connections placed by their TCP ends.)
			return x.Outcome == track.OutcomeSMCR && x.LGR != 0 && !x.LinkNotCaptured && x.Flow[0].Dumped+x.Flow[1].Dumped == 0
		}
	}
	return false
}

// eachCapture calls do with every capture of the repository: its name,
// link type and frames, and its tracker run whole.
func eachCapture(t *testing.T, do func(rel string, lt layers.LinkType, frames []mutate.Frame, base run)) {
	for _, path := range captures(t) {
		rel, _ := filepath.Rel(testutil.Root(t), path)
		frames, lt, err := mutate.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		do(rel, lt, frames, feed(t, rel, lt, frames))
	}
}

// checkVariant feeds one variant and holds it to what every variant must
// keep: every frame taken, episodes within their connections, frame
// counts that add up, smcdump's views and smctop's wire replay telling
// the same.
func checkVariant(t *testing.T, name string, lt layers.LinkType, vf []mutate.Frame) run {
	t.Helper()
	v := feed(t, name, lt, vf)
	if v.frames != len(vf) {
		t.Errorf("%s: the tracker took %d of %d frames", name, v.frames, len(vf))
	}
	checkDurations(t, name, &v.snap)
	checkStats(t, name, &v.snap)
	data, err := mutate.Encode(lt, vf)
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := agree.Bytes(name, data)
	if err != nil {
		t.Errorf("%s: %v", name, err)
	}
	for _, d := range diffs {
		t.Errorf("%s: %s", name, d)
	}
	return v
}

// TestDifferentialSkew merges the two directions of every capture as two
// hosts' captures are merged (mergecap) when their clocks are a few
// to 40 milliseconds apart: one side's ACKs, responses, first CDCs and
// SYN-ACKs come before the requests, messages, CLC messages and data they
// answer or follow; and copies every frame as a mirror of both directions
// of a port does, one copy tagged with a VLAN. (Merged at ±5 and ±20 ms
// and thinned too, no gap or repeat is made up.)
// Nothing is lost, so the
// connections, their CDCs and bytes are the whole capture's, and no
// retransmission, gap, unanswered request or failed link is made up.
// Each host's capture holding both directions, merged, holds every
// packet twice: the copies come 3 ms to 0.3 s after (the clocks apart),
// NAKs and resends between, and each is followed once; where one of the
// two captures missed frames (thinned), the other's copy, 3 ms late, is
// the capture's order, and no CDC is taken for repeated or skipped.
func TestDifferentialSkew(t *testing.T) {
	variants := 0
	eachCapture(t, func(rel string, lt layers.LinkType, frames []mutate.Frame, base run) {
		if len(mutate.Mutation{Kind: mutate.OneWay, N: 1}.Apply(frames)) == len(frames) || base.findings[expert.TimeBackwards] > 0 {
			// Not a capture of two IP hosts; or one with a frame whose
			// time is wrong, which a merge by time moves elsewhere.
			return
		}
		ms := []mutate.Mutation{{Kind: mutate.Mirror, N: 100}}
		for _, us := range []int{-40000, -20000, -9000, -5000, -2000, 2000, 5000, 9000, 20000, 40000} {
			ms = append(ms, mutate.Mutation{Kind: mutate.Skew, N: us})
		}
		// Each host's capture of both directions, merged: every packet
		// twice, the clocks 3 ms to 0.3 s apart, one with the path 2 ms
		// long (each direction's copies their own time apart). (Not where ANCK's dump
		// device holds the data: only the receiver dumps it,
		// smc_cdc_msg_recv_action, so two hosts' dumps merged do not
		// hold every frame twice. Apart by more than a connection
		// lasts, the capture holds it twice as a capture played again
		// would: told apart only by a connection running when its
		// handshake's copy comes.)
		if base.snap.Stats.Dump == 0 {
			for _, m := range []mutate.Mutation{{N: 3000}, {N: 40000}, {N: 40000, At: 2000}, {N: 300000}} {
				if m.Kind = mutate.Twice; m.N <= 40000 || outlasts(base.snap.Conns, time.Duration(m.N)*time.Microsecond) {
					ms = append(ms, m)
				}
			}
		}
		for _, m := range ms {
			name := fmt.Sprintf("%s %q", rel, m)
			v := checkVariant(t, name, lt, m.Apply(frames))
			variants++
			if s := noMore(base, v, expert.RCRetransmission, expert.PSNGap, expert.SeqGap, expert.LLCUnanswered, expert.TestLinkUnanswered,
				expert.ClosedWithoutClose, expert.FirstLinkUnconfirmed, expert.HandshakeFailed, expert.AddedUnconfirmed); s != "" {
				t.Errorf("%s: the clocks apart, yet %s", name, s)
			}
			if got, want := flowTotals(&v.snap), flowTotals(&base.snap); got != want {
				t.Errorf("%s: CDCs and bytes %v, whole capture %v", name, got, want)
			}
			if got, want := len(v.snap.Conns), len(base.snap.Conns); got != want {
				t.Errorf("%s: %d connections, whole capture %d", name, got, want)
			}
			if got, want := len(v.snap.LinkGroups), len(base.snap.LinkGroups); got != want {
				t.Errorf("%s: %d link groups, whole capture %d", name, got, want)
			}
			if m.Kind == mutate.Twice && m.N == 3000 {
				// Merged, and one of the two captures missed frames the
				// other holds: the other's copy comes 3 ms late, after
				// the responder's ACK of it and the CDCs after it.
				mf := m.Apply(frames)
				for _, th := range mutate.Thinned(uint64(diffSeed), mf, 2) {
					tname := fmt.Sprintf("%s, then %q", name, th)
					tv := checkVariant(t, tname, lt, th.Apply(mf))
					variants++
					if s := noMore(base, tv, expert.RCRetransmission, expert.PSNGap, expert.SeqGap, expert.SeqDup, expert.LLCUnanswered,
						expert.ClosedWithoutClose, expert.FirstLinkUnconfirmed, expert.HandshakeFailed); s != "" {
						t.Errorf("%s: one capture missed frames the other holds, yet %s", tname, s)
					}
				}
			}
			if m.Kind != mutate.Skew || (m.N != 5000 && m.N != -5000 && m.N != 20000 && m.N != -20000) || base.findings[expert.RCRetransmission] > 0 {
				continue
			}
			// Merged, and one of the two captures dropped frames.
			mf := m.Apply(frames)
			for _, th := range append(mutate.Thinned(uint64(diffSeed), mf, 2), mutate.Mutation{Kind: mutate.Thin, At: 99, N: 3}) {
				tname := fmt.Sprintf("%s, then %q", name, th)
				tv := checkVariant(t, tname, lt, th.Apply(mf))
				variants++
				ids := []expert.ID{expert.SeqGap, expert.SeqDup, expert.PSNGap, expert.LLCUnanswered, expert.ClosedWithoutClose,
					expert.FirstLinkUnconfirmed, expert.HandshakeFailed}
				if base.findings[expert.CursorBackwards] == 0 {
					ids = append(ids, expert.CursorBackwards)
				}
				if s := noMore(base, tv, ids...); s != "" {
					t.Errorf("%s: frames the capture missed, yet %s", tname, s)
				}
			}
		}
		// The mirror's copies cut by a snap length (no ICRC to compare):
		// still copies, and the resends of a lossy capture still resends.
		snap := mutate.Mutation{Kind: mutate.Snap, N: 128}
		cut := feed(t, rel+" snap", lt, snap.Apply(frames))
		name := fmt.Sprintf("%s \"mirror vlan 100\", then %q", rel, snap)
		v := checkVariant(t, name, lt, snap.Apply(mutate.Mutation{Kind: mutate.Mirror, N: 100}.Apply(frames)))
		if s := noMore(cut, v, expert.RCRetransmission, expert.LLCRetransmitted, expert.PSNGap, expert.SeqGap); s != "" {
			t.Errorf("%s: copies, yet %s", name, s)
		}
		if got, want := v.findings[expert.RCRetransmission], cut.findings[expert.RCRetransmission]; got != want {
			t.Errorf("%s: %d retransmissions, the cut capture %d", name, got, want)
		}
		if got, want := flowTotals(&v.snap), flowTotals(&cut.snap); got != want {
			t.Errorf("%s: CDCs and bytes %v, the cut capture %v", name, got, want)
		}
	})
	if variants < 60 {
		t.Errorf("%d merged variants, want at least 60", variants)
	}
}

// outlasts reports whether every connection of conns ran longer than d,
// from its first frame to its close (its last frame where not closed).
func outlasts(conns []track.Conn, d time.Duration) bool {
	for _, c := range conns {
		end := c.Last
		if !c.TClose.IsZero() {
			end = c.TClose
		}
		if end.Sub(c.Start) <= d {
			return false
		}
	}
	return len(conns) > 0
}

// TestDamagesCombined: damages, alone or in turn, each case one that made
// up a finding the whole capture does not have.
//   - multilink.pcap without frames 969-1098 (its failover among them):
//     a connection's CDCs go on on the other link with no failover CDC
//     shown, and the first of each direction there follows CDCs the
//     capture missed (no smc.cdc.seq_gap in either).
//   - multilink.pcap merged with the server's clock 20 ms behind, the
//     merge then started late: a connection is followed from two halves,
//     joined from their CDCs apart and merged when the capture ties them;
//     a peer's RMBE found full against the consumer cursor one half
//     lacked is judged again at the merge (no consumer stall).
//   - silent-link.pcap, the server's egress only, thinned: the DELETE_LINK
//     of its failed link is among the frames missed, and the link added
//     next on the same client GID is not judged asymmetric against it.
//   - pingpong.pcap with every other frame from frame 920 on left out: at
//     the link group's end both directions' runs out of sequence hold a
//     DELETE_LINK, and following one run's settles the other's, whose
//     own DELETE_LINK settled the first again (a stack overflow, found
//     by SMCSCOPE_MUTATE_SEED=202): a run being followed is settled once.
//   - lossy.pcap with every 7th frame from frame 81 on left out: the
//     server's last CDCs, which said it consumed, are among the requests
//     the client's ACKs cover and the capture missed; the client's close
//     ends the stay full it measured against the consumer cursor before
//     them, which is no consumer stall (SMCSCOPE_MUTATE_SEED=1012).
//   - anck/rwwi.pcap with the Accept's rkey damaged: the client's writes
//     with immediate name no RMB the capture knows, their immediates the
//     connection; a write so claimed by its own immediate was counted
//     unattached and attached (frames unattached -1, seed 7).
//   - expert/snap-cut.pcap with its cut SEND shown before the WRITE before
//     it: followed from the run kept out of sequence, the SEND was no
//     longer known to be cut, so the CDC it may have been did not explain
//     the next one's sequence number (smc.cdc.seq_gap, seed 2020).
//   - lossy.pcap with two WRITEs of a burst swapped, then the whole burst
//     sent again from before them (a go-back of the requester's own):
//     the swapped pair's PSNs sent again are no sign that the one shown
//     late was lost (roce.rc.psn_gap, seed 3003).
//   - lossy.pcap with two WRITEs of a go-back-N burst swapped (frames
//     1640 and 1641): the responder's NAK of a PSN before the late one,
//     shown after the burst, answers an earlier run, not the swapped pair
//     (roce.rc.psn_gap, seed 4031); with frames 617 and 618 swapped, the
//     requester's resend of the PSN after the late one, not beginning at
//     the late one, answers no NAK of it (seed 4061).
//   - lossy.pcap with a WRITE of a go-back burst shown after the next
//     one (frame 596 after 601): the responder's NAK of it says the
//     responder still waited for it; the requester's going back to it
//     sends the next one again too, which shows no run of its own
//     (roce.rc.psn_gap, seed 7030).
func TestDamagesCombined(t *testing.T) {
	for _, c := range []struct {
		rel   string
		ms    []mutate.Mutation
		never []expert.ID
	}{
		{"samples/multilink.pcap", []mutate.Mutation{{Kind: mutate.DropRange, At: 968, N: 130}}, []expert.ID{expert.SeqGap}},
		{"samples/multilink.pcap", []mutate.Mutation{{Kind: mutate.Skew, N: 20000}, {Kind: mutate.Start, At: 100}},
			[]expert.ID{expert.ConsumerStall, expert.CursorBackwards, expert.SeqGap}},
		{"samples/silent-link.pcap", []mutate.Mutation{{Kind: mutate.OneWay, N: 2}, {Kind: mutate.Thin, At: 6, N: 9}},
			[]expert.ID{expert.Asymmetric}},
		{"samples/pingpong.pcap", []mutate.Mutation{{Kind: mutate.Thin, At: 919, N: 2}}, nil},
		{"samples/lossy.pcap", []mutate.Mutation{{Kind: mutate.Thin, At: 80, N: 7}}, []expert.ID{expert.ConsumerStall}},
		{"testdata/anck/rwwi.pcap", []mutate.Mutation{{Kind: mutate.Flip, At: 9, N: 110, Mask: 0x01}}, nil},
		{"testdata/expert/snap-cut.pcap", []mutate.Mutation{{Kind: mutate.Late, At: 25, N: 1}}, []expert.ID{expert.SeqGap}},
		{"samples/lossy.pcap", []mutate.Mutation{{Kind: mutate.Late, At: 455, N: 1}}, []expert.ID{expert.PSNGap}},
		{"samples/lossy.pcap", []mutate.Mutation{{Kind: mutate.Late, At: 1639, N: 1}}, []expert.ID{expert.PSNGap}},
		{"samples/lossy.pcap", []mutate.Mutation{{Kind: mutate.Late, At: 616, N: 1}}, []expert.ID{expert.PSNGap}},
		{"samples/lossy.pcap", []mutate.Mutation{{Kind: mutate.Late, At: 595, N: 5}}, []expert.ID{expert.PSNGap}},
	} {
		frames, lt, err := mutate.ReadFile(filepath.Join(testutil.Root(t), c.rel))
		if err != nil {
			t.Fatal(err)
		}
		base := feed(t, c.rel, lt, frames)
		name := c.rel
		for _, m := range c.ms {
			frames = m.Apply(frames)
			name += fmt.Sprintf(" %q", m)
		}
		if s := noMore(base, checkVariant(t, name, lt, frames), c.never...); s != "" {
			t.Errorf("%s: %s", name, s)
		}
	}
}

// TestSkewFastHandshake: pingpong.pcap with its times ten times closer
// together (a handshake and first-link setup of 15 ms, as on a fast
// path), then merged with the clocks 40 ms apart either way: the server's
// first CDCs come before the client's SYN, or the client's after the
// server's replies. The connections, their CDCs and bytes are the
// whole capture's.
func TestSkewFastHandshake(t *testing.T) {
	const rel = "samples/pingpong.pcap"
	frames, lt, err := mutate.ReadFile(filepath.Join(testutil.Root(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	t0 := frames[0].CI.Timestamp
	for i := range frames {
		frames[i].CI.Timestamp = t0.Add(frames[i].CI.Timestamp.Sub(t0) / 10)
	}
	base := feed(t, rel+" (times /10)", lt, frames)
	for _, us := range []int{40000, -40000} {
		m := mutate.Mutation{Kind: mutate.Skew, N: us}
		name := fmt.Sprintf("%s (times /10) %q", rel, m)
		v := checkVariant(t, name, lt, m.Apply(frames))
		if got, want := flowTotals(&v.snap), flowTotals(&base.snap); got != want {
			t.Errorf("%s: CDCs and bytes %v, whole capture %v", name, got, want)
		}
		if got, want := len(v.snap.Conns), len(base.snap.Conns); got != want {
			t.Errorf("%s: %d connections, whole capture %d", name, got, want)
		}
	}
}

// TestReorderedAtEnd: malformed.pcap's last WRITE shown after the CDC
// that followed it, the capture ending with the responder's ACK of the
// WRITE alone. The ACK came with no NAK before it, which a responder that
// had the CDC first would have sent: the capture's order, and the CDC is
// followed as in the whole capture (it was lost, found by the
// differential test's seeds 1000-2024).
func TestReorderedAtEnd(t *testing.T) {
	const rel = "testdata/expert/malformed.pcap"
	frames, lt, err := mutate.ReadFile(filepath.Join(testutil.Root(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	base := feed(t, rel, lt, frames)
	m := mutate.Mutation{Kind: mutate.Late, At: 37, N: 1}
	v := checkVariant(t, fmt.Sprintf("%s %q", rel, m), lt, m.Apply(frames))
	if got, want := flowTotals(&v.snap), flowTotals(&base.snap); got != want {
		t.Errorf("%q: CDCs and bytes %v, whole capture %v", m, got, want)
	}
}

// TestClockStepBack steps every capture's clock back by 5 s at a third, a
// half and two thirds of its frames (mutate.Step: the capture host's
// clock stepped by NTP): the step is a finding of its own
// (smc.capture.time_backwards), and nothing else changes but how often a
// finding counted per frame is met at the step: the connections, their
// CDCs and bytes are the whole capture's, and every other finding the
// whole capture has it has, and none more; a handshake's durations are
// the whole capture's or, across the step, not known ("-"), never shorter.
// (Measured by the stamps, a
// link's confirmation awaited across the step was never late enough to
// be unconfirmed.)
func TestClockStepBack(t *testing.T) {
	variants, unmeasured := 0, 0
	eachCapture(t, func(rel string, lt layers.LinkType, frames []mutate.Frame, base run) {
		n := len(frames)
		if n < 6 {
			return
		}
		for _, at := range []int{n / 3, n / 2, 2 * n / 3} {
			m := mutate.Mutation{Kind: mutate.Step, At: at, N: 5000}
			name := fmt.Sprintf("%s %q", rel, m)
			v := checkVariant(t, name, lt, m.Apply(frames))
			variants++
			for id := range base.findings {
				if v.findings[id] == 0 {
					t.Errorf("%s: no %s (whole capture: %d)", name, id, base.findings[id])
				}
			}
			for id, c := range v.findings {
				if base.findings[id] == 0 && id != expert.TimeBackwards {
					t.Errorf("%s: %s %d, which the whole capture does not have", name, id, c)
				}
			}
			if v.findings[expert.TimeBackwards] == 0 {
				t.Errorf("%s: no %s", name, expert.TimeBackwards)
			}
			if got, want := flowTotals(&v.snap), flowTotals(&base.snap); got != want {
				t.Errorf("%s: CDCs and bytes %v, whole capture %v", name, got, want)
			}
			if got, want := len(v.snap.Conns), len(base.snap.Conns); got != want {
				t.Errorf("%s: %d connections, whole capture %d", name, got, want)
				continue
			}
			// A handshake step's time from the SYN is the whole capture's,
			// or not known where the step back lies between them: never
			// shorter by the time the step hid.
			vr, br := rows.ConnRows(&v.snap), rows.ConnRows(&base.snap)
			for i := range vr {
				got, want := vr[i].Handshake, br[i].Handshake
				for j, pair := range [][2]float64{{got.Proposal, want.Proposal}, {got.Accept, want.Accept}, {got.Confirm, want.Confirm}, {got.FirstCDC, want.FirstCDC}} {
					switch {
					case pair[0] == pair[1]:
					case pair[0] == -1:
						unmeasured++
					default:
						t.Errorf("%s: connection %d handshake step %d at %.3f ms, whole capture %.3f", name, vr[i].ID, j, pair[0], pair[1])
					}
				}
			}
		}
	})
	if unmeasured == 0 {
		t.Errorf("no handshake across a step back in %d variants: the check above checked nothing", variants)
	}
	t.Logf("%d variants, %d handshake steps across a step back", variants, unmeasured)
}

// TestDifferentialMirror carries every capture as an ERSPAN type II
// session delivers it to a collector, its frames numbered in order, then
// damages it as the collector or a tool would (thinned, frames and
// bursts left out, a late start, an early end). The numbering tells
// exactly how many frames are missing between the first and the last the
// capture holds (smc.capture.mirror_lost counts them, never more), and
// everything else is what the same damage makes of the capture taken on
// the hosts: the carrier changes nothing.
func TestDifferentialMirror(t *testing.T) {
	variants := 0
	eachCapture(t, func(rel string, lt layers.LinkType, frames []mutate.Frame, base run) {
		if lt != layers.LinkTypeEthernet || len(frames) < 2 || carriedAlready(frames) {
			// Not Ethernet frames to carry, or frames a mirror carried
			// already (a frame's tunnel is its innermost).
			return
		}
		// Frame i is number i of the session (the GRE sequence number,
		// bytes 38-41 of what Carry makes).
		carried := make([]mutate.Frame, len(frames))
		for i, f := range frames {
			d := mutate.Carry("erspan2", f.Data, uint32(i), false)
			carried[i] = mutate.Frame{CI: f.CI, Data: d}
			carried[i].CI.CaptureLength, carried[i].CI.Length = len(d), f.CI.Length+len(d)-len(f.Data)
		}
		seq := func(f mutate.Frame) int { return int(binary.BigEndian.Uint32(f.Data[38:])) }
		ms := mutate.Thinned(diffSeed, frames, 2)
		for _, m := range mutate.Generate(diffSeed, frames, 12) {
			if m.Kind == mutate.Drop || m.Kind == mutate.DropRange || m.Kind == mutate.Start || m.Kind == mutate.Cut {
				ms = append(ms, m)
			}
		}
		for _, m := range ms {
			name := fmt.Sprintf("%s carried by ERSPAN II, then %q", rel, m)
			kept := m.Apply(carried)
			// The numbers skipped between the first frame and the last;
			// a gap within the session's first frames (track's
			// mirrorTrust) is not counted.
			missing, early := 0, false
			for i := 1; i < len(kept); i++ {
				if d := seq(kept[i]) - seq(kept[i-1]); d != 1 {
					missing += d - 1
					early = early || i <= 5
				}
			}
			hosts := m.Apply(frames)
			v := checkVariant(t, name, lt, kept)
			variants++
			if got := v.snap.Stats.MirrorLost; got != missing && (!early || got > missing) {
				t.Errorf("%s: %d frames missing by the session's numbers, want %d", name, got, missing)
			}
			if got, want := v.findings[expert.MirrorLost] > 0, missing > 0; got != want && !early {
				t.Errorf("%s: smc.capture.mirror_lost %v, want %v", name, got, want)
			}
			w := feed(t, name+" on the hosts", lt, hosts)
			delete(v.findings, expert.MirrorLost)
			if !maps.Equal(v.findings, w.findings) {
				t.Errorf("%s: findings %v, on the hosts %v", name, v.findings, w.findings)
			}
			if got, want := flowTotals(&v.snap), flowTotals(&w.snap); got != want {
				t.Errorf("%s: CDCs and bytes %v, on the hosts %v", name, got, want)
			}
		}
	})
	if variants < 30 {
		t.Errorf("%d carried variants, want at least 30", variants)
	}
}

// TestDifferentialMirrorDamaged: every capture carried by an ERSPAN
// session, three copies' GRE sequence numbers damaged (GRE carries no
// checksum), each bit in turn: a number damaged ahead, behind, near or
// far is a frame the capture holds, damaged, not one missing, and the
// rest is the capture's.
func TestDifferentialMirrorDamaged(t *testing.T) {
	eachCapture(t, func(rel string, lt layers.LinkType, frames []mutate.Frame, base run) {
		if lt != layers.LinkTypeEthernet || len(frames) < 8 || carriedAlready(frames) {
			return
		}
		for bit := range 32 {
			carried := make([]mutate.Frame, len(frames))
			for i, f := range frames {
				d := mutate.Carry("erspan2", f.Data, uint32(i)+7<<28, false)
				carried[i] = mutate.Frame{CI: f.CI, Data: d}
				carried[i].CI.CaptureLength, carried[i].CI.Length = len(d), f.CI.Length+len(d)-len(f.Data)
			}
			for _, i := range []int{len(frames) / 4, len(frames) / 2, 3 * len(frames) / 4} {
				d := carried[i].Data
				binary.BigEndian.PutUint32(d[38:], binary.BigEndian.Uint32(d[38:])^1<<bit)
			}
			name := fmt.Sprintf("%s carried by ERSPAN II, three numbers' bit %d flipped", rel, bit)
			v := feed(t, name, lt, carried)
			if got := v.snap.Stats.MirrorLost; got != 0 {
				t.Errorf("%s: %d frames missing by the session's numbers (%+v), want none", name, got, v.snap.Mirrors)
			}
			delete(v.findings, expert.MirrorLost)
			if !maps.Equal(v.findings, base.findings) {
				t.Errorf("%s: findings %v, the capture %v", name, v.findings, base.findings)
			}
		}
	})
}

// TestDifferentialMirrorOuterDamaged: every capture carried by an ERSPAN
// session, then one byte of the outer headers (Ethernet, IPv4 with its
// checksum as the switch fills it, GRE, ERSPAN) damaged in three copies,
// two of them in a row, each differently. The capture holds those frames:
// whatever the damage hid (the session ID, an address, the GRE header,
// that the frame is IPv4), no number is missing; a few of the damages
// are also held to smcdump's and smctop's agreement.
func TestDifferentialMirrorOuterDamaged(t *testing.T) {
	agreeAt := map[int]bool{12: true, 14: true, 23: true, 27: true, 35: true, 45: true}
	eachCapture(t, func(rel string, lt layers.LinkType, frames []mutate.Frame, base run) {
		if lt != layers.LinkTypeEthernet || len(frames) < 8 || carriedAlready(frames) {
			return
		}
		damage := map[int]byte{len(frames) / 4: 0xff, len(frames) / 2: 0x0f, len(frames)/2 + 1: 0xf0}
		for off := range 50 {
			if off >= 38 && off < 42 { // the sequence number: TestDifferentialMirrorDamaged
				continue
			}
			carried := make([]mutate.Frame, len(frames))
			for i, f := range frames {
				d := mutate.Carry("erspan2", f.Data, uint32(i), false)
				d[off] ^= damage[i]
				carried[i] = mutate.Frame{CI: f.CI, Data: d}
				carried[i].CI.CaptureLength, carried[i].CI.Length = len(d), f.CI.Length+len(d)-len(f.Data)
			}
			name := fmt.Sprintf("%s carried by ERSPAN II, outer byte %d of three copies damaged", rel, off)
			var v run
			if agreeAt[off] {
				v = checkVariant(t, name, lt, carried)
			} else {
				v = feed(t, name, lt, carried)
			}
			if got := v.snap.Stats.MirrorLost; got != 0 || v.findings[expert.MirrorLost] > 0 {
				t.Errorf("%s: %d frames missing by the session's numbers (%+v), want none", name, got, v.snap.Mirrors)
			}
		}
	})
}

// carriedAlready reports whether a capture has frames a mirror session
// carried (GRE over IPv4 on Ethernet).
func carriedAlready(frames []mutate.Frame) bool {
	return slices.ContainsFunc(frames, func(f mutate.Frame) bool {
		d := f.Data
		return len(d) > 23 && binary.BigEndian.Uint16(d[12:]) == 0x0800 && d[23] == 47
	})
}

// heavyPerCapture: TestHeavyDamage's damaged copies of each sample, made
// with heavySeed (not diffSeed: SMCSCOPE_MUTATE_SEED=28 to 37 still find
// up to 5 of the 96 copies with a connection failed, most of them one a
// damaged segment made whose CLC message is malformed, some a handshake
// whose every message is damaged past tying).
const (
	heavyPerCapture = 12
	heavySeed       = 2
)

// TestHeavyDamage damages every byte of eight samples with probability
// 0.02 (Wireshark's fuzz rate, as editcap -E 0.02: most frames hit, most
// handshakes in several places) and holds the tracker to what such a
// capture cannot show: no connection failed, and no smc.handshake.failed,
// where the whole capture has none (a handshake whose CLC and LLC copies
// are damaged went on: its link's traffic says so), smcdump and smctop
// agreeing on it all (checkVariant).
func TestHeavyDamage(t *testing.T) {
	seed := uint64(heavySeed)
	if os.Getenv("SMCSCOPE_MUTATE_SEED") != "" {
		seed = mutateSeed(t)
	}
	for _, name := range damagedSamples {
		rel := "samples/" + name + ".pcap"
		frames, lt, err := mutate.ReadFile(filepath.Join(testutil.Root(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		base := feed(t, rel, lt, frames)
		for k := uint64(1); k <= heavyPerCapture; k++ {
			vf := heavyDamaged(frames, seed, k)
			vname := fmt.Sprintf("%s damaged 0.02 (seed %d, variant %d)", rel, seed, k)
			v := checkVariant(t, vname, lt, vf)
			if s := noMore(base, v, expert.HandshakeFailed); s != "" {
				t.Errorf("%s: %s", vname, s)
			}
			noneFailed(t, vname, v)
		}
	}
}

// damagedSamples are the samples TestHeavyDamage and TestEditcapCopies
// damage: every kind of SMC-R run the lab records.
var damagedSamples = []string{"pingpong", "long", "multiconn", "multilink", "lossy", "silent-link", "teardown", "slow-reader"}

// noneFailed wants no connection of v failed: damage in the capture's
// copies is no handshake's failure.
func noneFailed(t *testing.T, vname string, v run) {
	t.Helper()
	for _, c := range v.snap.Conns {
		if c.Outcome == track.OutcomeFailed {
			t.Errorf("%s: connection %d failed: %s", vname, c.ID, c.Failure)
		}
	}
}

// fallbacks counts the connections of s that fell back to TCP.
func fallbacks(s track.Snapshot) int {
	n := 0
	for _, c := range s.Conns {
		if c.Outcome == track.OutcomeFallback {
			n++
		}
	}
	return n
}

// heavyDamaged is frames with every byte replaced with probability 0.02,
// copy k of seed's.
func heavyDamaged(frames []mutate.Frame, seed, k uint64) []mutate.Frame {
	rng := rand.New(rand.NewPCG(k, seed))
	vf := make([]mutate.Frame, len(frames))
	for i, f := range frames {
		d := slices.Clone(f.Data)
		for j := range d {
			if rng.Float64() < 0.02 {
				d[j] = byte(rng.Uint32())
			}
		}
		vf[i] = mutate.Frame{CI: f.CI, Data: d}
	}
	return vf
}

// TestHeavyDamageHandshakes: heavily damaged copies (heavyDamaged) whose
// handshakes the damage left told only by what the peers did next: a
// Confirm's trailer and flags (RST with its bytes), a SYN and SYN-ACK
// three fields apart, a first contact's Confirm token and Proposal GID,
// an Accept GID no device has, a damaged SYN nothing answered, an ACK's
// flags to a bare RST, a SYN's address the Proposal's checksum settles,
// a Confirm nearer one connection than another's stream, a reusing
// connection's Accept token whose first CDCs are damaged, a FIN past a
// gap before a copy queued far ahead, a malformed Proposal its peer
// answered (once after a reset its flags made), an Accept's or Confirm's
// first PSN a byte off the link's, a reusing connection's malformed
// Confirm whose Accept is unreadable, a SYN-ACK whose ACK bit was lost, a
// SYN two fields off the Proposal's 4-tuple beside an Accept whose type
// byte no message has, a first contact's malformed Confirm whose Accept
// names no end of the link or is a damaged copy itself (and one whose
// Accept does, its own copy naming none), an Accept's or Confirm's GID
// (and PSN) damaged where the link's first whole packets come to the
// other end's QP, a reset copy before the link's first CDCs that a FIN
// after them proves damage, a reusing connection's malformed Confirm
// whose Accept's token the client's CDCs carry, ACKs whose damaged flags
// byte reads RST with SYN or PSH (no Linux reset carries either) after a
// malformed Proposal, nothing of the connection verifying before. No
// handshake fails where the whole capture's none does.
func TestHeavyDamageHandshakes(t *testing.T) {
	for _, c := range []struct {
		name    string
		seed, k uint64
	}{
		{"multilink", 303, 3}, {"multilink", 56, 11}, {"pingpong", 403, 4}, {"pingpong", 412, 11},
		{"long", 403, 5}, {"long", 408, 6}, {"multilink", 422, 3}, {"multiconn", 402, 2}, {"multiconn", 423, 9},
		{"multiconn", 403, 5}, {"silent-link", 403, 8}, {"long", 410, 2}, {"long", 426, 2}, {"multilink", 431, 5},
		{"multilink", 403, 4}, {"multiconn", 410, 2}, {"multiconn", 509, 11}, {"multiconn", 515, 2},
		{"multiconn", 501, 6}, {"lossy", 436, 10}, {"multilink", 531, 11}, {"pingpong", 543, 1}, {"multiconn", 529, 12},
		{"lossy", 542, 4}, {"pingpong", 549, 11}, {"long", 549, 11}, {"slow-reader", 432, 6}, {"silent-link", 544, 11},
		{"slow-reader", 550, 12}, {"lossy", 505, 10}, {"slow-reader", 545, 11},
	} {
		rel := "samples/" + c.name + ".pcap"
		frames, lt, err := mutate.ReadFile(filepath.Join(testutil.Root(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		base := feed(t, rel, lt, frames)
		vname := fmt.Sprintf("%s damaged 0.02 (seed %d, variant %d)", rel, c.seed, c.k)
		v := checkVariant(t, vname, lt, heavyDamaged(frames, c.seed, c.k))
		if s := noMore(base, v, expert.HandshakeFailed); s != "" {
			t.Errorf("%s: %s", vname, s)
		}
		noneFailed(t, vname, v)
	}
}

// TestHeavyDamageEpisodes: two heavily damaged copies (heavyDamaged) in
// which a connection joined from CDCs had requests kept out of sequence
// replayed into it from before its first frame and after its last: its
// write-blocked episodes stay within its frames (checkDurations, through
// checkVariant).
func TestHeavyDamageEpisodes(t *testing.T) {
	for _, c := range []struct {
		name    string
		seed, k uint64
	}{{"lossy", 33, 4}, {"long", 26002, 2}} {
		rel := "samples/" + c.name + ".pcap"
		frames, lt, err := mutate.ReadFile(filepath.Join(testutil.Root(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		checkVariant(t, fmt.Sprintf("%s damaged 0.02 (seed %d, variant %d)", rel, c.seed, c.k), lt, heavyDamaged(frames, c.seed, c.k))
	}
}
