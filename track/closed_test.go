package track

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestMaxClosedBounded: with Options.MaxClosed the connections kept whole
// stay under it however many ended connections the capture holds (each
// SMC-R one with a link group of its own, as bench/mkbig -distinct repeats
// pingpong), and the totals count every connection with the outcomes,
// closes, frames and bytes of a run that folds nothing.
func TestMaxClosedBounded(t *testing.T) {
	pp := replay(t, refDir+"pingpong.pcap")
	const maxClosed = 32
	run := func(opts Options, n int, each func(i int, tr *Tracker)) *Tracker {
		tr := New(opts)
		g := newConnGen(t, tr)
		for i := range n {
			if i%4 == 3 {
				g.feed(pp, nil)
			} else {
				g.feed(g.fallback, nil)
			}
			if each != nil {
				each(i, tr)
			}
		}
		return tr
	}
	// Kept whole: connections, links and link groups, as the capture grows.
	const n = 1000
	most := [3]int{}
	tr := run(Options{MaxClosed: maxClosed}, n, func(i int, tr *Tracker) {
		most = [3]int{max(most[0], len(tr.conns)), max(most[1], len(tr.links)), max(most[2], len(tr.lgrs))}
	})
	// A few more: the connections still open, and a fold waits for a tenth of
	// MaxClosed new ones.
	if most[0] > maxClosed+maxClosed/8 || most[1] > maxClosed+maxClosed/8 || most[2] > maxClosed {
		t.Errorf("kept up to %d conns, %d links, %d link groups whole; want about MaxClosed=%d each", most[0], most[1], most[2], maxClosed)
	}
	whole := run(Options{}, n, nil) // under MaxConns: nothing folded
	s, w := tr.Snapshot(), whole.Snapshot()
	if w.Folded() {
		t.Fatal("the reference run folded")
	}
	got, want := s.Totals(), w.Totals()
	gc, wc := got.Conns, want.Conns
	if gc.Folded != n-len(s.Conns) || gc.FoldedOpen != 0 || gc.FoldedIdle != 0 || gc.Rule == "" {
		t.Errorf("folded %d (open %d, idle %d, rule %q) of %d, listed %d", gc.Folded, gc.FoldedOpen, gc.FoldedIdle, gc.Rule, n, len(s.Conns))
	}
	gc.Listed, gc.Folded, gc.Rule = wc.Listed, wc.Folded, wc.Rule
	if gc.Conns != wc.Conns || gc.Closed != wc.Closed || gc.Frames != wc.Frames || gc.C2S != wc.C2S || gc.S2C != wc.S2C || len(gc.Outcomes) != len(wc.Outcomes) {
		t.Errorf("totals after folding %+v, want those of the whole run %+v", gc, wc)
	}
	for o, k := range wc.Outcomes {
		if gc.Outcomes[o] != k {
			t.Errorf("%s: %d, want %d", o, gc.Outcomes[o], k)
		}
	}
	gl, wl := got.Links, want.Links
	if gl.Links != wl.Links || gl.C2S != wl.C2S || gl.S2C != wl.S2C || len(gl.States) != len(wl.States) {
		t.Errorf("link totals after folding %+v, want %+v", gl, wl)
	}
	for st, k := range wl.States {
		if gl.States[st] != k {
			t.Errorf("links %s: %d, want %d", st, gl.States[st], k)
		}
	}
	if got.LinkGroups.LinkGroups != want.LinkGroups.LinkGroups || got.LinkGroups.Deleted != want.LinkGroups.Deleted {
		t.Errorf("link group totals %+v, want %+v", got.LinkGroups, want.LinkGroups)
	}
	dg, dw := fallbackReasons(&s), fallbackReasons(&w)
	if len(dg) != len(dw) {
		t.Fatalf("fallbacks: %d reasons, want %d", len(dg), len(dw))
	}
	for k, n := range dw {
		if dg[k] != n {
			t.Errorf("fallback reason %+v: %d, want %d", k, dg[k], n)
		}
	}
}

// TestMaxClosedIdle: connections that never close are folded like ended
// ones once idle for Options.IdleTimeout (capture time), and counted as
// such; open and busy ones stay.
func TestMaxClosedIdle(t *testing.T) {
	fb := replay(t, refDir+"fallback-nosmc.pcap")
	// Every connection without its FINs: it never closes in the capture.
	var open []input
	for _, in := range fb {
		if in.isTCP && (in.tcp.fin || in.tcp.rst) {
			continue
		}
		open = append(open, in)
	}
	const maxClosed, n = 16, 400
	tr := New(Options{MaxClosed: maxClosed, IdleTimeout: time.Second})
	g := newConnGen(t, tr)
	most := 0
	for range n {
		g.feed(open, nil)
		g.at = g.at.Add(100 * time.Millisecond)
		most = max(most, len(tr.conns))
	}
	s := tr.Snapshot()
	c := s.Totals().Conns
	t.Logf("kept up to %d, folded %d (idle %d, open %d)", most, c.Folded, c.FoldedIdle, c.FoldedOpen)
	// Live ones: those of the last second, up to ~10 per second of
	// capture time at this pace, and ended ones up to MaxClosed.
	if most > maxClosed+64 || c.Conns != n || c.FoldedIdle != c.Folded || c.FoldedOpen != 0 || c.Folded < n-maxClosed-64 {
		t.Errorf("kept up to %d of %d never-closed connections, folded %d (idle %d, open %d); want the idle ones folded beyond MaxClosed=%d", most, n, c.Folded, c.FoldedIdle, c.FoldedOpen, maxClosed)
	}
}

