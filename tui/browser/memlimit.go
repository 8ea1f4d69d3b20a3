package browser

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The index pass of a file keeps what it learns (the table, the tracker's
// state) and throws away the rest (decoded frames, the panes' tracker
// snapshots). With the collector's default of a heap twice what it kept,
// that garbage made the resident size of the pass nearly twice what the
// index holds (on 10 GiB, a peak of 249 MiB for a heap of 121 MiB after
// the pass). While a file is indexed the process's memory is held by a
// soft limit (debug.SetMemoryLimit) of what its heap kept at the last
// collection plus a quarter of that (at least passHeadroom) for the
// pass's garbage: what is kept is mostly the table, which holds no
// pointers, so the more frequent collections cost the pass little. The
// limit follows the kept heap as the index grows, and the previous limit
// is back when the last pass ends. GOMEMLIMIT or GOGC in the environment
// is the user's own tuning, which a pass leaves alone.
const (
	passHeadroom = 32 << 20 // several tracker snapshots of a big capture
	// passRelimit is how far the limit wanted may move from the one set
	// before it is set again.
	passRelimit = 1 << 20
)

// passMemory holds the process's memory while files are indexed.
type passMemory struct {
	mu     sync.Mutex
	passes int   // file passes running
	prev   int64 // the limit before the first of them
	set    int64 // the limit last set, 0 none
	// samples are what the limit is worked out from (hold).
	samples []metrics.Sample
	// limit is debug.SetMemoryLimit, nil for it (a test's own).
	limit func(int64) int64
}

func (m *passMemory) setLimit(v int64) int64 {
	if m.limit != nil {
		return m.limit(v)
	}
	return debug.SetMemoryLimit(v)
}

// passMem is the process's: the limit is.
var passMem passMemory

// passMemoryTuned says that the user tunes the collector.
var passMemoryTuned = os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") != ""

// start starts holding the memory for a file's index pass, and returns
// what ends it (the limit back to what it was when no other pass runs;
// calls after the first do nothing). It does nothing when the user tunes
// the collector or some other part of the program set a limit.
func (m *passMemory) start() (end func()) {
	if passMemoryTuned {
		return func() {}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.passes == 0 {
		m.prev = m.setLimit(-1)
		if m.prev != math.MaxInt64 {
			return func() {}
		}
		m.set = 0
	}
	m.passes++
	m.hold()
	return sync.OnceFunc(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.passes--
		if m.passes == 0 {
			m.setLimit(m.prev)
			m.set = 0
		}
	})
}

// update sets the limit again from the heap the last collection kept;
// a pass calls it every batch of frames.
func (m *passMemory) update() {
	if passMemoryTuned {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.passes > 0 {
		m.hold()
	}
}

// Indexes of passMemory.samples.
const (
	sLive = iota
	sTotal
	sReleased
	sObjects
	sUnused
	sFree
	sCount
)

// hold sets the limit to what the runtime holds besides the heap (stacks,
// its metadata), the heap the last collection kept, and the headroom.
// Callers hold m.mu.
func (m *passMemory) hold() {
	s := m.samples
	if s == nil {
		s = make([]metrics.Sample, sCount)
		s[sLive].Name = "/gc/heap/live:bytes"
		s[sTotal].Name = "/memory/classes/total:bytes"
		s[sReleased].Name = "/memory/classes/heap/released:bytes"
		s[sObjects].Name = "/memory/classes/heap/objects:bytes"
		s[sUnused].Name = "/memory/classes/heap/unused:bytes"
		s[sFree].Name = "/memory/classes/heap/free:bytes"
		m.samples = s
	}
	metrics.Read(s)
	var v [sCount]int64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = int64(min(s[i].Value.Uint64(), math.MaxInt64))
		}
	}
	other := max(v[sTotal]-v[sReleased]-v[sObjects]-v[sUnused]-v[sFree], 0)
	limit := other + v[sLive] + max(v[sLive]/4, passHeadroom)
	if d := limit - m.set; d > -passRelimit && d < passRelimit {
		return
	}
	m.set = limit
	m.setLimit(limit)
}
