package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitFloored collects until the tuner has chosen want, with a deadline.
// The choice is made by a cleanup, on a goroutine of its own, after the
// collection that finds the object it dropped; the object it drops then
// may be made while the next collection runs, which it outlives: one
// collection does not make sure of a choice.
func waitFloored(t *testing.T, tu *tuner, want bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); tu.floored.Load() != want; {
		if time.Now().After(deadline) {
			t.Fatalf("floored is %v after 10 s of collections, want %v", !want, want)
		}
		runtime.GC()
	}
}

var sink []byte

// TestFloor: garbage well below the floor starts no collection; a live
// heap above half of it turns GOGC's default back on, and a small one
// after that the floor again.
func TestFloor(t *testing.T) {
	tu := set(64 << 20)
	if !tu.floored.Load() {
		t.Fatal("not floored at the start")
	}
	before := cycles()
	for range 20 << 10 {
		sink = make([]byte, 1<<10) // 20 MiB of garbage
	}
	if n := cycles() - before; n != 0 {
		t.Errorf("%d collections for 20 MiB of garbage under a 64 MiB floor", n)
	}
	live := make([][]byte, 40)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	waitFloored(t, tu, false)
	runtime.KeepAlive(live)
	live = nil
	waitFloored(t, tu, true)
}

// TestUserSettings: GOGC or GOMEMLIMIT in the environment leaves the
// collector as the user set it.
func TestUserSettings(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "100")
			Set(1 << 20)
			if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
				t.Errorf("memory limit %d with %s set", limit, env)
			}
		})
	}
}
