package track

import (
	"testing"
	"time"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestTCPCaptureCopies: smcd-loopback.pcapng as tcpdump -i any shows
// loopback, every segment twice (out and in), 3 us apart. The copies are
// the capture's (roce.capture.duplicate, CaptureDups), followed once: the
// connections' frames, times and outcomes are the single capture's.
// Every segment shown again 2 ms later is two captures merged 2 ms apart
// (the SYN's copy, byte for byte while its connection runs, tells it):
// copies too. The copy after a handshake segment the capture damaged (a
// byte of the CLC Accept: its checksum fails, pingpong.pcap) is no copy,
// and the handshake is the single capture's.
func TestTCPCaptureCopies(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/smcd-loopback.pcapng")
	run := func(fs []rawFrame) Snapshot {
		tr := New(Options{})
		eachRaw(t, "copies", lt, fs, tr.Feed)
		tr.EndCapture(time.Time{})
		return tr.Snapshot()
	}
	twice := func(after time.Duration, damage func(i int, d []byte)) []rawFrame {
		var out []rawFrame
		for i, f := range frames {
			c := rawFrame{CI: f.CI, Data: append([]byte{}, f.Data...)}
			c.CI.Timestamp = c.CI.Timestamp.Add(after)
			o := rawFrame{CI: f.CI, Data: append([]byte{}, f.Data...)}
			if damage != nil {
				damage(i, o.Data)
			}
			out = append(out, o, c)
		}
		return out
	}
	base := run(frames)
	copies := run(twice(3*time.Microsecond, nil))
	if copies.Stats.CaptureDups != len(frames) || copies.Stats.ConnAttached != base.Stats.ConnAttached {
		t.Errorf("copies: %d held twice, %d frames of connections; want %d and %d", copies.Stats.CaptureDups, copies.Stats.ConnAttached, len(frames), base.Stats.ConnAttached)
	}
	if len(copies.Conns) != len(base.Conns) {
		t.Fatalf("copies: %d connections, want %d", len(copies.Conns), len(base.Conns))
	}
	for i := range base.Conns {
		b, c := &base.Conns[i], &copies.Conns[i]
		if c.Frames != b.Frames || c.Outcome != b.Outcome || !c.TConfirm.Equal(b.TConfirm) {
			t.Errorf("copies: connection %d: %d frames, %v, confirmed %v; want %d, %v, %v", c.ID, c.Frames, c.Outcome, c.TConfirm, b.Frames, b.Outcome, b.TConfirm)
		}
	}
	found := false
	for _, f := range copies.Findings() {
		found = found || f.ID.String() == "roce.capture.duplicate"
	}
	if !found {
		t.Error("copies: no roce.capture.duplicate finding")
	}
	if s := run(twice(2*time.Millisecond, nil)); s.Stats.CaptureDups != len(frames) || s.Stats.CaptureDupsApart != len(frames) || len(s.Conns) != len(base.Conns) {
		t.Errorf("every segment again 2 ms later: %d taken for the capture's copies (%d by the time apart), %d connections; want %d, %d, %d",
			s.Stats.CaptureDups, s.Stats.CaptureDupsApart, len(s.Conns), len(frames), len(frames), len(base.Conns))
	}
	// Damage the capture can tell needs checksums: loopback's are left
	// to the offload. pingpong.pcap's are filled.
	frames, lt = testutil.ReadFrames(t, "../samples/pingpong.pcap")
	base = run(frames)
	carrying, clc := 0, 0
	damaged := run(twice(3*time.Microsecond, func(_ int, d []byte) {
		if len(d) > 200 && d[14+9] == 6 { // the CLC messages: the Accept's trailer
			if clc++; clc == 2 {
				d[len(d)-1] ^= 0x20
				carrying++
			}
		}
	}))
	if want := base.Stats.Frames - base.Stats.Other - carrying; carrying == 0 || damaged.Stats.CaptureDups != want {
		t.Errorf("first copies with a payload byte damaged: %d held twice, want %d (not the %d damaged)", damaged.Stats.CaptureDups, want, carrying)
	}
	for i := range base.Conns {
		b, c := &base.Conns[i], &damaged.Conns[i]
		if c.Outcome != b.Outcome || !c.TConfirm.Equal(b.TConfirm) || c.Flow[DirC2S].Bytes != b.Flow[DirC2S].Bytes {
			t.Errorf("first copies damaged: connection %d: %v, confirmed %v, %d bytes; want %v, %v, %d", c.ID, c.Outcome, c.TConfirm, c.Flow[DirC2S].Bytes, b.Outcome, b.TConfirm, b.Flow[DirC2S].Bytes)
		}
	}
}

// TestDamagedHandshakeSentAgain: pingpong.pcap's CLC messages, each
// shown first with its last byte damaged (its TCP checksum fails, its
// message does not decode) and then whole, 3 us later (a mirror's copy)
// or 250 ms later (the sender's retransmission after the receiver dropped
// it). The receiver read the whole ones: whichever messages were damaged,
// the handshake is the capture's as it was, SMC-R, each step taken when
// its whole message came (the reassembly decodes a whole copy of a
// damaged segment, capture's clcAssembler.wholeAgain).
func TestDamagedHandshakeSentAgain(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	tr := New(Options{})
	eachRaw(t, "whole", lt, frames, tr.Feed)
	base := tr.Snapshot()
	for _, gap := range []time.Duration{3 * time.Microsecond, 250 * time.Millisecond} {
		for damaged := 1; damaged < 8; damaged++ { // Proposal, Accept, Confirm: a bit each
			var out []rawFrame
			clc := 0
			for _, f := range frames {
				o := rawFrame{CI: f.CI, Data: append([]byte{}, f.Data...)}
				again := f
				again.CI.Timestamp = again.CI.Timestamp.Add(gap)
				if len(o.Data) > 200 && o.Data[14+9] == 6 {
					if damaged&(1<<clc) != 0 {
						o.Data[len(o.Data)-1] ^= 0x20
					}
					clc++
				}
				out = append(out, o, again)
			}
			tr := New(Options{})
			eachRaw(t, "damaged", lt, out, tr.Feed)
			tr.EndCapture(time.Time{})
			s := tr.Snapshot()
			b := &base.Conns[0]
			// Each step is the whole message's: its time moves with it.
			at := func(bit int, t time.Time) time.Time {
				if damaged&bit != 0 {
					return t.Add(gap)
				}
				return t
			}
			c := &s.Conns[0]
			if len(s.Conns) != 1 || c.Outcome != b.Outcome || !c.TConfirm.Equal(at(4, b.TConfirm)) || !c.TAccept.Equal(at(2, b.TAccept)) ||
				!c.TProposal.Equal(at(1, b.TProposal)) {
				t.Errorf("damaged %03b, whole %v later: %d connections, the first %v, proposed %v, accepted %v, confirmed %v; want 1, %v, %v, %v, %v",
					damaged, gap, len(s.Conns), c.Outcome, c.TProposal, c.TAccept, c.TConfirm, b.Outcome, at(1, b.TProposal), at(2, b.TAccept), at(4, b.TConfirm))
			}
		}
	}
}
