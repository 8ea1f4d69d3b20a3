package track

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/testutil"
)

// lossOnPath makes, from a capture, what a capture point behind a lossy
// path shows when the request at frame index i was lost before it: the
// next requests of its direction (reqs) go by and the responder drops
// them (it acknowledges none of them: the ACKs among acks are left out;
// its NAK is not needed), then the requester goes back to the lost PSN
// (go-back-N after IBA's PSN sequence error), so the lost one comes late
// and the ones after it come again.
func lossOnPath(t *testing.T, frames []rawFrame, i int, reqs []int, acks map[int]bool) []rawFrame {
	t.Helper()
	var out []rawFrame
	last := reqs[len(reqs)-1]
	// Nothing acknowledged them, so the requester sends them again once
	// its ACK timeout is over (SMC's queue pairs: about 134 ms): the
	// frames from there on come that much later.
	const timeout = 135 * time.Millisecond
	var shift time.Duration
	for j := range frames {
		if j == i || j > i && j < last && acks[j] {
			continue
		}
		f := frames[j]
		f.CI.Timestamp = f.CI.Timestamp.Add(shift)
		out = append(out, f)
		if j == last {
			shift = timeout
			ci := frames[last].CI
			ci.Timestamp = ci.Timestamp.Add(shift)
			out = append(out, frames[i])
			for _, r := range reqs {
				out = append(out, rawFrame{CI: ci, Data: bytes.Clone(frames[r].Data)})
			}
		}
	}
	return out
}

// TestLossOnPath: a CDC lost on the path before the capture point, and
// the requests after it sent again, is no sequence gap, no repeated
// sequence number and no cursor going back: the requests the responder
// dropped are out of sequence, their copies retransmissions that it takes,
// the lost one late and no retransmission; every byte is counted once.
func TestLossOnPath(t *testing.T) {
	path := testutil.Root(t) + "/testdata/reference/pingpong.pcap"
	frames, lt := testutil.ReadFrames(t, path)
	// The client's CDCs (index in frames) and the requests of its
	// direction: the loss is one CDC in the middle of the ping-pong.
	type req struct {
		idx int
		cdc bool
	}
	var c2s []req
	acks := map[int]bool{} // the server's ACKs
	eachRaw(t, path, lt, frames, func(f *capture.Frame) {
		switch {
		case f.BTH == nil || f.IPv4 == nil:
		case f.IPv4.SrcIP.String() == "10.10.0.2" && f.BTH.Opcode <= 0x0a:
			c2s = append(c2s, req{f.Number - 1, f.CDC != nil})
		case f.IPv4.SrcIP.String() == "10.10.0.1" && f.BTH.Opcode == 0x11:
			acks[f.Number-1] = true
		}
	})
	var lost int
	var after []int
	for j := len(c2s) / 2; j < len(c2s); j++ {
		if c2s[j].cdc {
			lost = c2s[j].idx
			for _, r := range c2s[j+1 : j+4] {
				after = append(after, r.idx)
			}
			break
		}
	}
	if len(after) != 3 {
		t.Fatalf("no client CDC with three requests after it in %s", path)
	}
	base := feedFile(t, path, Options{}, 0).Snapshot()
	mod := lossOnPath(t, frames, lost, after, acks)
	tr := New(Options{Unshared: true})
	eachRaw(t, "loss", lt, mod, func(f *capture.Frame) { tr.Feed(f) })
	s := tr.Snapshot()
	checkAccounting(t, s.Stats)
	if s.Stats.Unattached != 0 {
		t.Errorf("%d unattached frames", s.Stats.Unattached)
	}
	var found []string
	for _, f := range s.Findings() {
		found = append(found, f.ID.String())
	}
	for _, bad := range []expert.ID{expert.SeqGap, expert.SeqDup, expert.CursorBackwards} {
		if slices.Contains(found, bad.String()) {
			t.Errorf("findings %v: %s is a false alarm", found, bad)
		}
	}
	for _, want := range []expert.ID{expert.PSNGap, expert.RCRetransmission} {
		if !slices.Contains(found, want.String()) {
			t.Errorf("findings %v, want %s", found, want)
		}
	}
	var late, ooo, retrans, baseRetrans int
	for _, l := range s.Links {
		late += l.RC[DirC2S].Late
		ooo += l.RC[DirC2S].OutOfSeq
		retrans += l.RC[DirC2S].Retrans
	}
	for _, l := range base.Links {
		baseRetrans += l.RC[DirC2S].Retrans
	}
	if late != 1 || ooo != 3 || retrans != baseRetrans+3 {
		t.Errorf("C->S: %d late, %d out of sequence, %d retransmitted; want 1, 3 and %d", late, ooo, retrans, baseRetrans+3)
	}
	if len(s.Conns) != len(base.Conns) {
		t.Fatalf("%d connections, the capture has %d", len(s.Conns), len(base.Conns))
	}
	for i, c := range s.Conns {
		for d := range 2 {
			f, b := c.Flow[d], base.Conns[i].Flow[d]
			if f.Bytes != b.Bytes || f.WriteBytes != b.WriteBytes || f.CDCs != b.CDCs || f.SeqGaps != 0 || f.SeqDup != 0 || f.CursorErrors != 0 {
				t.Errorf("conn %d %v: %d B / %d B WRITE / %d CDCs, seq gaps %d, dups %d, cursor errors %d; the capture: %d / %d / %d",
					c.ID, Dir(d), f.Bytes, f.WriteBytes, f.CDCs, f.SeqGaps, f.SeqDup, f.CursorErrors, b.Bytes, b.WriteBytes, b.CDCs)
			}
		}
	}
}

