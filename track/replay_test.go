package track

import (
	"net/netip"
	"testing"
	"time"

	"github.com/smcscope/smcscope/capture"
)

// replay loads a real capture as tracker inputs once, so a test can feed
// it many times with other ports and times, like a long capture of many
// connections.
func replay(t testing.TB, name string) []input {
	t.Helper()
	var ins []input
	eachFrame(t, name, func(f *capture.Frame) {
		var in input
		fill(&in, f)
		in.clc = append([]clcIn(nil), in.clc[:in.clcN]...)
		ins = append(ins, in)
	})
	return ins
}

// TestBoundedMemory: memory follows the live connections, not the frames
// or the number of connections ever seen.
func TestBoundedMemory(t *testing.T) {
	fb := replay(t, refDir+"decline-nordma.pcap")
	pp := replay(t, refDir+"pingpong.pcap")
	tr := New(Options{IdleTimeout: 10 * time.Second, MaxConns: 200})
	base := fb[0].ts()
	const rounds = 3000
	for i := range rounds {
		shift := time.Duration(i) * time.Second
		port := uint16(20000 + i)
		for _, in := range fb {
			in.ns += int64(shift)
			if in.isTCP {
				// Move the client to another port, keeping the real bytes otherwise.
				if in.tcp.src.Port() != 5000 {
					in.tcp.src = netip.AddrPortFrom(in.tcp.src.Addr(), port)
				} else {
					in.tcp.dst = netip.AddrPortFrom(in.tcp.dst.Addr(), port)
				}
			}
			in.number = tr.stats.Frames + 1
			tr.feed(&in)
		}
		if i%100 == 0 {
			// Every 100 s a whole SMC-R connection with its link group.
			for _, in := range pp {
				in.ns = base.Add(shift).Add(in.ts().Sub(pp[0].ts())).UnixNano()
				in.number = tr.stats.Frames + 1
				tr.feed(&in)
			}
		}
	}
	st := tr.stats
	checkAccounting(t, st)
	t.Logf("live tuples %d, kept conns %d, evicted %d, wire keys %d, links %d (evicted %d), lgrs %d",
		len(tr.byTuple), len(tr.conns), st.Evicted, len(tr.byQP), len(tr.links), st.EvictedLinks, len(tr.lgrs))
	if len(tr.byTuple) > 40 {
		t.Errorf("%d connections in the live table after %d, want only the last ~10 s", len(tr.byTuple), rounds)
	}
	if len(tr.conns) > 200 || st.Evicted < rounds-200 {
		t.Errorf("%d connections kept, %d evicted; want at most MaxConns=200", len(tr.conns), st.Evicted)
	}
	if len(tr.byQP) > 4 {
		t.Errorf("%d wire keys live, want only the last link group's", len(tr.byQP))
	}
	var fallbacks, smcr int
	for _, c := range tr.conns {
		switch c.Outcome {
		case OutcomeFallback:
			fallbacks++
		case OutcomeSMCR:
			smcr++
			if c.Flow[DirC2S].Bytes != 32664 {
				t.Errorf("replayed SMC-R conn %d: %d B, want 32664 each time", c.ID, c.Flow[DirC2S].Bytes)
			}
		}
	}
	if fallbacks == 0 || smcr == 0 {
		t.Errorf("kept %d fallbacks and %d SMC-R connections, want both kinds", fallbacks, smcr)
	}
}

// TestTupleReuse: a retransmitted SYN stays one connection; the same
// 4-tuple used again after a close is a new one.
func TestTupleReuse(t *testing.T) {
	fb := replay(t, refDir+"decline-nordma.pcap")
	tr := New(Options{})
	n := 0
	feed := func(in input) {
		n++
		in.number = n
		tr.feed(&in)
	}
	for i, in := range fb {
		feed(in)
		if in.isTCP && in.tcp.syn && !in.tcp.ack {
			feed(fb[i]) // the SYN again, as a retransmission
		}
	}
	for _, in := range fb {
		in.ns += int64(time.Minute)
		feed(in)
	}
	if len(tr.conns) != 2 {
		t.Fatalf("%d connections, want 2 (one per use of the tuple)", len(tr.conns))
	}
	for _, c := range tr.conns {
		if c.Outcome != OutcomeFallback || c.Fallback.Code != 0x03030002 || !c.Closed() {
			t.Errorf("conn %d: %v %+v closed %v", c.ID, c.Outcome, c.Fallback, c.Closed())
		}
	}
	if f := tr.conns[0].Frames; f != len(fb)-4+1 {
		t.Errorf("first connection has %d frames, want %d (its frames and the repeated SYN)", f, len(fb)-4+1)
	}
}

