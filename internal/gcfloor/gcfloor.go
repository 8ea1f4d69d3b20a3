// Package gcfloor keeps the garbage collector from running while the
// heap is small. Every collection marks the binary's global variables,
// and gopacket's layers package has 5 MiB of them holding pointers (its
// tables of 65536 EtherType and PPP type entries), most never written:
// a collection costs ~15-20 ms of CPU on a virtual machine whose first
// touch of each page traps to the hypervisor, and with GOGC's default
// the first one comes at a 4 MiB heap, in the first tens of
// milliseconds of a run that reads a capture at hundreds of MB/s. That
// one collection was 10-15 % of smcdump's time on 200 MB captures.
//
// The collector's own knobs do it: while the live heap is below half of
// the floor, GOGC is off and the memory limit is the floor (a collection
// when the runtime's memory reaches it); above, GOGC is 100 and there is
// no limit, as by default. The choice is made again after each
// collection (a cleanup of an object dropped for it).
package gcfloor

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Set keeps the collector from running before the Go runtime's memory
// reaches floor bytes while the live heap is below floor/2; from there on
// it runs as GOGC=100 does. It does nothing when the environment sets
// GOGC or GOMEMLIMIT: the user's choice stands.
func Set(floor int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	set(floor)
}

func set(floor int64) *tuner {
	t := &tuner{floor: floor, live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.tune()
	return t
}

type tuner struct {
	floor int64
	// floored: GOGC is off, the limit the floor (read by tests while
	// a cleanup writes it).
	floored atomic.Bool
	live    []metrics.Sample
}

// sentinel is dropped as soon as it is made: its cleanup runs after the
// next collection.
type sentinel struct{ _ *int }

func (t *tuner) tune() {
	metrics.Read(t.live)
	live := int64(t.live[0].Value.Uint64())
	switch {
	case live < t.floor/2 && !t.floored.Load():
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(t.floor)
		t.floored.Store(true)
	case live >= t.floor/2 && t.floored.Load():
		debug.SetMemoryLimit(math.MaxInt64)
		debug.SetGCPercent(100)
		t.floored.Store(false)
	}
	runtime.AddCleanup(&sentinel{}, (*tuner).tune, t)
}