// TestLostInCapture: a CDC missing from the capture alone (the receiver
// got it and acknowledged it, nothing comes again) is a fact of the
// capture, not a loss: roce.rc.not_captured on the ACK that tells it, and
// no PSN gap, sequence gap or request out of sequence follows from it
// (Wireshark's "ACKed segment that wasn't captured").
func TestLostInCapture(t *testing.T) {
	path := testutil.Root(t) + "/testdata/reference/pingpong.pcap"
	frames, lt := testutil.ReadFrames(t, path)
	var cdcs []int
	eachRaw(t, path, lt, frames, func(f *capture.Frame) {
		if f.CDC != nil && f.IPv4 != nil && f.IPv4.SrcIP.String() == "10.10.0.2" {
			cdcs = append(cdcs, f.Number-1)
		}
	})
	i := cdcs[len(cdcs)/2]
	mod := append(append([]rawFrame(nil), frames[:i]...), frames[i+1:]...)
	tr := New(Options{Unshared: true})
	outOfSeq, notCaptured := 0, 0
	eachRaw(t, "drop", lt, mod, func(f *capture.Frame) {
		tr.Feed(f)
		var r decode.Record
		tr.AppendFields(f, &r)
		if r.Has(fOutOfSeq) {
			outOfSeq++
		}
		if r.Has(fNotCaptured) {
			notCaptured++
		}
	})
	s := tr.Snapshot()
	gaps, notSeen := 0, 0
	for _, c := range s.Conns {
		gaps += c.Flow[DirC2S].SeqGaps
		notSeen += c.Flow[DirC2S].SeqNotCaptured
	}
	var found []string
	for _, f := range s.Findings() {
		found = append(found, f.ID.String())
	}
	if gaps != 0 || notSeen != 1 || slices.Contains(found, expert.SeqGap.String()) || slices.Contains(found, expert.PSNGap.String()) ||
		!slices.Contains(found, expert.NotCaptured.String()) {
		t.Errorf("C->S seq gaps %d, not captured %d, findings %v: want no gap, one CDC not captured, roce.rc.not_captured and no seq_gap or psn_gap", gaps, notSeen, found)
	}
	if outOfSeq != 0 || notCaptured != 1 {
		t.Errorf("frames out of sequence %d, telling of frames not captured %d; want 0 and 1", outOfSeq, notCaptured)
	}
}

// TestLateWindow: ACKs that come before the requests they acknowledge
// (one side's capture clock ahead) add to the window rather than replace
// it, up to its size; a NAK takes out only the PSNs from its own on.
func TestLateWindow(t *testing.T) {
	var w lateWindow
	var none psnWindow
	w.open(100, 1, &none, 0)
	w.open(101, 2, &none, 1000)           // a second ACK before the first request
	w.open(103, aheadBits-2, &none, 2000) // slides by one: 100 falls out
	for psn, want := range map[uint32]bool{100: false, 101: true, 102: true, 103: true, 101 + aheadBits - 1: true, 101 + aheadBits: false} {
		if got := w.take(psn, 3000); got != want {
			t.Errorf("take(%d) = %v, want %v", psn, got, want)
		}
	}
	w = lateWindow{}
	w.open(10, 5, &none, 0)
	w.dropFrom(12) // the requester goes back to 12
	if !w.take(11, 1) || w.take(12, 1) || w.take(14, 1) {
		t.Error("dropFrom(12) kept the wrong PSNs")
	}
	w.open(20, 3, &none, 0)
	if w.take(21, int64(lateMax)+1) {
		t.Error("a PSN taken after lateMax")
	}
}
