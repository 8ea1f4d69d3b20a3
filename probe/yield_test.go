package probe

import (
	"net/netip"
	"testing"
	"time"
)

// TestYielderEvery: the yielder yields once yieldEvery has passed since it
// last did, and not in between, whatever the steps of the clock it is given.
func TestYielderEvery(t *testing.T) {
	var y yielder
	steps := []struct {
		now  time.Duration
		want int
	}{
		{yieldEvery / 2, 0},
		{yieldEvery - 1, 0},
		{yieldEvery, 1},
		{yieldEvery + yieldEvery/2, 1},
		{2*yieldEvery - 1, 1},
		{2 * yieldEvery, 2},
		{10 * yieldEvery, 3}, // a long round trip: one yield, not one per yieldEvery
		{10*yieldEvery + 1, 3},
	}
	for _, s := range steps {
		y.maybe(s.now)
		if y.n != s.want {
			t.Fatalf("after now=%v: %d yields, want %d", s.now, y.n, s.want)
		}
	}
}

// TestPingLoopYields: the client's measuring loop passes through the
// scheduler while it pings, at most one ping's time later than every
// yieldEvery, so that the runtime's sysmon never finds it holding its P
// for 10 ms (yield.go).
func TestPingLoopYields(t *testing.T) {
	o := loopbackOptions(t, ServerConfig{TCPOnly: true})
	c, err := Dial(t.Context(), ProtoTCP, netip.AddrPortFrom(netip.MustParseAddr(o.Host), o.Port), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 1 << 20
	cr := &connRun{conn: c, pinger: NewPinger(c, 64), samples: make([]time.Duration, 0, n), sent: make([]time.Duration, 0, n)}
	// A deadline, not a count: a slow machine pings less but as long.
	if err := cr.loop(64, n, time.Now().Add(10*yieldEvery), 0, false); err != nil {
		t.Fatal(err)
	}
	// When each ping ended, and the longest time from one end to the next.
	var step time.Duration
	for i := 1; i < len(cr.samples); i++ {
		step = max(step, cr.sent[i]+cr.samples[i]-cr.sent[i-1]-cr.samples[i-1])
	}
	last := len(cr.samples) - 1
	span := cr.sent[last] + cr.samples[last] - cr.sent[0] - cr.samples[0]
	if want := int(span / (yieldEvery + step)); cr.yield.n < want {
		t.Errorf("%d yields over %d pings in %v (longest step %v), want at least %d", cr.yield.n, len(cr.samples), span, step, want)
	}
	if cr.yield.maxGap > yieldEvery+step {
		t.Errorf("%v between two yields, want at most %v + the longest step %v", cr.yield.maxGap, yieldEvery, step)
	}
}

// TestTickFor: the read tick comes on with waits from tickOn to tickMax,
// goes off below tickOff and from tickMax, and stays as it is in between.
func TestTickFor(t *testing.T) {
	for _, tc := range []struct {
		cur, wait, want time.Duration
		change          bool
	}{
		{0, 14 * time.Microsecond, 0, false},
		{0, tickOn - 1, 0, false},
		{0, tickOn, readTickLen, true},
		{readTickLen, 5 * time.Millisecond, readTickLen, false},
		{readTickLen, tickOff, readTickLen, false},
		{readTickLen, tickOff - 1, 0, true},
		{0, tickMax, 0, false},
		{0, time.Second, 0, false},
		{readTickLen, tickMax - 1, readTickLen, false},
		{readTickLen, tickMax, 0, true},
	} {
		if got, change := tickFor(tc.cur, tc.wait); got != tc.want || change != tc.change {
			t.Errorf("tickFor(%v, %v) = %v, %v; want %v, %v", tc.cur, tc.wait, got, change, tc.want, tc.change)
		}
	}
}
