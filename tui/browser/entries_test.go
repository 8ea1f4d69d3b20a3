package browser

import (
	"math/rand/v2"
	"testing"

	"github.com/smcscope/smcscope/expert"
)

// TestEntries holds the compact table to what it was given: offsets
// across blocks and chunks, far ones (records of 64 KiB and more, a
// pcapng's other blocks), frames kept in memory from some frame on,
// blocks with as many pairs as frames.
func TestEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var es entries
	var want []entry
	off := int64(24)
	n := 2*chunkFrames + 1000
	for i := range n {
		e := entry{off: off}
		if rng.IntN(8) == 0 {
			e.sev = expert.Severity(rng.IntN(5))
		}
		switch {
		case i/blockFrames == 5: // a block of 64 pairs
			e.conn, e.link = int32(i), int16(i%3)
		case rng.IntN(4) > 0:
			e.conn, e.link = int32(rng.IntN(4)), int16(rng.IntN(3))
		}
		if i >= n-100 {
			e.off = -1
		}
		want = append(want, e)
		es.add(e)
		switch r := rng.IntN(100); {
		case r == 0:
			off += 70000 + int64(rng.IntN(1<<20))
		case r == 1:
			off += farDelta
		case r == 2:
			off += farDelta - 1
		default:
			off += 16 + int64(rng.IntN(1500))
		}
	}
	if es.len() != n {
		t.Fatalf("len %d, want %d", es.len(), n)
	}
	for i, w := range want {
		if g := es.at(i); g != w {
			t.Fatalf("entry %d: %+v, want %+v", i, g, w)
		}
		if g := es.conn(i); g != w.conn {
			t.Fatalf("entry %d: conn %d, want %d", i, g, w.conn)
		}
	}
	es.setSeverity(7, expert.Error)
	es.setSeverity(8, expert.SeverityNone)
	want[7].sev, want[8].sev = expert.Error, expert.SeverityNone
	for _, i := range []int{6, 7, 8, 9} {
		if g := es.at(i); g != want[i] {
			t.Errorf("after setSeverity, entry %d: %+v, want %+v", i, g, want[i])
		}
	}
	match := func(p connLink) bool { return p.conn == 2 || p.link == 1 || p.conn == 5*blockFrames+7 }
	var got []int
	es.matching(match, func(i int) { got = append(got, i) })
	var exp []int
	for i, w := range want {
		if match(connLink{w.conn, w.link}) {
			exp = append(exp, i)
		}
	}
	if len(got) != len(exp) {
		t.Fatalf("matching: %d entries, want %d", len(got), len(exp))
	}
	for i := range got {
		if got[i] != exp[i] {
			t.Fatalf("matching: entry %d is %d, want %d", i, got[i], exp[i])
		}
	}
}
