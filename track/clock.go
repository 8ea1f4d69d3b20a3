package track

import "time"

// captureClock is the time the tracker measures by: a frame's stamp,
// except where the capture's clock stepped back. A capture is one clock
// read at each frame; when the host's clock is stepped back (NTP, a
// merged capture of two hosts) the frames after the step carry stamps
// seconds before those before it, though no time went back on the wire.
// Measured by the stamps, every window and deadline that spans the step
// loses it: what waits for time to pass (an LLC request's response, a
// link's confirmation, a consumer stall) is decided seconds late or never,
// and an event after the step looks seconds older than one before it.
//
// So a step back of more than a second (expert.TimeBackwards) stops the
// clock for that frame: time goes on from there by the stamps' own
// deltas. A frame whose stamp alone stepped back (the one frame a
// capture point stamped wrong) is followed by frames stamped as before
// it: jumping back near the latest stamp seen, the clock goes on from
// where it stood by the time past that latest stamp, not by the jump.
// Stamps that never step back by a second (every capture of one host
// whose clock was left alone; jitter of microseconds) are the clock
// itself: a value is the stamp plus off, and off is 0 for them.
type captureClock struct {
	started bool
	number  int   // the frame last read (a frame is read once, however often it is asked for)
	last    int64 // its stamp (Unix nanoseconds)
	prev    int64 // the stamp of the frame before it
	max     int64 // the latest stamp seen
	off     int64 // the clock is a stamp plus off
	stepped bool  // the frame last read stepped back by more than stepBack
	steps   clockSteps
}

// clockSteps are the times where the clock stood at a step back and the
// frames that stepped back, at most maxClockSteps of them (cut: more came
// after the last): the time that passed across each is not known
// (Snapshot.Unmeasured, Snapshot.SteppedWithin).
type clockSteps struct {
	steps []clockStep
	cut   bool
}

// clockStep is one step back: the frame that stepped back, and the time
// where the clock stood at it.
type clockStep struct {
	at    int64
	frame int
}

// maxClockSteps bounds clockSteps: a capture of a host whose clock was
// left alone has none, two captures joined end to end one.
const maxClockSteps = 1024

// between reports whether a step lies from a to b (clock times).
func (s *clockSteps) between(a, b int64) bool {
	for _, st := range s.steps {
		if a <= st.at && st.at <= b {
			return true
		}
	}
	return s.cut && len(s.steps) > 0 && b >= s.steps[len(s.steps)-1].at
}

// withinFrames reports whether a frame after from, up to to, stepped
// back: the two frames' times, which the step makes equal where it lies
// right after from, tell that apart only by their numbers.
func (s *clockSteps) withinFrames(from, to int) bool {
	for _, st := range s.steps {
		if from < st.frame && st.frame <= to {
			return true
		}
	}
	return s.cut && len(s.steps) > 0 && to > s.steps[len(s.steps)-1].frame
}

// clone is a copy of s that shares nothing with it.
func (s clockSteps) clone() clockSteps {
	s.steps = append([]clockStep(nil), s.steps...)
	return s
}

// stepBack is how far a stamp goes back before the clock stands:
// expert.TimeBackwards's threshold.
const stepBack = int64(time.Second)

// at reads the clock at frame number, stamped stamp, and returns its
// time. Asked again for the same frame (a number other than 0), it
// returns the same time and changes nothing.
func (c *captureClock) at(number int, stamp int64) int64 {
	if c.read(number) {
		return c.last + c.off
	}
	c.stepped = false
	switch {
	case !c.started:
		c.started, c.max, c.last = true, stamp, stamp
	case stamp < c.last-stepBack:
		// Stepped back: the clock stands at this frame.
		c.stepped = true
		c.off += c.last - stamp
		if len(c.steps.steps) < maxClockSteps {
			// The time at returns: where it stands.
			c.steps.steps = append(c.steps.steps, clockStep{at: stamp + c.off, frame: number})
		} else {
			c.steps.cut = true
		}
	case c.returns(stamp):
		// Back near the latest stamp after a step back: from where the
		// clock stood, by the time past that stamp.
		at := c.last + c.off + max(0, stamp-c.max)
		c.off = at - stamp
	}
	return c.advance(number, stamp)
}

// advance makes frame number, stamped stamp, the frame last read and
// returns its time.
func (c *captureClock) advance(number int, stamp int64) int64 {
	c.prev, c.last, c.number = c.last, stamp, number
	c.max = max(c.max, stamp)
	return stamp + c.off
}

// read reports whether frame number (not 0) is the frame last read.
func (c *captureClock) read(number int) bool {
	return c.started && number != 0 && number == c.number
}

// usual reads the clock at frame number, stamped stamp, as at does, if the
// frame is read as every frame of a capture whose clock was left alone
// (its time its stamp plus the same off), and reports whether it was;
// any other frame it leaves unread, for at (the fast path reads only
// those: the others are feed's).
func (c *captureClock) usual(number int, stamp int64) (int64, bool) {
	if c.read(number) {
		return c.last + c.off, !c.stepped
	}
	if !c.started || stamp < c.last-stepBack || c.returns(stamp) {
		return 0, false
	}
	c.stepped = false
	return c.advance(number, stamp), true
}

// returns reports whether a frame stamped stamp jumps forward, from
// stamps more than stepBack before the latest, back to near that latest:
// the frames after one stamped back alone. (Frames after a step back that
// reach the latest stamp by small deltas, time passing, are no jump.)
func (c *captureClock) returns(stamp int64) bool {
	return c.last < c.max-stepBack && stamp >= c.max-stepBack && stamp-c.last > stepBack
}

// project is the time at would give a stamp after the frame last read,
// without reading it: for the end of a capture a file states.
func (c *captureClock) project(stamp int64) int64 {
	d := *c
	return d.at(0, stamp)
}
