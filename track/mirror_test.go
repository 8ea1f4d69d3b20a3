package track

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestMirrorSequence: pingpong.pcap as a collector receives it from a
// mirror session, numbered as the session would number it, then changed
// as a collector or a tool leaves it. Only numbers the capture skipped
// for good are frames missing; numbering with no sequence says nothing.
func TestMirrorSequence(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	type frame struct {
		i    int // pingpong.pcap's frame index
		kind string
		seq  uint32
	}
	inOrder := func(kind string, from uint32) []frame {
		out := make([]frame, len(all))
		for i := range all {
			out[i] = frame{i, kind, from + uint32(i)}
		}
		return out
	}
	without := func(fs []frame, drop func(i int) bool) []frame {
		return slices.DeleteFunc(fs, func(f frame) bool { return drop(f.i) })
	}
	thinned := 0
	for i := range all {
		if i >= 100 && i%100 == 0 {
			thinned++
		}
	}
	half := len(all) / 2
	for _, c := range []struct {
		name          string
		frames        []frame
		missing, gaps int
		detail        string // in the finding's detail
	}{
		{name: "in order", frames: inOrder("erspan2", 7)},
		{name: "wraps", frames: inOrder("erspan3", 1<<32-20)},
		{name: "one lost", frames: without(inOrder("erspan2", 1000), func(i int) bool { return i == 23 }), missing: 1, gaps: 1,
			detail: "ERSPAN II session 5 from 192.168.1.1 to 192.168.1.2: 1 frame missing in 1 gap of its GRE sequence (number 1023, before frame 24), "},
		{name: "a burst lost", frames: without(inOrder("erspan3", 0), func(i int) bool { return i >= 40 && i < 77 }), missing: 37, gaps: 1,
			detail: "ERSPAN III session 6 from 192.168.1.1 to 192.168.1.2: 37 frames missing in 1 gap of its GRE sequence (40..76, before frame 41), "},
		{name: "thinned", frames: without(inOrder("erspan2", 0), func(i int) bool { return i >= 100 && i%100 == 0 }), missing: thinned, gaps: thinned},
		{name: "late", frames: func() []frame {
			fs := inOrder("erspan2", 0)
			fs[30], fs[31] = fs[31], fs[30]
			fs[50], fs[53] = fs[53], fs[50]
			return fs
		}()},
		{name: "early", frames: func() []frame {
			fs := inOrder("erspan2", 0)
			f := fs[50]
			fs = slices.Delete(fs, 50, 51)
			return slices.Insert(fs, 47, f)
		}()},
		{name: "numbers damaged", frames: func() []frame {
			fs := inOrder("erspan2", 0)
			for _, i := range []int{40, 80, 81, 200} {
				fs[i].seq = 0xDEAD0000 + uint32(i)
			}
			fs[300].seq ^= 1 << 20
			return fs
		}()}, // two damaged in a row read as the session's start again, and back
		{name: "numbers damaged near and behind", frames: func() []frame {
			fs := inOrder("erspan2", 0)
			fs[100].seq += 3 // near ahead: that number comes again
			fs[200].seq -= 50
			fs[300].seq-- // the run's newest number, on another frame
			fs[400].seq ^= 1
			fs[401].seq ^= 1
			return fs
		}()},
		{name: "a copy beside a frame lost", frames: func() []frame {
			fs := inOrder("erspan2", 0)
			fs = slices.Insert(fs, 501, fs[500])
			return slices.Delete(fs, 502, 503)
		}(), missing: 1, gaps: 1},
		{name: "copied", frames: func() []frame {
			fs := inOrder("erspan2", 0)
			return slices.Insert(fs, 31, fs[30], fs[29])
		}()},
		{name: "session restarted", frames: func() []frame {
			fs := inOrder("erspan2", 10_000_000)
			for i := half; i < len(fs); i++ {
				fs[i].seq = uint32(i - half)
			}
			return fs
		}()},
		{name: "jump no session makes", frames: func() []frame {
			fs := inOrder("erspan2", 0)
			for i := half; i < len(fs); i++ {
				fs[i].seq += 1 << 28
			}
			return fs
		}()},
		{name: "two sessions", frames: func() []frame {
			fs := make([]frame, len(all))
			for i := range all {
				fs[i] = frame{i, []string{"erspan2", "erspan3"}[i%2], uint32(i / 2)}
			}
			return fs
		}()},
		{name: "two sessions one lost", frames: func() []frame {
			fs := make([]frame, 0, len(all))
			for i := range all {
				if i != 61 {
					fs = append(fs, frame{i, []string{"erspan2", "erspan3"}[i%2], uint32(i / 2)})
				}
			}
			return fs
		}(), missing: 1, gaps: 1, detail: "ERSPAN III session 6 from 192.168.1.1 to 192.168.1.2: 1 frame missing"},
		{name: "no sequence: ERSPAN I", frames: without(inOrder("erspan1", 0), func(i int) bool { return i%10 == 3 })},
		{name: "no sequence: VXLAN", frames: without(inOrder("vxlan", 0), func(i int) bool { return i%10 == 3 })},
	} {
		t.Run(c.name, func(t *testing.T) {
			frames := make([]rawFrame, len(c.frames))
			for n, f := range c.frames {
				p := all[f.i]
				p.Data = mutate.Carry(f.kind, p.Data, f.seq, false)
				p.CI.CaptureLength, p.CI.Length = len(p.Data), len(p.Data)
				frames[n] = p
			}
			s, found := feedRaw(t, frames)
			if got := slices.Contains(found, expert.MirrorLost.String()); got != (c.missing > 0) {
				t.Errorf("smc.capture.mirror_lost %v, want %v (findings %v)", got, c.missing > 0, found)
			}
			var missing, gaps int
			for _, m := range s.Mirrors {
				missing += m.Missing
				gaps += m.Gaps
			}
			if missing != c.missing || gaps != c.gaps || s.Stats.MirrorLost != c.missing {
				t.Errorf("%d frames missing in %d gaps (stats %d), want %d in %d", missing, gaps, s.Stats.MirrorLost, c.missing, c.gaps)
			}
			if d := findingDetail(&s, expert.MirrorLost); !strings.Contains(d, c.detail) {
				t.Errorf("detail %q, want %q in it", d, c.detail)
			}
		})
	}
}

