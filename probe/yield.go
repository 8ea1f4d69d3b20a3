package probe

import (
	"time"
	_ "unsafe" // go:linkname
)

// yieldEvery is how long a measuring goroutine (the client's ping loop, the
// server's echo loop) goes at most without passing through the scheduler,
// counted from one message to the next.
//
// Why: such a goroutine spends its life between a blocking read(2) and a
// send, and neither takes it through the scheduler, so its P's scheduling
// tick never moves. The runtime's sysmon (runtime/proc.go, sysmon and
// retake) takes a goroutine that has held its P's tick for forcePreemptNS
// (10 ms) for one that never yields: it preempts it, and when it finds it in
// a system call, as it nearly always does here, it takes the P away from
// it. Every such retake resets sysmon's back-off, so sysmon then wakes every
// 20 µs for the next 50 rounds (about 1 ms, longer on a slow machine),
// and the read returns through exitsyscall's slow path. With round trips of
// a few milliseconds (SMC-R between TCG guests) that was once per 10 ms and
// cost smcping's server three to four times the CPU of sockperf's per round
// trip, its client twice (probe/BENCH.md). Passing through the scheduler
// moves the tick: runtime.goyield puts the goroutine on its own P's run
// queue and picks it up again, about 0.1 µs. (runtime.Gosched would do the
// same through the global run queue, but also wakes a thread for the spare
// P, reserveProcs, to look for work: a futex wake-up and a sleep, with
// their context switches, every time.) It is paid once per yieldEvery, not
// per message.
//
// 1 ms: one message's time is added to the gap before the next yield is
// seen, and the gap must stay below 10 ms for round trips of up to ~8 ms.
const yieldEvery = time.Millisecond

// yielder yields when yieldEvery has passed since it last did; now is any
// monotonic clock offset the caller has at hand.
type yielder struct {
	last time.Duration
	// For the tests: the yields so far, and the longest time between two.
	n      int
	maxGap time.Duration
}

func (y *yielder) maybe(now time.Duration) {
	if gap := now - y.last; gap >= yieldEvery {
		if y.n > 0 {
			y.maxGap = max(y.maxGap, gap)
		}
		y.last, y.n = now, y.n+1
		goyield()
	}
}

// goyield is the runtime's: Gosched through the P's own run queue, without
// waking another thread. The runtime keeps it for go:linkname users
// ("Do not remove or change the type signature", runtime/proc.go, Go issue
// 67401).
//
//go:linkname goyield runtime.goyield
func goyield()

// The read tick (fdConn.setTick): on once waits reach tickOn, off once
// they are below tickOff (apart, so that waits around one value do not
// switch it every message, a system call each time) or reach tickMax.
// readTickLen is the length of each system call of a long wait: short
// enough that neither a read nor the goroutine (which yields between them)
// is seen by sysmon unchanged for 10 ms, with room for a timer that fires
// late on a busy machine. Each wait longer than it costs a wake-up per
// tick, which beats sysmon's storm (some 50 wake-ups) only while the wait
// is short: a read that has ticked for tickMax turns the tick off and
// waits in one system call (an idle connection, a client pinging once a
// second), and waits that long do not turn it on.
const (
	readTickLen = 6 * time.Millisecond
	tickOn      = 2 * time.Millisecond
	tickOff     = 500 * time.Microsecond
	tickMax     = 100 * time.Millisecond
)

// tickFor says what the tick of a connection whose tick is cur should
// be after a wait of wait, and whether that is a change.
func tickFor(cur, wait time.Duration) (time.Duration, bool) {
	switch {
	case cur == 0 && wait >= tickOn && wait < tickMax:
		return readTickLen, true
	case cur != 0 && (wait < tickOff || wait >= tickMax):
		return 0, true
	}
	return cur, false
}
