package track

import "github.com/smcscope/smcscope/expert"

// cutShown holds the last frames that raised smc.capture.snap_cut: the
// capture may hold one whole as well, after it (two interfaces captured
// with two snap lengths, a mirror that truncates its copies before their
// path is learned), and then nothing of it is missing (uncut).
type cutShown struct {
	e    [8]cutFrame
	next int
}

// cutFrame is one frame of cutShown: its number, and a SYN's or
// SYN-ACK's ports and sequence number (captureDup finds no copy of a
// segment whose TCP header was cut).
type cutFrame struct {
	number int
	syn    cutSYN
}

// add remembers in's frame, which raised smc.capture.snap_cut.
func (c *cutShown) add(in *input) {
	f := cutFrame{number: in.number}
	if in.snapCut == snapCutSYN {
		f.syn = in.cutSYN
	}
	c.e[c.next%len(c.e)] = f
	c.next++
}

// uncut takes smc.capture.snap_cut back from frame number, a RoCE packet
// or TCP segment whose whole copy came after it (captureDup's cutFirst).
func (t *Tracker) uncut(number uint32) {
	for i := range t.cutShown.e {
		if e := &t.cutShown.e[i]; e.number != 0 && uint32(e.number) == number {
			*e = cutFrame{}
			t.expert.unmark(expert.SnapCut)
			return
		}
	}
}

// uncutSYN takes smc.capture.snap_cut back from the SYN or SYN-ACK whose
// options were cut and which in, the segment whole, shows again: the same
// ports and sequence number within crossPathWindow (a SYN sent again
// comes a second later).
func (t *Tracker) uncutSYN(in *input) {
	s := &in.tcp
	key := makeTCPKey(s.src, s.dst)
	for i := range t.cutShown.e {
		e := &t.cutShown.e[i]
		if y := &e.syn; y.ns != 0 && y.key == key && y.client == s.src && y.seq == s.seq && y.ack == s.ack &&
			max(in.ns-y.ns, y.ns-in.ns) <= crossPathWindow {
			*e = cutFrame{}
			t.expert.unmark(expert.SnapCut)
			return
		}
	}
}