// TestMirrorSequenceFast: the frames the fast path follows step the
// session too: a gap between two of them is found, and Feed after
// FeedFast steps a frame once.
func TestMirrorSequenceFast(t *testing.T) {
	all, lt := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	var frames []rawFrame
	for i, p := range all {
		if i == 2000 { // the middle of the steady CDCs and WRITEs
			continue
		}
		p.Data = mutate.Carry("erspan2", p.Data, uint32(i), false)
		p.CI.CaptureLength, p.CI.Length = len(p.Data), len(p.Data)
		frames = append(frames, p)
	}
	tr := New(Options{Unshared: true})
	eachRaw(t, "fast", lt, frames, func(f *capture.Frame) {
		if !tr.FeedFast(f) {
			tr.Feed(f)
		}
	})
	tr.EndCapture(time.Time{})
	s := tr.Snapshot()
	if s.Stats.MirrorLost != 1 || len(s.Mirrors) != 1 || s.Mirrors[0].FirstFrame != 2001 {
		t.Errorf("mirrors %+v, want 1 frame missing before frame 2001", s.Mirrors)
	}
}

// TestCrossPathCopies: pingpong.pcap with every frame again 2 ms later
// as a mirror session delivers it to the same capture point (the lab's
// erspan scenario: the client's ERSPAN session to the server, whose NIC
// the capture is on). Copies that came another way are copies beyond
// captureDupWindow, and the transport's resends on one path stay resends.
// Every frame again 2 ms later on the same path is two captures merged 2
// ms apart: the SYN's copy, byte for byte while its connection runs (no
// resend is), tells it, and every frame then is a copy.
func TestCrossPathCopies(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	whole, _ := feedRaw(t, all)
	for _, c := range []struct {
		name   string
		kind   string // the copy's carrier, "" none
		copies bool   // the copies are followed as copies
		cut    int    // the mirror truncates its copies to this many bytes (ERSPAN's T bit), 0 not
		lateBy time.Duration
		// asTaken: each copy is written right after its frame whatever
		// its time (a capture writes frames as it takes them from its
		// queues), not in time order.
		asTaken bool
	}{
		{name: "ERSPAN copy 2 ms later", kind: "erspan2", copies: true, lateBy: 2 * time.Millisecond},
		{name: "ERSPAN copy 10 ms later", kind: "erspan3", copies: true, lateBy: 10 * time.Millisecond},
		{name: "ERSPAN copy 2 ms earlier", kind: "erspan2", copies: true, lateBy: -2 * time.Millisecond},
		{name: "VXLAN copy 2 ms later", kind: "vxlan", copies: true, lateBy: 2 * time.Millisecond},
		{name: "ERSPAN copy cut by the T bit 2 ms later", kind: "erspan2", cut: 80, copies: true, lateBy: 2 * time.Millisecond},
		{name: "ERSPAN copy cut by the T bit 1 ms earlier", kind: "erspan3", cut: 64, copies: true, lateBy: -time.Millisecond},
		{name: "ERSPAN copy cut inside the CLC messages 1 ms earlier", kind: "erspan2", cut: 80, copies: true, lateBy: -time.Millisecond},
		{name: "ERSPAN copy cut inside the CLC messages 3 ms later", kind: "erspan3", cut: 100, copies: true, lateBy: 3 * time.Millisecond},
		{name: "VXLAN copy a mirror cut with no flag 1 ms earlier", kind: "vxlan", cut: 64, copies: true, lateBy: -time.Millisecond},
		{name: "VXLAN copy a mirror cut with no flag 2 ms later", kind: "vxlan", cut: 100, copies: true, lateBy: 2 * time.Millisecond},
		{name: "bare copy 2 ms later", kind: "", copies: true, lateBy: 2 * time.Millisecond},
		{name: "bare copy a snap length of 80 cut 20 us later", kind: "", cut: 80, copies: true, lateBy: 20 * time.Microsecond},
		{name: "bare copy a snap length of 80 cut 20 us earlier", kind: "", cut: 80, copies: true, lateBy: -20 * time.Microsecond},
		{name: "ERSPAN copy written after its frame, stamped 300 us before it", kind: "erspan2", copies: true, lateBy: -300 * time.Microsecond, asTaken: true},
		{name: "bare copy written after its frame, stamped 20 us before it", kind: "", copies: true, lateBy: -20 * time.Microsecond, asTaken: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var frames []rawFrame
			for i, p := range all {
				cp := p
				if c.kind != "" {
					d := p.Data
					if c.cut > 0 && len(d) > c.cut {
						d = d[:c.cut]
					}
					cp.Data = mutate.Carry(c.kind, d, uint32(i), len(d) < len(p.Data))
					cp.CI.CaptureLength, cp.CI.Length = len(cp.Data), len(cp.Data)
				} else if c.cut > 0 && len(p.Data) > c.cut {
					// Another interface's record, with its snap length.
					cp.Data = p.Data[:c.cut]
					cp.CI.CaptureLength = c.cut
				}
				cp.CI.Timestamp = p.CI.Timestamp.Add(c.lateBy)
				frames = append(frames, p, cp)
			}
			if !c.asTaken {
				slices.SortStableFunc(frames, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
			}
			s, found := feedRaw(t, frames)
			tracked := whole.Stats.TCP + whole.Stats.RoCE
			if c.cut > 0 {
				// Every RoCE packet's copy is one, cut or whole, and none is
				// taken for a retransmission; so is every TCP segment's whose
				// TCP header the cut left whole. Cut copies
				// that come first wait for their packets, which are
				// followed: the same links, connection and data, no
				// finding but the copies and the cut.
				dups := whole.Stats.RoCE
				for _, p := range all {
					if d := p.Data; len(d) > 34 && d[12] == 0x08 && d[13] == 0 && d[23] == 6 {
						ihl := int(d[14]&0xf) * 4
						if thl := int(d[14+ihl+12]>>4) * 4; 14+ihl+thl <= c.cut {
							dups++
						}
					}
				}
				if s.Stats.CaptureDups != dups || s.Stats.Retrans != whole.Stats.Retrans {
					t.Errorf("%d copies followed once, want %d; %d retransmissions (without copies %d)",
						s.Stats.CaptureDups, dups, s.Stats.Retrans, whole.Stats.Retrans)
				}
				if got, want := flowTotalsOf(s), flowTotalsOf(whole); got != want {
					t.Errorf("CDCs and bytes %v, the capture without copies %v", got, want)
				}
				if len(s.Links) != len(whole.Links) || len(s.Conns) != 1 || s.Conns[0].Outcome != whole.Conns[0].Outcome {
					t.Fatalf("%d links, %d connections, want %d and one %v", len(s.Links), len(s.Conns), len(whole.Links), whole.Conns[0].Outcome)
				}
				if c.lateBy > 0 && s.Conns[0].clcUncaptured {
					// A cut copy of a CLC segment the capture showed whole
					// misses nothing of the handshake.
					t.Errorf("handshake taken for cut: %s", pendingDetail(&s.Conns[0]))
				}
				wf, _ := feedRaw(t, all)
				want := map[string]bool{expert.CaptureDuplicate.String(): true, expert.SnapCut.String(): true}
				for _, f := range wf.Findings() {
					want[f.ID.String()] = true
				}
				for _, f := range found {
					if !want[f] {
						t.Errorf("finding %s, not the capture's without copies", f)
					}
				}
				return
			}
			if got := s.Stats.CaptureDups == tracked; got != c.copies {
				t.Errorf("%d copies followed once of %d tracked frames, want all: %v", s.Stats.CaptureDups, tracked, c.copies)
			}
			if want := map[bool]int{true: tracked}[c.kind != ""]; s.Stats.CaptureDupsOtherPath != want {
				t.Errorf("%d copies by another path, want %d", s.Stats.CaptureDupsOtherPath, want)
			}
			if !c.copies {
				return
			}
			if got, want := flowTotalsOf(s), flowTotalsOf(whole); got != want {
				t.Errorf("CDCs and bytes %v, the capture without copies %v", got, want)
			}
			if s.Stats.Retrans != whole.Stats.Retrans || slices.Contains(found, expert.MirrorLost.String()) {
				t.Errorf("retransmissions %d (without copies %d), findings %v", s.Stats.Retrans, whole.Stats.Retrans, found)
			}
		})
	}
}