// TestEvictLive: when every connection is still live, the cap still holds
// and the evicted ones leave the live table too.
func TestEvictLive(t *testing.T) {
	fb := replay(t, refDir+"decline-nordma.pcap")
	var syn input
	for _, in := range fb {
		if in.isTCP && in.tcp.syn && !in.tcp.ack {
			syn = in
			break
		}
	}
	tr := New(Options{MaxConns: 100})
	for i := range 5000 {
		in := syn
		in.tcp.src = netip.AddrPortFrom(in.tcp.src.Addr(), uint16(1024+i))
		in.number = i + 1
		tr.feed(&in)
	}
	if len(tr.conns) > 100 || len(tr.byTuple) > 100 || tr.stats.Evicted != 5000-len(tr.conns) {
		t.Errorf("kept %d, live table %d, evicted %d; want at most 100 and the rest evicted", len(tr.conns), len(tr.byTuple), tr.stats.Evicted)
	}
	if last := tr.conns[len(tr.conns)-1]; last.Client.Port() != 1024+4999 {
		t.Errorf("newest connection %v was evicted", last.Client)
	}
}

// TestEvictLinks: retired links beyond MaxConns leave the views with the
// link groups that have no link left, and the newest ones stay.
func TestEvictLinks(t *testing.T) {
	pp := replay(t, refDir+"pingpong.pcap")
	tr := New(Options{IdleTimeout: 10 * time.Second, MaxConns: 10})
	base := pp[0].ts()
	const rounds = 40
	for i := range rounds {
		shift := time.Duration(i) * 100 * time.Second
		for _, in := range pp {
			in.ns = base.Add(shift).Add(in.ts().Sub(base)).UnixNano()
			in.number = tr.stats.Frames + 1
			tr.feed(&in)
		}
	}
	st := tr.stats
	checkAccounting(t, st)
	if st.EvictedLinks == 0 || len(tr.links) > 10+2 || len(tr.links)+st.EvictedLinks != tr.nextLink {
		t.Errorf("%d links kept, %d evicted of %d; want the cap to hold and every link counted", len(tr.links), st.EvictedLinks, tr.nextLink)
	}
	live := map[*LinkGroup]bool{}
	for _, l := range tr.links {
		live[l.lgr] = true
	}
	for _, g := range tr.lgrs {
		if !live[g] {
			t.Errorf("link group %d kept without a link", g.ID)
		}
	}
	if len(tr.lgrs) == 0 || tr.lgrs[len(tr.lgrs)-1].ID != tr.nextLGR {
		t.Errorf("newest link group evicted (%d kept, %d made)", len(tr.lgrs), tr.nextLGR)
	}
}

// TestFoldKeepsTimelineConn: the connection whose timeline was asked for
// stays whole however many come after it, and an endpoint that many
// connections share keeps only the first of them (the one smc,timeline
// shows) back from folding.
func TestFoldKeepsTimelineConn(t *testing.T) {
	fb := replay(t, refDir+"decline-nordma.pcap")
	for _, tl := range []string{"2", "10.10.0.1:5000"} {
		tr := New(Options{MaxConns: 10, Timeline: tl})
		for i := range 100 {
			for _, in := range fb {
				in.ns += int64(time.Duration(i) * time.Second)
				if in.isTCP {
					if in.tcp.src.Port() != 5000 {
						in.tcp.src = netip.AddrPortFrom(in.tcp.src.Addr(), uint16(20000+i))
					} else {
						in.tcp.dst = netip.AddrPortFrom(in.tcp.dst.Addr(), uint16(20000+i))
					}
				}
				in.number = tr.stats.Frames + 1
				tr.feed(&in)
			}
		}
		s := tr.Snapshot()
		want := 2
		if tl != "2" {
			want = 1
		}
		c, err := s.FindConn(tl)
		if err != nil || c.ID != want || len(c.Timeline) == 0 || len(s.Conns) > 10 || s.Stats.Evicted < 90 {
			t.Errorf("timeline %s: conn %v (err %v), %d kept, %d folded; want conn %d kept whole with its events", tl, c, err, len(s.Conns), s.Stats.Evicted, want)
		}
	}
}
