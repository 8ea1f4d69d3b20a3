package browser

import (
	"math/bits"
	"slices"
	"sort"
)

// relevance says which frames are SMC-relevant, a bit a frame, with the
// count of relevant frames before each word of bits: the list of the
// relevant frames is read from it (frameList) instead of being kept, at
// 4 bytes a frame, as nearly every frame of an SMC capture is in it.
type relevance struct {
	words  []uint64
	before []int32 // relevant frames before words[w]
	n      int     // relevant frames
}

// add records whether frame i (0-based, the next one) is relevant.
func (r *relevance) add(i int, relevant bool) {
	if i%64 == 0 {
		r.words = append(r.words, 0)
		r.before = append(r.before, int32(r.n))
	}
	if relevant {
		r.words[i/64] |= 1 << (i % 64)
		r.n++
	}
}

// nth returns the 0-based index of the j-th relevant frame (0-based);
// j must be below n.
func (r *relevance) nth(j int) int {
	w := sort.Search(len(r.before), func(w int) bool { return int(r.before[w]) > j }) - 1
	word := r.words[w]
	for k := j - int(r.before[w]); k > 0; k-- {
		word &= word - 1 // the lowest bit cleared
	}
	return w*64 + bits.TrailingZeros64(word)
}

// rank returns how many of the frames before frame i (0-based) are
// relevant; i may be past the last frame.
func (r *relevance) rank(i int) int {
	w := i / 64
	if w >= len(r.words) {
		return r.n
	}
	return int(r.before[w]) + bits.OnesCount64(r.words[w]&(1<<(i%64)-1))
}

// frameList is a list's frames: a slice, or the first n of the index's
// relevant frames or of all its frames, read from the index (these two
// lists grow with the capture, and are not kept as slices).
type frameList struct {
	ns []int32
	x  *Index // the index whose relevant or all frames the list is, nil for ns
	// rel: the relevant frames, else all.
	rel bool
	n   int
}

// listOf is the list of frames ns.
func listOf(ns []int32) frameList { return frameList{ns: ns, n: len(ns)} }

func (l frameList) len() int { return l.n }

// at returns the list's i-th frame; i must be below len.
func (l frameList) at(i int) int32 {
	switch {
	case l.x == nil:
		return l.ns[i]
	case !l.rel:
		return int32(i + 1)
	}
	l.x.mu.RLock()
	defer l.x.mu.RUnlock()
	return int32(l.x.rel.nth(i) + 1)
}

// slice returns the list's frames as a slice: its own, or a new one.
func (l frameList) slice() []int32 {
	if l.x == nil {
		return l.ns
	}
	out := make([]int32, l.n)
	if !l.rel {
		for i := range out {
			out[i] = int32(i + 1)
		}
		return out
	}
	l.x.mu.RLock()
	defer l.x.mu.RUnlock()
	i := 0
	for w, word := range l.x.rel.words {
		for ; word != 0 && i < l.n; word &= word - 1 {
			out[i] = int32(w*64 + bits.TrailingZeros64(word) + 1)
			i++
		}
	}
	return out
}

// rowOf returns the row of frame n in the list (in frame order) and
// whether it is there; when it is not, the row of the first frame after
// n (the last row when none is).
func (l frameList) rowOf(n int32) (int, bool) {
	var i int
	switch {
	case l.x == nil:
		return rowOf(l.ns, n)
	case !l.rel:
		i = min(max(int(n)-1, 0), l.n)
	default:
		l.x.mu.RLock()
		i = min(l.x.rel.rank(max(int(n)-1, 0)), l.n)
		l.x.mu.RUnlock()
	}
	found := i < l.n && l.at(i) == n
	if i == l.n && i > 0 {
		i--
	}
	return i, found
}

// index returns the row of frame n in a list in any order, -1 when it is
// not there.
func (l frameList) index(n int32) int {
	if l.x == nil {
		return slices.Index(l.ns, n)
	}
	if i, found := l.rowOf(n); found {
		return i
	}
	return -1
}

// same reports whether two lists are the same list of the same frames.
func (l frameList) same(o frameList) bool {
	if l.x != nil || o.x != nil {
		return l.x == o.x && l.rel == o.rel && l.n == o.n
	}
	return sameList(l.ns, o.ns)
}

// relevantList is the list of the SMC-relevant frames indexed so far.
func (x *Index) relevantList() frameList {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return frameList{x: x, rel: true, n: x.rel.n}
}

// allList is the list of every frame indexed so far.
func (x *Index) allList() frameList {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return frameList{x: x, n: x.ents.len()}
}