// TestERSPANReference: testdata/reference/erspan.pcap, Linux's own ERSPAN
// type II session (the lab's erspan scenario) mirroring the client's
// frames to the server, whose NIC the capture is on: every frame of the
// connection is there as it went and inside GRE. The session numbered
// every copy it sent (ers0's tx_packets in the client's log) and the
// capture holds each number once, in order; the whole capture is the
// hosts' frames with each copy followed once, and the copies alone (what
// a collector behind the session receives) are the same connection.
func TestERSPANReference(t *testing.T) {
	log, err := os.ReadFile("../testdata/reference/erspan.client.log")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`ERSPAN tx_packets=(\d+) tx_dropped=0`).FindSubmatch(log)
	if m == nil {
		t.Fatal("erspan.client.log: no ERSPAN tx_packets line")
	}
	sent, _ := strconv.Atoi(string(m[1]))
	all, lt := testutil.ReadFrames(t, "../testdata/reference/erspan.pcap")
	var hosts, copies, mirrored []rawFrame
	var seqs []uint32
	eachRaw(t, "erspan", lt, all, func(f *capture.Frame) {
		p := all[f.Number-1]
		switch {
		case f.Tunnel != nil:
			copies = append(copies, p)
			if f.Tunnel.Kind != capture.TunnelERSPAN2 || f.Tunnel.ID != 7 || !f.Tunnel.HasSeq {
				t.Errorf("frame %d: tunnel %+v, want ERSPAN II session 7 with a sequence number", f.Number, *f.Tunnel)
			}
			seqs = append(seqs, f.Tunnel.Seq)
		case len(p.Data) > 23 && p.Data[23] == 47:
			t.Errorf("frame %d: GRE not decoded as a tunnel", f.Number)
		case len(p.Data) > 23 && p.Data[23] == 1:
			// The server's ICMP errors about the GRE frames.
		default:
			hosts = append(hosts, p)
		}
	})
	for i, s := range seqs {
		if s != uint32(i) {
			t.Fatalf("copy %d numbered %d: want 0..%d in order", i, s, sent-1)
		}
	}
	if len(seqs) != sent {
		t.Errorf("%d copies, ers0 sent %d", len(seqs), sent)
	}
	first, last := copies[0].CI.Timestamp, copies[len(copies)-1].CI.Timestamp
	for _, p := range hosts {
		if !p.CI.Timestamp.Before(first.Add(-time.Millisecond)) && !p.CI.Timestamp.After(last.Add(time.Millisecond)) {
			mirrored = append(mirrored, p)
		}
	}
	whole, found := feedRaw(t, all)
	h, _ := feedRaw(t, hosts)
	c, cfound := feedRaw(t, copies)
	hm, _ := feedRaw(t, mirrored)
	if whole.Stats.CaptureDups != len(copies) || whole.Stats.CaptureDupsOtherPath != len(copies) || whole.Stats.Retrans != h.Stats.Retrans || flowTotalsOf(whole) != flowTotalsOf(h) ||
		len(whole.Conns) != len(h.Conns) || len(whole.Links) != len(h.Links) {
		t.Errorf("whole capture: %d copies of %d, %d retransmissions, %d connections, %d links, CDCs and bytes %v; the hosts' frames: %d, %d, %d, %v",
			whole.Stats.CaptureDups, len(copies), whole.Stats.Retrans, len(whole.Conns), len(whole.Links), flowTotalsOf(whole),
			h.Stats.Retrans, len(h.Conns), len(h.Links), flowTotalsOf(h))
	}
	if slices.Contains(found, expert.MirrorLost.String()) || slices.Contains(cfound, expert.MirrorLost.String()) {
		t.Errorf("findings %v, the copies alone %v: no frame is missing", found, cfound)
	}
	if flowTotalsOf(c) != flowTotalsOf(hm) || len(c.Conns) != 1 || len(hm.Conns) != 1 || c.Conns[0].Outcome != hm.Conns[0].Outcome {
		t.Errorf("the copies alone: %d connections, CDCs and bytes %v; the hosts' frames while mirrored: %d, %v",
			len(c.Conns), flowTotalsOf(c), len(hm.Conns), flowTotalsOf(hm))
	}
}

