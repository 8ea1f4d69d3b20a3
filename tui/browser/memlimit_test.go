package browser

import (
	"math"
	"runtime"
	"testing"
)

// TestPassMemory: while passes run, the memory limit is what the heap
// kept plus the headroom, follows the heap as it grows, and is set back
// when the last pass ends; a limit set by some other part of the program
// is left alone.
func TestPassMemory(t *testing.T) {
	if passMemoryTuned {
		t.Skip("GOMEMLIMIT or GOGC is set: passes leave the collector alone")
	}
	// The test's own limit: index passes of other tests may still be
	// ending, and set the process's.
	limit := int64(math.MaxInt64)
	m := passMemory{limit: func(v int64) int64 {
		old := limit
		if v >= 0 {
			limit = v
		}
		return old
	}}
	runtime.GC()
	end1, end2 := m.start(), m.start()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if m.passes != 2 || m.set != limit || m.set <= passHeadroom || m.set > int64(ms.Sys)+max(int64(ms.HeapAlloc)/4, passHeadroom)+passRelimit {
		t.Fatalf("%d passes, limit %d MiB for %d MiB held by the runtime", m.passes, m.set>>20, ms.Sys>>20)
	}
	before := m.set
	kept := make([]byte, 64<<20)
	for i := range kept {
		kept[i] = byte(i)
	}
	runtime.GC()
	m.update()
	if m.set != limit || m.set < int64(len(kept))+passHeadroom {
		t.Errorf("limit %d MiB after the heap kept 64 MiB more, %d MiB before", m.set>>20, before>>20)
	}
	runtime.KeepAlive(kept)
	end1()
	end1()
	if m.passes != 1 {
		t.Fatalf("%d passes after one of two ended (twice)", m.passes)
	}
	end2()
	if m.passes != 0 || limit != math.MaxInt64 {
		t.Errorf("%d passes, limit %d after the last ended, want none", m.passes, limit)
	}

	limit = 1 << 40
	end := m.start()
	if m.passes != 0 || limit != 1<<40 {
		t.Errorf("a limit set elsewhere: %d passes, limit %d", m.passes, limit)
	}
	end()
}
