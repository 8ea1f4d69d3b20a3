package monitor

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// randomRows returns n rows with keys drawn from a few, so that keys
// repeat; Detail tells the rows of one key apart.
func randomRows(r *rand.Rand, n int) []ConnRow {
	rows := make([]ConnRow, n)
	for i := range rows {
		rows[i] = ConnRow{Key: fmt.Sprintf("inode:%d", r.IntN(n/2+1)), ConnDetail: &ConnDetail{Detail: fmt.Sprint(i)}}
	}
	return rows
}

// TestSortConns: sorting indexes and moving each row once gives the
// order a stable sort of the rows gives.
func TestSortConns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 100, 1000} {
		rows := randomRows(r, n)
		want := slices.Clone(rows)
		sort.SliceStable(want, func(i, j int) bool { return want[i].Key < want[j].Key })
		sortConns(rows)
		for i := range rows {
			if rows[i].Key != want[i].Key || rows[i].ConnDetail.Detail != want[i].ConnDetail.Detail {
				t.Fatalf("n %d: row %d is %s/%s, want %s/%s", n, i, rows[i].Key, rows[i].ConnDetail.Detail, want[i].Key, want[i].ConnDetail.Detail)
			}
		}
	}
}

// TestMatchConns: the merge of sorted rows pairs them as a map of the
// previous rows by key (the last row of a key) does.
func TestMatchConns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 5, 100, 1000} {
		prev, cur := randomRows(r, n), randomRows(r, n)
		sortConns(prev)
		sortConns(cur)
		last := map[string]int32{}
		for j := range prev {
			last[prev[j].Key] = int32(j)
		}
		match := matchConns(prev, cur)
		for i := range cur {
			want, ok := last[cur[i].Key]
			if !ok {
				want = -1
			}
			if match[i] != want {
				t.Fatalf("n %d: row %d (%s) paired with %d, want %d", n, i, cur[i].Key, match[i], want)
			}
		}
	}
}

// connMatch pairs each row of cur with the index of its row in prev, -1
// for none.
type connMatch []int32

// diffConns finds the sockets' events of cur against prev as carry does.
func diffConns(prev, cur *Snapshot) *connDiff {
	d := &connDiff{}
	match := matchConns(prev.Conns, cur.Conns)
	for i := range cur.Conns {
		var o *ConnRow
		if match[i] >= 0 {
			o = &prev.Conns[match[i]]
		}
		d.add(&cur.Conns[i], o, prev.Time, cur.Time)
	}
	return d
}

// matchConns pairs cur with prev, both sorted by key, as carry does.
func matchConns(prev, cur []ConnRow) connMatch {
	match := make(connMatch, len(cur))
	mg := keyMerge{prev: prev}
	for i := range cur {
		match[i] = mg.next(cur[i].Key)
	}
	return match
}

// TestKeyOrder: ordering keys by their packed first bytes gives the order
// a stable sort of the key strings gives, keys longer than 16 bytes and
// repeated keys included.
func TestKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	// One scratch for every n, as refreshes of a host share one: what
	// the last left in it must not matter.
	sc := &rowScratch{}
	for _, n := range []int{0, 1, 2, 50, 2000, 3} {
		keys := make([]string, n)
		for i := range keys {
			switch r.IntN(3) {
			case 0:
				keys[i] = fmt.Sprintf("inode:%d", r.IntN(n+1))
			case 1:
				keys[i] = fmt.Sprintf("cookie:%d", r.Uint64()>>r.IntN(64))
			default:
				keys[i] = fmt.Sprintf("cookie:1844674407370955%d", r.IntN(10))
			}
		}
		want := make([]int32, n)
		for i := range want {
			want[i] = int32(i)
		}
		sort.SliceStable(want, func(i, j int) bool { return keys[want[i]] < keys[want[j]] })
		got := keyOrder(n, func(i int32) string { return keys[i] }, sc)
		if !slices.Equal(got, want) {
			t.Fatalf("n %d: order %v, want %v", n, got, want)
		}
		slices.Sort(keys) // in order already: no sort
		got = keyOrder(n, func(i int32) string { return keys[i] }, sc)
		for i := range got {
			if got[i] != int32(i) {
				t.Fatalf("n %d, sorted keys: order %v", n, got)
			}
		}
	}
}