// TestMirrorOuterDamage: pingpong.pcap carried by an ERSPAN II session,
// then one byte of the outer headers (Ethernet, IPv4, GRE, ERSPAN: the
// first 50 bytes of what the collector receives) damaged in three of its
// frames, two of them in a row, each differently. The capture holds
// those frames, damaged: none is missing, whatever the damage hid (the
// frame's session, its number, that it is GRE at all); where the frame is
// still its session's, nothing is said either.
func TestMirrorOuterDamage(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	damaged := map[int]byte{500: 0xff, 1500: 0x0f, 1501: 0xf0}
	// The bytes whose damage leaves a frame no longer its session's
	// (the ethertype, IPv4 protocol, addresses, GRE flags and protocol,
	// ERSPAN session ID), and in how many of the three frames (flags and
	// the session ID's high bits: not every damage reaches one). The
	// IPv4 version and header length byte's damage, and its flags and
	// fragment offset's, its header's checksum shows (0x45, or a whole
	// packet's, verifies): the frame is read as sent, its session's.
	strays := map[int]int{12: 3, 13: 3, 23: 3, 34: 2, 36: 3, 37: 3, 44: 2, 45: 3}
	for off := 26; off < 34; off++ {
		strays[off] = 3
	}
	for _, kind := range []string{"erspan2", "erspan3"} {
		for off := range 50 {
			if off >= 38 && off < 42 { // the sequence number: TestMirrorSequence
				continue
			}
			want := strays[off]
			if kind == "erspan3" && off == 42 {
				want = 2 // type III's version damaged reads as type II: another session
			}
			outerDamage(t, kind, off, all, damaged, want)
		}
	}
}

// outerDamage feeds all carried by a mirror session of kind, byte off of
// the frames damaged damaged at that byte, and wants none missing and
// strays frames held damaged.
func outerDamage(t *testing.T, kind string, off int, all []rawFrame, damaged map[int]byte, strays int) {
	t.Helper()
	{
		frames := make([]rawFrame, len(all))
		for i, p := range all {
			p.Data = mutate.Carry(kind, p.Data, uint32(i), false)
			if x, ok := damaged[i]; ok {
				p.Data[off] ^= x
			}
			p.CI.CaptureLength, p.CI.Length = len(p.Data), len(p.Data)
			frames[i] = p
		}
		s, found := feedRaw(t, frames)
		if s.Stats.MirrorLost != 0 || slices.Contains(found, expert.MirrorLost.String()) {
			t.Errorf("%s, byte %d damaged: %d frames missing (%+v), want none", kind, off, s.Stats.MirrorLost, s.Mirrors)
		}
		// Damage the frame's session still reads (a MAC address, the
		// TTL, the checksum, ERSPAN's index) leaves it its session's.
		if s.Stats.MirrorDamaged != strays {
			t.Errorf("%s, byte %d damaged: %d frames held damaged, want %d", kind, off, s.Stats.MirrorDamaged, strays)
		}
	}
}

