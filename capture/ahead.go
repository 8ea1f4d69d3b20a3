package capture

import (
	"sync/atomic"
)

// Touching ahead of the batches' reader. ReadBatch walks a mapped file's
// records one after the other, each record's offset in the header of the
// one before it: every header it meets in a page not yet in the CPU's
// caches (a capture of RDMA WRITEs puts one or two in a page) is a wait on
// memory, and every page not yet mapped a fault, one at a time, while the
// other goroutines of a pass wait for the reader. Those waiting can load
// the pages the reader reads next in the meantime: the faults are then
// theirs, and the reader finds the lines in the shared cache.

// aheadWindow is how far past the last batch read the file is touched:
// a few batches of the largest frames, and far less than the last-level
// cache, which the lines must still be in when the reader comes.
const aheadWindow = 4 << 20

// aheadChunk is the part of the window one TouchAhead touches: a few
// microseconds, after which its caller tries the reader again.
const aheadChunk = 64 << 10

// ahead is TouchAhead's state, written by several goroutines: its own
// cache lines.
type ahead struct {
	_       [64]byte
	mem     []byte       // the mapped file
	readTo  atomic.Int64 // where the last batch read ends
	touched atomic.Int64 // the window is touched up to here
	off     atomic.Bool  // a touch faulted: the file was cut
	sum     atomic.Uint64
	_       [64]byte
}

// TouchAhead loads a part of a mapped file (OpenMapped) not yet read by
// ReadBatch, up to 4 MiB past the last batch, and reports whether there
// was any left to load. It may be called from any goroutine while another
// calls ReadBatch (a goroutine waiting for the reader), never after Close;
// the calling goroutine must have debug.SetPanicOnFault(true): a file cut
// meanwhile turns TouchAhead off, its reader reporting the cut.
func (r *Reader) TouchAhead() (did bool) {
	a := r.ahead.Load()
	if a == nil || a.off.Load() {
		return false
	}
	defer func() {
		if v := recover(); v != nil {
			if !IsFault(v) {
				panic(v)
			}
			a.off.Store(true)
			did = false
		}
	}()
	from := a.readTo.Load()
	lim := min(from+aheadWindow, int64(len(a.mem)))
	for {
		t := a.touched.Load()
		s := max(t, from)
		if s >= lim {
			return false
		}
		e := min(s+aheadChunk, lim)
		if !a.touched.CompareAndSwap(t, e) {
			continue // another waiting goroutine took that part
		}
		// One load a cache line; summed and stored, so that they are
		// not dropped.
		var sum uint64
		mem := a.mem[s:e:e]
		for i := 0; i < len(mem); i += 64 {
			sum += uint64(mem[i])
		}
		a.sum.Add(sum)
		return true
	}
}

// KeepAhead is TouchAhead for a goroutine between two batches of its own
// (it did not wait for the reader): it touches only while less than 1 MiB
// past the last batch read is touched, at most 256 KiB a call, so that a
// reader that is seldom waited for (the workers busy with text or JSON)
// still finds its pages mapped, and one that is waited for is left to
// those waiting. Interleaved A/B: -j 2 text on multiconn 8-10 % faster,
// long's text unchanged (-T fields 3-5 % slower: smcdump leaves it to
// the goroutines of slower batches).
func (r *Reader) KeepAhead() {
	a := r.ahead.Load()
	if a == nil {
		return
	}
	for range aheadKeep {
		if a.touched.Load()-a.readTo.Load() >= aheadLow || !r.TouchAhead() {
			return
		}
	}
}

const (
	aheadLow  = 1 << 20
	aheadKeep = 4
)
