package probe

import (
	"math/bits"
	"os"
	"runtime"
	"sync"
)

// maxProcs bounds what reserveProcs asks for: past it, goroutines waiting
// in reads share Ps as the runtime arranges by default (correct, but each
// read costs more, see reserveProcs).
const maxProcs = 128

var procsMu sync.Mutex

// reserveProcs gives the Go scheduler one P more than the n goroutines
// that may wait in a blocking read at once (at least 2, at most maxProcs),
// unless GOMAXPROCS is set in the environment: then that is the user's
// choice. It only ever raises GOMAXPROCS.
//
// Why: a goroutine in a system call keeps its P (its right to run Go
// code) and takes it back on return with one compare-and-swap, but only
// while some other P is idle. When none is, sysmon takes the P away after
// 20 µs, and, having taken one, keeps waking every 20 µs instead of
// backing off towards 10 ms; the goroutine then comes back from every read
// through the scheduler's slow path while sysmon competes for its CPU.
// GOMAXPROCS defaults to the number of CPUs the process may use, so 1 when
// it is pinned to one CPU, as the bench pins both sides and as anyone
// measuring latency would: every ping then paid for this on both sides,
// about 2 % of a loopback round trip (BENCH.md). An idle P costs nothing:
// the goroutines that do run still share the CPUs the process has.
//
// The P is not kept by a raw system call instead: see fdConn.
func reserveProcs(n int) {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	want := min(max(n+1, 2), maxProcs)
	procsMu.Lock()
	defer procsMu.Unlock()
	if runtime.GOMAXPROCS(0) < want {
		runtime.GOMAXPROCS(want)
	}
}

// serverProcs is reserveProcs for a server with n sessions and at most
// maxConns: it rounds up to a power of two, so that a server filling up
// changes GOMAXPROCS (a stop of the world, some µs) a few times, not once
// per connection.
func serverProcs(n, maxConns int) {
	if n <= 0 {
		return
	}
	reserveProcs(min(1<<bits.Len(uint(n))-1, maxConns))
}
