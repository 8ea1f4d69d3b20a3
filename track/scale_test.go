package track

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/smcscope/smcscope/decode"
)

// connGen feeds a tracker many short connections made from the reference
// captures, as bench/mkbig -distinct builds a large capture: each
// connection gets a 4-tuple of its own and comes after the previous one in
// time, and the tracker sees only the inputs (no decoding), so what is
// measured is the tracker.
type connGen struct {
	tr    *Tracker
	in    input     // the frame being fed (a local would escape: one allocation per frame)
	at    time.Time // where the next connection starts
	frame int
	conns int // connections fed

	fallback, decline []input // one connection each
	// SMC-R connections over one link group that is never deleted: setup
	// is pingpong's first connection without the group's teardown; each
	// further one is a trimmed copy that reuses the group (see smcrConn).
	setup, smcr []input
	psn         map[addr]uint32 // next request PSN per sending address
	perCopy     map[addr]uint32 // request packets per sending address in one copy of smcr
}

func newConnGen(t testing.TB, tr *Tracker) *connGen {
	g := &connGen{tr: tr,
		fallback: replay(t, refDir+"fallback-nosmc.pcap"),
		decline:  replay(t, refDir+"decline-nordma.pcap"),
	}
	g.at = g.fallback[0].ts()
	pp := replay(t, refDir+"pingpong.pcap")
	end := len(pp)
	for i, in := range pp {
		if isTeardown(&in) {
			end = i
			break
		}
	}
	g.setup = pp[:end]
	// The template keeps the TCP connection whole (its CLC Accept and
	// Confirm now reuse the group) and, of its 4000 RoCE frames, the first
	// and last 24 that are not LLC: the CDCs that open and close it.
	var roce []input
	for _, in := range g.setup {
		switch {
		case in.isTCP:
			in.clc = append([]clcIn(nil), in.clc[:in.clcN]...)
			for i := range in.clc {
				in.clc[i].flag = false // not first contact
			}
			g.smcr = append(g.smcr, in)
		case in.isRoCE && !in.roce.hasLLC:
			roce = append(roce, in)
		}
	}
	// TCP closes after the CDCs; put the trimmed RoCE frames between the
	// handshake (first 9 TCP segments) and the rest.
	body := append(append([]input(nil), roce[:24]...), roce[len(roce)-24:]...)
	// Request PSNs become their index in the copy per sending address (an
	// ACK's, that of the request it answers); smcrConn adds where the
	// link's sequence stands. ACKs of requests trimmed away go.
	type sent struct {
		src addr
		psn uint32
	}
	index := map[sent]uint32{}
	g.perCopy = map[addr]uint32{}
	kept := body[:0]
	for _, in := range body {
		r := &in.roce
		if isRequest(r.opcode) {
			index[sent{r.key.src, r.psn}] = g.perCopy[r.key.src]
			r.psn = g.perCopy[r.key.src]
			g.perCopy[r.key.src]++
		} else if i, ok := index[sent{r.key.dst, r.psn}]; ok {
			r.psn = i
		} else {
			continue
		}
		kept = append(kept, in)
	}
	g.smcr = append(g.smcr[:9:9], append(kept, g.smcr[9:]...)...)
	return g
}

// isTeardown: DELETE_RKEY and DELETE_LINK end pingpong's link group.
func isTeardown(in *input) bool {
	b := in.roce.llc.typ.Base()
	return in.isRoCE && in.roce.hasLLC && (b == decode.LLCDeleteRKey || b == decode.LLCDeleteLink)
}

// feed sends one connection of tmpl with the client port and time of the
// next connection; remap, if set, adjusts each frame.
func (g *connGen) feed(tmpl []input, remap func(*input) bool) {
	k := g.conns
	g.conns++
	port := uint16(1024 + k%64512)
	// Past 64512 ports the client address changes too, so every
	// connection has a 4-tuple of its own.
	client := netip.AddrFrom4([4]byte{10, 20 + byte(k/64512>>8), byte(k / 64512), 2})
	t0 := tmpl[0].ts()
	var last time.Time
	in := &g.in
	for i := range tmpl {
		*in = tmpl[i]
		if remap != nil && !remap(in) {
			continue
		}
		in.ns = g.at.Add(in.ts().Sub(t0)).UnixNano()
		last = in.ts()
		if in.isTCP {
			if in.tcp.src.Port() != 5000 {
				in.tcp.src = netip.AddrPortFrom(client, port)
			} else {
				in.tcp.dst = netip.AddrPortFrom(client, port)
			}
		}
		g.frame++
		in.number = g.frame
		g.tr.mu.Lock()
		g.tr.feed(in)
		g.tr.mu.Unlock()
	}
	g.at = last.Add(time.Millisecond)
}