// TestMirrorDamagedFrames: which frames that carry no GRE sequence number
// mirrorDamaged takes for a mirror session's damaged frame, and whose.
func TestMirrorDamagedFrames(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	carried := func(change func(d []byte) []byte) []byte {
		d := mutate.Carry("erspan2", all[30].Data, 9, false)
		return change(d)
	}
	ipSum := func(d []byte) []byte { // refill the checksum of the IPv4 header at 14
		_, sum := decode.IPv4HeaderSum(d[14:34])
		d[24], d[25] = byte(sum>>8), byte(sum)
		return d
	}
	switchAddrs := mirrorKey{src: netip.MustParseAddr("192.168.1.1"), dst: netip.MustParseAddr("192.168.1.2")}
	v6 := make([]byte, 14+40+16)
	v6[12], v6[13], v6[14], v6[20] = 0x86, 0xdd, 0x60, 47
	v6[14+8+15], v6[14+24+15] = 1, 2
	for _, c := range []struct {
		name    string
		lt      layers.LinkType
		data    []byte
		tunnel  *capture.Tunnel
		want    bool
		anyAddr bool
		key     mirrorKey
	}{
		{name: "GRE version damaged", data: carried(func(d []byte) []byte { d[35] = 7; return d }), want: true, key: switchAddrs},
		{name: "GRE protocol damaged", data: carried(func(d []byte) []byte { d[36] = 0x77; return d }), want: true, key: switchAddrs},
		{name: "IPv4 protocol damaged", data: carried(func(d []byte) []byte { d[23] = 6; return d }), want: true, anyAddr: true},
		{name: "IPv4 length damaged", data: carried(func(d []byte) []byte { d[16] ^= 0x40; return d }), want: true, anyAddr: true},
		{name: "ethertype damaged", data: carried(func(d []byte) []byte { d[12] = 0x18; return d }), want: true, key: switchAddrs},
		{name: "behind a VLAN tag", data: carried(func(d []byte) []byte {
			d = slices.Insert(d, 12, 0x81, 0, 0, 5)
			d[39] = 7
			return d
		}), want: true, key: switchAddrs},
		{name: "SLL2", lt: layers.LinkTypeLinuxSLL2, data: carried(func(d []byte) []byte {
			sll := make([]byte, 20)
			sll[0], sll[1] = 0x08, 0
			d[35] = 7
			return append(sll, d[14:]...)
		}), want: true, key: switchAddrs},
		{name: "IPv6", data: v6, want: true, key: mirrorKey{src: netip.MustParseAddr("::1"), dst: netip.MustParseAddr("::2")}},
		{name: "a later fragment", data: carried(func(d []byte) []byte { d[21] = 0x40; d[35] = 7; return ipSum(d) })},
		{name: "a frame as sent", data: all[30].Data},
		{name: "ERSPAN I", tunnel: &capture.Tunnel{Kind: capture.TunnelERSPAN1, Src: switchAddrs.src, Dst: switchAddrs.dst}, want: true, key: switchAddrs},
		{name: "VXLAN", tunnel: &capture.Tunnel{Kind: capture.TunnelVXLAN, Src: switchAddrs.src, Dst: switchAddrs.dst}},
	} {
		lt := c.lt
		if lt == 0 {
			lt = layers.LinkTypeEthernet
		}
		x, ok := mirrorDamaged(&capture.Frame{Number: 3, Data: c.data, LinkType: lt, Tunnel: c.tunnel})
		if ok != c.want || ok && (x.anyAddr != c.anyAddr || x.key != c.key || x.number != 3) {
			t.Errorf("%s: %v %+v, want %v (any address %v, %+v)", c.name, ok, x, c.want, c.anyAddr, c.key)
		}
	}
}