// TestRecycledLinkGroups: once MaxClosed ended connections are kept, a
// capture that sets up a link group per connection (pingpong repeated)
// allocates little per further connection: folded links and link groups
// serve the next ones (recycle), so the heap does not grow between
// collections with the capture's length. Before, each connection left
// about 10 KiB of garbage.
func TestRecycledLinkGroups(t *testing.T) {
	pp := replay(t, refDir+"pingpong.pcap")
	tr := New(Options{MaxClosed: 32})
	g := newConnGen(t, tr)
	for range 200 {
		g.feed(pp, nil)
	}
	const n = 400
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		g.feed(pp, nil)
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d B allocated per connection with its link group, %d spare links, %d spare groups", per, len(tr.spareLinks), len(tr.spareLGRs))
	if per > 2048 {
		t.Errorf("%d B allocated per connection with its link group, want the folded ones reused", per)
	}
	s := tr.Snapshot()
	if c := s.Totals().Conns; c.Conns != 200+n || c.Outcomes["SMC-R"] != 200+n || c.C2S.Bytes != uint64(200+n)*32664 {
		t.Errorf("totals %+v, want %d SMC-R connections of 32664 B each way", c, 200+n)
	}
}

// TestOfferedTable: offered's table names the types a Proposal offers,
// v2 first and only from version 2 on (types of smc_clc.h: 0 SMC-R, 1
// SMC-D, 2 none, 3 both).
func TestOfferedTable(t *testing.T) {
	for _, tc := range []struct {
		ver    uint8
		v2, v1 decode.SMCType
		want   string
	}{
		{1, 0, 0, "SMC-Rv1"},
		{1, 3, 1, "SMC-Dv1"}, // v1 has no v2 types
		{2, 3, 3, "SMC-Rv2+SMC-Dv2+SMC-Rv1+SMC-Dv1"},
		{2, 2, 0, "SMC-Rv1"},
		{2, 0, 2, "SMC-Rv2"},
		{3, 1, 0, "SMC-Dv2+SMC-Rv1"},
		{2, 2, 2, ""},
	} {
		c := &decode.CLC{Version: tc.ver, TypeV1: tc.v1, TypeV2: tc.v2}
		if got := offered(c); got != tc.want {
			t.Errorf("version %d types %d/%d: %q, want %q", tc.ver, tc.v2, tc.v1, got, tc.want)
		}
	}
}

// TestNoFoldDueAfterFeed: a frame leaves no fold due for the next one,
// even when more live links (or link events) stay than the caps allow:
// those are folded only beyond MaxConns, and a fold retried on every
// frame was a pass over all links per frame, with the fast path off.
func TestNoFoldDueAfterFeed(t *testing.T) {
	for _, opts := range []Options{{MaxConns: 16, MaxClosed: 1}, {MaxConns: 4, MaxClosed: 1}} {
		opts.Unshared = true
		for _, name := range testutil.AllCaptures(t) {
			tr := New(opts)
			most := 0
			eachFrame(t, name, func(f *capture.Frame) {
				tr.Feed(f)
				most = max(most, len(tr.links))
				if tr.connsDue() || tr.linksDue() {
					t.Fatalf("%s %+v: frame %d leaves a fold due (%d conns, %d links, %d link events)",
						name, opts, f.Number, len(tr.conns), len(tr.links), tr.history)
				}
			})
			if strings.Contains(name, "multilink") && most <= tr.linkCap {
				t.Fatalf("%s: %d links at most, cap %d: the test needs more live links than the cap", name, most, tr.linkCap)
			}
		}
	}
}

// fallbackReasons counts the fallbacks of s, listed and folded, by reason.
func fallbackReasons(s *Snapshot) map[fallbackReason]int {
	out := map[fallbackReason]int{}
	for i := range s.Conns {
		if c := &s.Conns[i]; c.Outcome == OutcomeFallback {
			out[reasonOf(c)]++
		}
	}
	for k, n := range s.folded.reasons {
		out[k] += n
	}
	return out
}
