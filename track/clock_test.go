package track

import (
	"testing"
	"time"
)

// TestCaptureClock: the clock is the stamps themselves while they never
// step back by a second (jitter included); a step back stops it for the
// frame and time goes on by the stamps' deltas; a single frame stamped
// back leaves it where it stood and the frames after, jumping back near
// the latest stamp, go on from there; a frame read twice is read once; a
// capture's stated end is projected from the last frame.
func TestCaptureClock(t *testing.T) {
	const s, ms = int64(time.Second), int64(time.Millisecond)
	for _, c := range []struct {
		name   string
		stamps []int64
		want   []int64
		back   []bool // stepped back at that frame
	}{
		{"in order", []int64{10 * s, 10*s + ms, 11 * s}, []int64{10 * s, 10*s + ms, 11 * s}, nil},
		{"jitter", []int64{10 * s, 10*s + 5*ms, 10*s + 2*ms, 10*s + 6*ms}, []int64{10 * s, 10*s + 5*ms, 10*s + 2*ms, 10*s + 6*ms}, nil},
		{"step back", []int64{10 * s, 10*s + ms, 5*s + 2*ms, 5*s + 3*ms, 11 * s},
			[]int64{10 * s, 10*s + ms, 10*s + ms, 10*s + 2*ms, 11*s + ms}, []bool{false, false, true}},
		{"one frame stamped back", []int64{10 * s, 10*s + ms, 5 * s, 10*s + 3*ms, 10*s + 4*ms},
			[]int64{10 * s, 10*s + ms, 10*s + ms, 10*s + 3*ms, 10*s + 4*ms}, []bool{false, false, true}},
		{"step back past the latest stamp", []int64{10 * s, 8 * s, 9 * s, 10*s + 500*ms, 11 * s},
			[]int64{10 * s, 10 * s, 11 * s, 12*s + 500*ms, 13 * s}, []bool{false, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var k captureClock
			for i, st := range c.stamps {
				got := k.at(i+1, st)
				if again := k.at(i+1, st); again != got {
					t.Errorf("frame %d read again: %d, then %d", i+1, got, again)
				}
				if got != c.want[i] {
					t.Errorf("frame %d stamped %v: %v, want %v", i+1, time.Duration(st), time.Duration(got), time.Duration(c.want[i]))
				}
				if want := i < len(c.back) && c.back[i]; k.stepped != want {
					t.Errorf("frame %d: stepped back %v, want %v", i+1, k.stepped, want)
				}
			}
		})
	}
	var k captureClock
	k.at(1, 10*s)
	k.at(2, 5*s) // stepped back: the clock stands at 10 s
	if got := k.project(5*s + 2*ms); got != 10*s+2*ms {
		t.Errorf("an end 2 ms after the last frame: %v, want 10.002s", time.Duration(got))
	}
	if k.number != 2 || k.last != 5*s {
		t.Errorf("project read a frame: %+v", k)
	}
}