// TestCutCopiesAheadHandshake: copies a mirror cut inside the CLC
// messages and brought to the capture point before each frame: the
// handshake reads each message from its segment whole (the reader
// decodes it there, feedCLCOfCut follows it), so a Decline is the
// fallback's reason and a handshake done is followed whole, as in the
// capture without copies.
func TestCutCopiesAheadHandshake(t *testing.T) {
	for _, name := range []string{"pingpong", "decline-nordma", "no-ueid"} {
		all, _ := testutil.ReadFrames(t, "../testdata/reference/"+name+".pcap")
		whole, wantFound := feedRaw(t, all)
		for _, cut := range []int{80, 100, 128} {
			var frames []rawFrame
			for i, p := range all {
				cp := p
				d := p.Data[:min(len(p.Data), cut)]
				cp.Data = mutate.Carry("erspan3", d, uint32(i), len(d) < len(p.Data))
				cp.CI.CaptureLength, cp.CI.Length = len(cp.Data), len(cp.Data)
				cp.CI.Timestamp = p.CI.Timestamp.Add(-500 * time.Microsecond)
				frames = append(frames, cp, p)
			}
			s, found := feedRaw(t, frames)
			if len(s.Conns) != len(whole.Conns) {
				t.Fatalf("%s cut to %d: %d connections, want %d", name, cut, len(s.Conns), len(whole.Conns))
			}
			for i := range s.Conns {
				c, w := &s.Conns[i], &whole.Conns[i]
				if c.Outcome != w.Outcome || c.Fallback.Cause != w.Fallback.Cause || c.Fallback.Code != w.Fallback.Code ||
					!slices.Equal(c.CLCTypes, w.CLCTypes) || c.clcUncaptured || c.Failure != w.Failure {
					t.Errorf("%s cut to %d: connection %d %v %+v CLC %v (uncaptured %v) %q, want %v %+v CLC %v %q", name, cut, c.ID,
						c.Outcome, c.Fallback, c.CLCTypes, c.clcUncaptured, c.Failure, w.Outcome, w.Fallback, w.CLCTypes, w.Failure)
				}
			}
			if got, want := flowTotalsOf(s), flowTotalsOf(whole); got != want || len(s.Links) != len(whole.Links) {
				t.Errorf("%s cut to %d: CDCs and bytes %v, %d links; without copies %v, %d", name, cut, got, len(s.Links), want, len(whole.Links))
			}
			known := map[string]bool{expert.CaptureDuplicate.String(): true, expert.SnapCut.String(): true}
			for _, f := range wantFound {
				known[f] = true
			}
			for _, f := range found {
				if !known[f] {
					t.Errorf("%s cut to %d: finding %s, not the capture's without copies", name, cut, f)
				}
			}
		}
	}
}