// smcrConn feeds one SMC-R connection on the shared link group; the first
// call sets the group up. Request PSNs continue each link direction's
// sequence and ACKs follow their request, so nothing looks retransmitted.
func (g *connGen) smcrConn() {
	if g.psn == nil {
		g.psn = map[addr]uint32{}
		g.feed(g.setup, func(in *input) bool {
			if in.isRoCE && isRequest(in.roce.opcode) {
				g.psn[in.roce.key.src] = (in.roce.psn + 1) & 0xFFFFFF
			}
			return true
		})
		return
	}
	g.feed(g.smcr, func(in *input) bool {
		if r := &in.roce; in.isRoCE {
			sender := r.key.src
			if !isRequest(r.opcode) {
				sender = r.key.dst
			}
			r.psn = (g.psn[sender] + r.psn) & 0xFFFFFF
		}
		return true
	})
	for a, n := range g.perCopy {
		g.psn[a] = (g.psn[a] + n) & 0xFFFFFF
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// manyConns are the workloads of the scale benchmark and test.
var manyConns = []struct {
	name string
	next func(g *connGen)
}{
	// TCP fallbacks: no SMC option on the SYN-ACK, and CLC Declines.
	{"fallback", func(g *connGen) {
		if g.conns%2 == 0 {
			g.feed(g.fallback, nil)
		} else {
			g.feed(g.decline, nil)
		}
	}},
	// SMC-R connections one after the other over one link group.
	{"smcr-one-lgr", func(g *connGen) { g.smcrConn() }},
}

// BenchmarkManyConns feeds 100 000 short connections and reports the live
// heap at its peak (after a collection, sampled every 5 000 connections and
// at the end with the snapshot and the views' rows built) and the cost
// per connection. Run it with -benchtime 1x: one op is the whole input.
func BenchmarkManyConns(b *testing.B) {
	const n = 100000
	for _, w := range manyConns {
		b.Run(w.name, func(b *testing.B) {
			var peak uint64
			frames := 0
			for range b.N {
				b.StopTimer()
				tr := New(Options{})
				g := newConnGen(b, tr)
				base := heapInUse()
				b.StartTimer()
				for i := range n {
					w.next(g)
					if i%5000 == 4999 {
						b.StopTimer()
						peak = max(peak, heapInUse()-base)
						b.StartTimer()
					}
				}
				s := tr.Snapshot()
				b.StopTimer()
				peak = max(peak, heapInUse()-base)
				runtime.KeepAlive(s)
				frames += g.frame
				b.StartTimer()
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*b.N), "ns/conn")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestManyConnsBounded feeds 200 000 short fallback connections and 20 000
// SMC-R connections over one link group: what the tracker keeps stays
// under its caps and the live heap stays flat from a quarter of the input
// to all of it, while the views' totals count every connection fed, with
// the outcome, reason and bytes of each.
func TestManyConnsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("feeds 16 million frames")
	}
	for _, w := range []struct {
		name string
		n    int
	}{{"fallback", 200000}, {"smcr-one-lgr", 20000}} {
		t.Run(w.name, func(t *testing.T) {
			next := manyConns[0].next
			if w.name == "smcr-one-lgr" {
				next = manyConns[1].next
			}
			// One connection of each kind, alone, says what every copy adds.
			unit := func() ConnTotals {
				one := New(Options{})
				g := newConnGen(t, one)
				next(g)
				next(g)
				s := one.Snapshot()
				return s.Totals().Conns
			}()

			tr := New(Options{})
			g := newConnGen(t, tr)
			base := heapInUse()
			var quarter uint64
			for i := range w.n {
				next(g)
				if i == w.n/4 {
					quarter = heapInUse() - base
				}
			}
			end := heapInUse() - base
			runtime.KeepAlive(g) // its templates were in base
			t.Logf("live heap %.1f MiB after %d connections, %.1f MiB after %d; kept %d conns, %d tuples, %d links, %d link groups",
				float64(quarter)/(1<<20), w.n/4, float64(end)/(1<<20), w.n, len(tr.conns), len(tr.byTuple), len(tr.links), len(tr.lgrs))
			if end > quarter+quarter/4+1<<20 || end > 16<<20 {
				t.Errorf("live heap grew from %d to %d bytes: want it flat and under 16 MiB", quarter, end)
			}
			if len(tr.conns) > DefaultMaxConns || len(tr.byTuple) > DefaultMaxConns || len(tr.links) > DefaultMaxConns/4 || tr.history > maxHistory {
				t.Errorf("kept %d conns, %d tuples, %d links, %d link events: want each within its cap", len(tr.conns), len(tr.byTuple), len(tr.links), tr.history)
			}

			s := tr.Snapshot()
			checkAccounting(t, s.Stats)
			tot := s.Totals().Conns
			if tot.Conns != w.n || tot.Listed != len(s.Conns) || tot.Folded != w.n-len(s.Conns) || s.Stats.Evicted != tot.Folded || tot.FoldedOpen != 0 {
				t.Errorf("totals count %d conns (%d listed, %d folded, %d open), evicted %d; want %d fed", tot.Conns, tot.Listed, tot.Folded, tot.FoldedOpen, s.Stats.Evicted, w.n)
			}
			if !s.Folded() {
				t.Error("folded connections, but the snapshot says none were")
			}
			// Every kind of connection came w.n/2 times (the SMC-R case: the
			// first contact once, then reusing ones).
			for o, n := range unit.Outcomes {
				want := n * w.n / 2
				if w.name == "smcr-one-lgr" {
					want = w.n
				}
				if tot.Outcomes[o] != want {
					t.Errorf("%s: %d, want %d (outcomes %v)", o, tot.Outcomes[o], want, tot.Outcomes)
				}
			}
			if tot.Closed != w.n {
				t.Errorf("%d closed, want all %d", tot.Closed, w.n)
			}
			for _, x := range []struct {
				dir       string
				got, unit FlowTotals
			}{{"C->S", tot.C2S, unit.C2S}, {"S->C", tot.S2C, unit.S2C}} {
				want := x.unit
				want.CDCs, want.Writes = want.CDCs*w.n/2, want.Writes*w.n/2
				want.Bytes, want.WriteBytes, want.TCPBytes = want.Bytes*uint64(w.n)/2, want.WriteBytes*uint64(w.n)/2, want.TCPBytes*uint64(w.n)/2
				if w.name == "smcr-one-lgr" {
					// The first connection is pingpong whole, the others trimmed
					// copies: only the bytes (from the cursors) are the same.
					want = FlowTotals{Bytes: x.unit.Bytes * uint64(w.n) / 2, TCPBytes: x.got.TCPBytes, CDCs: x.got.CDCs, Writes: x.got.Writes, WriteBytes: x.got.WriteBytes}
				}
				if x.got != want {
					t.Errorf("%s totals %+v, want %+v", x.dir, x.got, want)
				}
			}
			reasons := 0
			for _, n := range fallbackReasons(&s) {
				reasons += n
			}
			if reasons != tot.Outcomes["fallback"] {
				t.Errorf("%d fallbacks by reason, want %d", reasons, tot.Outcomes["fallback"])
			}
			if w.name == "smcr-one-lgr" {
				gr := s.LinkGroups
				if len(gr) != 1 || len(gr[0].Conns)+gr[0].ConnsFolded != w.n || len(gr[0].Conns) > DefaultMaxConns {
					t.Errorf("link groups %d, want one that lists up to %d of its %d connections and counts the rest", len(gr), DefaultMaxConns, w.n)
				}
				for _, l := range s.Links {
					if l.State == LinkUp && len(l.Conns)+l.ConnsFolded != w.n {
						t.Errorf("link %d lists %d connections and counts %d folded, want %d", l.ID, len(l.Conns), l.ConnsFolded, w.n)
					}
				}
			}
		})
	}
}
