package browser

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFrameLists holds the index's lists, read from its relevance bits,
// to the slices they stand for: frames, rows, and the row of a frame in
// them or not, for views taken while the index grows.
func TestFrameLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := &Index{}
	var rel []int32
	for i := range 1000 {
		r := rng.IntN(3) > 0 || (i >= 200 && i < 330) // a run of whole words
		if i >= 500 && i < 700 {
			r = false // and of none
		}
		x.ents.add(entry{off: int64(i)}, int64(i+1))
		x.rel.add(i, r)
		if r {
			rel = append(rel, int32(i+1))
		}
		if i%97 != 0 && i != 999 {
			continue
		}
		all := make([]int32, i+1)
		for k := range all {
			all[k] = int32(k + 1)
		}
		for name, c := range map[string]struct {
			l    frameList
			want []int32
		}{"relevant": {x.relevantList(), rel}, "all": {x.allList(), all}} {
			l, want := c.l, c.want
			if l.len() != len(want) || !slices.Equal(l.slice(), want) {
				t.Fatalf("%s after %d frames: %v, want %v", name, i+1, l.slice(), want)
			}
			for k, n := range want {
				if g := l.at(k); g != n {
					t.Fatalf("%s after %d frames: row %d is %d, want %d", name, i+1, k, g, n)
				}
			}
			for n := int32(-1); n <= int32(i+3); n++ {
				wr, wf := rowOf(want, n)
				if r, f := l.rowOf(n); r != wr || f != wf {
					t.Fatalf("%s after %d frames: rowOf(%d) = %d, %v, want %d, %v", name, i+1, n, r, f, wr, wf)
				}
				if r, w := l.index(n), slices.Index(want, n); r != w {
					t.Fatalf("%s after %d frames: index(%d) = %d, want %d", name, i+1, n, r, w)
				}
			}
		}
	}
	if !x.relevantList().same(x.relevantList()) || x.relevantList().same(x.allList()) || !listOf(rel).same(listOf(rel)) {
		t.Error("same: a list is not itself, or is another")
	}
}