// TestMirrorNested: a mirror session whose copies carry a tunnel of
// their own (a port whose traffic is VXLAN, or ERSPAN copies mirrored
// again) is numbered by the outermost session: the frames it misses are
// counted, and a frame carrying an inner session's numbers is no gap in
// the outer one.
func TestMirrorNested(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	drop := map[int]bool{100: true, 700: true, 701: true}
	for _, inner := range []string{"vxlan", "erspan3", "gre"} {
		var frames []rawFrame
		for i, p := range all {
			cp := p
			cp.Data = mutate.Carry("erspan2", mutate.Carry(inner, p.Data, uint32(3*i+5), false), uint32(i), false)
			cp.CI.CaptureLength, cp.CI.Length = len(cp.Data), len(cp.Data)
			cp.CI.Timestamp = p.CI.Timestamp.Add(time.Millisecond)
			frames = append(frames, p)
			if !drop[i] {
				frames = append(frames, cp)
			}
		}
		slices.SortStableFunc(frames, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
		s, _ := feedRaw(t, frames)
		if s.Stats.MirrorLost != len(drop) || len(s.Mirrors) != 1 || s.Mirrors[0].Kind != capture.TunnelERSPAN2 {
			t.Errorf("ERSPAN II carrying %s: %d frames missing in %+v, want %d of the ERSPAN II session", inner, s.Stats.MirrorLost, s.Mirrors, len(drop))
		}
	}
	// An overlay's frames and the mirror's copies of them, 5 ms later:
	// the copies came by another way (the session around the overlay),
	// so they are copies, not retransmissions.
	whole, _ := feedRaw(t, all)
	var frames []rawFrame
	for i, p := range all {
		p.Data = mutate.Carry("vxlan", p.Data, 0, false)
		p.CI.CaptureLength, p.CI.Length = len(p.Data), len(p.Data)
		cp := p
		cp.Data = mutate.Carry("erspan2", p.Data, uint32(i), false)
		cp.CI.CaptureLength, cp.CI.Length = len(cp.Data), len(cp.Data)
		cp.CI.Timestamp = p.CI.Timestamp.Add(5 * time.Millisecond)
		frames = append(frames, p, cp)
	}
	slices.SortStableFunc(frames, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
	s, _ := feedRaw(t, frames)
	if tracked := whole.Stats.TCP + whole.Stats.RoCE; s.Stats.Retrans != whole.Stats.Retrans || s.Stats.CaptureDupsOtherPath != tracked {
		t.Errorf("VXLAN frames mirrored by ERSPAN: %d retransmissions (without copies %d), %d copies by another path of %d",
			s.Stats.Retrans, whole.Stats.Retrans, s.Stats.CaptureDupsOtherPath, tracked)
	}
}

// TestMirrorCutCollector: a collector's capture of a VXLAN mirror that
// cuts every copy to 100 bytes, without a flag to say so: the copies are
// cut frames (their ICRC not in the capture), not packets of a bad length
// the receiver would drop; the findings are the capture's and the cut's.
func TestMirrorCutCollector(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	_, wantFound := feedRaw(t, all)
	var frames []rawFrame
	for i, p := range all {
		p.Data = mutate.Carry("vxlan", p.Data[:min(len(p.Data), 100)], uint32(i), false)
		p.CI.CaptureLength, p.CI.Length = len(p.Data), len(p.Data)
		frames = append(frames, p)
	}
	s, found := feedRaw(t, frames)
	known := map[string]bool{expert.SnapCut.String(): true}
	for _, f := range wantFound {
		known[f] = true
	}
	for _, f := range found {
		if !known[f] {
			t.Errorf("finding %s, not the capture's without the mirror", f)
		}
	}
	if len(s.Conns) != 1 || s.Conns[0].Outcome != OutcomeSMCR {
		t.Errorf("%d connections (%+v), want one SMC-R", len(s.Conns), s.Conns)
	}
}

// TestCopiesAheadRandom: captures whose mirror copies (cut to several
// lengths, ERSPAN or VXLAN) come a lead of 0.2 to 4 ms ahead of their
// packets, each copy's time a little off but in order: the connections'
// data, their streams' bytes and the retransmissions are those of the
// capture without copies; with a twentieth of the packets and of the
// copies dropped as well, the tracker's counts stay consistent and every
// frame held is followed by the end.
func TestCopiesAheadRandom(t *testing.T) {
	for _, name := range []string{"pingpong", "decline-nordma"} {
		all, lt := testutil.ReadFrames(t, "../testdata/reference/"+name+".pcap")
		run := func(frames []rawFrame) (Snapshot, *streamRec, int) {
			rec := newStreamRec()
			tr := New(Options{Unshared: true, Stream: rec})
			fed := 0
			eachRaw(t, name, lt, frames, func(f *capture.Frame) {
				fed++
				if !tr.FeedFast(f) {
					tr.Feed(f)
				}
			})
			tr.EndCapture(time.Time{})
			return tr.Snapshot(), rec, fed
		}
		whole, wholeRec, _ := run(all)
		for seed := range 30 {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			cut := []int{64, 80, 100, 128, 0}[seed%5]
			drops := seed%2 == 0
			lead := time.Duration(200+rng.IntN(3800)) * time.Microsecond
			var frames []rawFrame
			var last time.Time
			for i, p := range all {
				cp := p
				d := p.Data
				if cut > 0 {
					d = d[:min(len(d), cut)]
				}
				cp.Data = mutate.Carry([]string{"erspan2", "erspan3", "vxlan"}[seed%3], d, uint32(i), len(d) < len(p.Data))
				cp.CI.CaptureLength, cp.CI.Length = len(cp.Data), len(cp.Data)
				ts := p.CI.Timestamp.Add(-lead + time.Duration(rng.IntN(300))*time.Microsecond)
				if ts.Before(last) {
					ts = last
				}
				last, cp.CI.Timestamp = ts, ts
				if !drops || rng.IntN(20) != 0 {
					frames = append(frames, p)
				}
				if !drops || rng.IntN(20) != 0 {
					frames = append(frames, cp)
				}
			}
			slices.SortStableFunc(frames, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
			s, rec, fed := run(frames)
			checkState(t, &s, fed)
			if drops {
				continue
			}
			if s.Stats.Retrans != whole.Stats.Retrans || flowTotalsOf(s) != flowTotalsOf(whole) {
				t.Errorf("%s, copies cut to %d, %v ahead: %d retransmissions, CDCs and bytes %v; without copies %d, %v",
					name, cut, lead, s.Stats.Retrans, flowTotalsOf(s), whole.Stats.Retrans, flowTotalsOf(whole))
			}
			for k, w := range wholeRec.streams {
				if g := rec.streams[k]; g == nil || g.bad != "" || !bytes.Equal(g.data, w.data) {
					t.Errorf("%s, copies cut to %d, %v ahead: stream %v differs from the capture's without copies", name, cut, lead, k)
				}
			}
		}
	}
}

// TestSettleHeld: a live capture that goes quiet while copies wait for
// their packets shows them once Settle says their time is up, and not
// before.
func TestSettleHeld(t *testing.T) {
	all, lt := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	var frames []rawFrame
	for i, p := range all {
		frames = append(frames, cutCopy(p, i, -time.Millisecond), p)
	}
	// The capture stops after the copy of a packet, well into the link's
	// traffic: that copy waits.
	frames = frames[:len(all)/2*2+1]
	tr := New(Options{})
	fed := 0
	var last time.Time
	eachRaw(t, "live", lt, frames, func(f *capture.Frame) {
		tr.Feed(f)
		fed++
		last = f.CI.Timestamp
	})
	if s := tr.Snapshot(); s.Stats.Frames >= fed {
		t.Fatalf("%d frames followed of %d fed: none held", s.Stats.Frames, fed)
	}
	tr.Settle(last.Add(time.Millisecond))
	if s := tr.Snapshot(); s.Stats.Frames >= fed {
		t.Errorf("%d frames followed of %d fed 1 ms after the last: the held copy's time is not up", s.Stats.Frames, fed)
	}
	tr.Settle(last.Add(time.Second))
	if s := tr.Snapshot(); s.Stats.Frames != fed {
		t.Errorf("%d frames followed of %d fed a second after the last", s.Stats.Frames, fed)
	}
}

// TestHeldOnlyCopies: once a path is learned, only its frames wait; the
// frames as they went are followed as they come, their copies dropped or
// not.
func TestHeldOnlyCopies(t *testing.T) {
	all, lt := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	var frames []rawFrame
	for i, p := range all {
		if i < len(all)/2 {
			frames = append(frames, cutCopy(p, i, -time.Millisecond))
		}
		frames = append(frames, p)
	}
	slices.SortStableFunc(frames, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
	tr := New(Options{Unshared: true})
	eachRaw(t, "half", lt, frames, func(f *capture.Frame) {
		tr.Feed(f)
		if f.Tunnel == nil && tr.cur.frame != f.Number && tr.fastCur.frame != f.Number {
			t.Fatalf("frame %d, as it went, not followed when it came", f.Number)
		}
	})
}

// TestHeldMirrorGap: a gap in the numbers of a session whose copies wait
// for their packets is the finding it is where none waits.
func TestHeldMirrorGap(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	for _, lead := range []time.Duration{-time.Millisecond, time.Millisecond} {
		var frames []rawFrame
		for i, p := range all {
			frames = append(frames, p)
			if i != 500 && i != 501 {
				frames = append(frames, cutCopy(p, i, lead))
			}
		}
		slices.SortStableFunc(frames, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
		s, found := feedRaw(t, frames)
		if s.Stats.MirrorLost != 2 || !slices.Contains(found, expert.MirrorLost.String()) {
			t.Errorf("copies %v from their packets: %d frames missing, findings %v; want 2 and %s", lead, s.Stats.MirrorLost, found, expert.MirrorLost)
		}
	}
}

// cutCopy is the copy of p, frame i, that an ERSPAN II session cutting
// its copies to 80 bytes (the T bit set) brings lead from p's time.
// TestSnapLenOnMirrorCapture: erspan.pcap (each packet and its ERSPAN
// copy, the copy first for what one host sends) taken with a snap length
// that keeps the packet's LLC and CDC messages but not the copy's (128,
// as editcap -s 128 makes it). The copy cut comes first for half the
// requests: the message is the packet's, whole after it, so the links
// come up, the CDCs and bytes are those of the whole capture, and no
// finding is raised that the whole capture does not raise but the cut
// and the copies.
func TestSnapLenOnMirrorCapture(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../testdata/reference/erspan.pcap")
	whole, wantFound := feedRaw(t, all)
	for _, snap := range []int{110, 128, 140} {
		frames := withSnapLen(all, snap)
		s, found := feedRaw(t, frames)
		if got, want := flowTotalsOf(s), flowTotalsOf(whole); got[0] != want[0] {
			t.Errorf("snap length %d: CDCs %d, the whole capture %d", snap, got[0], want[0])
		}
		if len(s.Links) != len(whole.Links) {
			t.Fatalf("snap length %d: %d links, want %d", snap, len(s.Links), len(whole.Links))
		}
		for i := range s.Links {
			if l, w := &s.Links[i], &whole.Links[i]; l.State != w.State || l.wasUp != w.wasUp {
				t.Errorf("snap length %d: link %d %v (was up %v), want %v (%v)", snap, i, l.State, l.wasUp, w.State, w.wasUp)
			}
		}
		known := map[string]bool{expert.CaptureDuplicate.String(): true, expert.SnapCut.String(): true}
		for _, f := range wantFound {
			known[f] = true
		}
		for _, f := range found {
			if !known[f] {
				t.Errorf("snap length %d: finding %s, not the whole capture's", snap, f)
			}
		}
	}
}

func cutCopy(p rawFrame, i int, lead time.Duration) rawFrame {
	cp := p
	cp.Data = mutate.Carry("erspan2", p.Data[:min(len(p.Data), 80)], uint32(i), len(p.Data) > 80)
	cp.CI.CaptureLength, cp.CI.Length = len(cp.Data), len(cp.Data)
	cp.CI.Timestamp = p.CI.Timestamp.Add(lead)
	return cp
}

// TestHeldCopiesWithoutPackets: copies that come ahead of their packets
// while the capture lacks a run of the packets (and of the copies, a run
// overlapping it): a copy whose packet never comes is followed before its
// queue pair's next packet, not after it, so no CDC repeats nor any
// request is sent again.
func TestHeldCopiesWithoutPackets(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	whole, _ := feedRaw(t, all)
	var frames []rawFrame
	for i, p := range all {
		if i < 300 || i >= 320 {
			frames = append(frames, p)
		}
		if i < 310 || i >= 330 {
			frames = append(frames, cutCopy(p, i, -time.Millisecond))
		}
	}
	slices.SortStableFunc(frames, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
	s, found := feedRaw(t, frames)
	if s.Stats.Retrans != whole.Stats.Retrans || slices.Contains(found, expert.SeqDup.String()) {
		t.Errorf("%d retransmissions (without copies and losses %d), findings %v", s.Stats.Retrans, whole.Stats.Retrans, found)
	}
}

// TestReorderedByMirror: erspan.pcap without the packet whose ERSPAN copy
// then comes alone, behind the later packets of its queue pair that the
// capture holds as they went (frame 301, the server's WRITE of PSN
// 0xa9c8fb; its copy is frame 305). The responder took it in order: the
// capture's order, told as the mirror session's.
func TestReorderedByMirror(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../testdata/reference/erspan.pcap")
	frames := append(slices.Clone(all[:300]), all[301:]...)
	s, _ := feedRaw(t, frames)
	var reordered, carried int
	for i := range s.Links {
		for d := range 2 {
			reordered += s.Links[i].RC[d].Reordered
			carried += s.Links[i].RC[d].ReorderedCarried
		}
	}
	if reordered != 1 || carried != 1 {
		t.Errorf("%d requests reordered, %d of them carried; want 1 and 1", reordered, carried)
	}
	if d := findingDetail(&s, expert.CaptureReordered); !strings.Contains(d, "by a mirror session or overlay alone") {
		t.Errorf("roce.capture.reordered: %q does not name the mirror session", d)
	}
}
