package mutate

import "time"

// CutCopiesFirst puts before each frame longer than snap a copy of it cut
// to snap bytes, 20 us earlier: a capture of two interfaces with two snap
// lengths (or a bond and its member), the shorter one's copies first.
func CutCopiesFirst(frames []Frame, snap int) []Frame {
	out := make([]Frame, 0, 2*len(frames))
	for _, p := range frames {
		if len(p.Data) > snap {
			cp := p
			cp.Data, cp.CI.CaptureLength = p.Data[:snap:snap], snap
			cp.CI.Timestamp = p.CI.Timestamp.Add(-20 * time.Microsecond)
			out = append(out, cp)
		}
		out = append(out, p)
	}
	return out
}
