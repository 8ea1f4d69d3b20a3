package track

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
)

// TestRWWIConnection: in a write-with-immediate link group (testdata/anck
// rwwi.pcap: no CDC SEND at all) the connection is the one its handshake
// made, its bytes are the cursors the immediates move (the writes' lengths,
// wrapping a 16 KiB RMBE twice), equal to the data the writes carried, and
// the CTRL immediates close it; a write split into First and Last with
// Immediate counts its whole length once.
func TestRWWIConnection(t *testing.T) {
	for name, path := range map[string]string{
		"rwwi":        crafted.ANCKVectors[1].Build(t),
		"multipacket": crafted.RWWIMultiPacket(t),
	} {
		t.Run(name, func(t *testing.T) {
			lastImm := 0
			eachFrame(t, path, func(f *capture.Frame) {
				if f.RWWI != nil && f.BTH.Opcode.Op() == decode.OpWriteLastImm {
					lastImm++
				}
			})
			if want := map[string]int{"rwwi": 0, "multipacket": 1}[name]; lastImm != want {
				t.Fatalf("%d RWWI WRITE Last with Immediate, want %d", lastImm, want)
			}
			s := feedFile(t, path, Options{}, 0).Snapshot()
			if len(s.Conns) != 1 {
				t.Fatalf("%d connections, want 1", len(s.Conns))
			}
			c := &s.Conns[0]
			for d, want := range []uint64{32664, 32640} {
				f := &c.Flow[d]
				if f.Bytes != want || f.WriteBytes != want || f.CursorErrors != 0 || f.SeqGaps != 0 {
					t.Errorf("%s: bytes %d writes %d cursor errors %d seq gaps %d, want %d bytes", Dir(d), f.Bytes, f.WriteBytes, f.CursorErrors, f.SeqGaps, want)
				}
				if f.Prod.Wrap != 1 {
					t.Errorf("%s: producer cursor %d/%d, want wrap 1 (32 KiB through a 16 KiB RMBE)", Dir(d), f.Prod.Wrap, f.Prod.Count)
				}
				if !f.Closed {
					t.Errorf("%s: not closed by its CTRL immediate", Dir(d))
				}
			}
			g := &s.LinkGroups[0]
			if !g.ANCK || !g.RWWI || !g.Credits {
				t.Errorf("link group ANCK %v RWWI %v credits %v", g.ANCK, g.RWWI, g.Credits)
			}
			if s.Stats.Unattached != 0 {
				t.Errorf("%d frames unattached", s.Stats.Unattached)
			}
		})
	}
}

// TestDumpDeviceCDCMissed: dump-device.pcap without one of the server's
// dumped CDCs, its first (frame 12, seq 1) or a later one (frame 18, seq
// 3). The dump device copies every CDC its host sends, a sender skips no
// sequence number, and a connection known from its handshake numbers its
// CDCs from 1: the missing number is the capture's (roce.rc.not_captured
// on the connection), not smc.cdc.seq_gap, and the CDC is counted as not
// captured.
func TestDumpDeviceCDCMissed(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/dump-device.pcap")
	for _, c := range []struct{ frame, seq int }{{12, 1}, {18, 3}} {
		i := c.frame - 1
		eachRaw(t, "dump", lt, frames[i:i+1], func(f *capture.Frame) {
			if f.CDC == nil || int(f.CDC.Seq) != c.seq {
				t.Fatalf("frame %d is not the server's CDC seq %d", c.frame, c.seq)
			}
		})
		tr := New(Options{})
		eachRaw(t, "dump", lt, append(frames[:i:i], frames[i+1:]...), tr.Feed)
		s := tr.Snapshot()
		if len(s.Conns) != 1 || s.Conns[0].Flow[DirS2C].SeqNotCaptured != 1 || s.Conns[0].Flow[DirS2C].SeqGaps != 0 {
			t.Fatalf("without frame %d: connections %+v: want one, its S>C CDC sequence number %d not captured", c.frame, s.Conns, c.seq)
		}
		var ids []expert.ID
		for _, f := range s.Findings() {
			ids = append(ids, f.ID)
		}
		if !slices.Contains(ids, expert.NotCaptured) || slices.Contains(ids, expert.SeqGap) {
			t.Errorf("without frame %d: findings %v: want roce.rc.not_captured, no smc.cdc.seq_gap", c.frame, ids)
		}
	}
}

// TestRWWIOneWay: each side of rwwi.pcap alone, as a capture of one host's
// egress holds it. The token a side's immediates carry is the receiver's,
// announced in the other side's handshake message: the side's first write
// with immediate is taken for the one connection on the link waiting for
// its first message of that direction (claimFirst), and every write of the
// side is then followed, each frame attached as it goes by.
func TestRWWIOneWay(t *testing.T) {
	path := crafted.ANCKVectors[1].Build(t)
	frames := readRawFrames(t, path)
	for side, d := range map[int]Dir{1: DirS2C, 2: DirC2S} {
		vf := mutate.Mutation{Kind: mutate.OneWay, N: side}.Apply(frames)
		if len(vf) == 0 || len(vf) == len(frames) {
			t.Fatalf("side %d: %d of %d frames", side, len(vf), len(frames))
		}
		tr := New(Options{})
		flagged := 0
		var rec decode.Record
		eachRaw(t, path, layers.LinkTypeEthernet, vf, func(f *capture.Frame) {
			tr.Feed(f)
			rec.Reset()
			tr.AppendFields(f, &rec)
			if f.RWWI != nil && rec.Has(fUnattached) {
				flagged++
			}
		})
		s := tr.Snapshot()
		if len(s.Conns) != 1 {
			t.Fatalf("side %d: %d connections, want 1", side, len(s.Conns))
		}
		want := map[Dir]uint64{DirC2S: 32664, DirS2C: 32640}[d]
		if f := &s.Conns[0].Flow[d]; f.Bytes != want || f.WriteBytes != want || f.CDCs == 0 {
			t.Errorf("side %d, %s: bytes %d writes %d CDCs %d, want %d bytes", side, d, f.Bytes, f.WriteBytes, f.CDCs, want)
		}
		if flagged != 0 {
			t.Errorf("side %d: %d writes with immediate flagged smc.track.unattached", side, flagged)
		}
	}
}

// TestDumpDeviceOneSide: dump-device.pcap holding one host's frames only,
// or its TCP both ways and one host's dumps, as a capture of one eRDMA
// host's dump device and its TCP does. The dump
// device copies the CDCs its own host sends: the other host's direction is
// not shown ("-"), not silent; and a host's CDCs, sent only on a connection
// its handshake set up, make the connection SMC-R although the capture
// lacks the other host's CLC message (the server's side misses the
// Confirm).
func TestDumpDeviceOneSide(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/dump-device.pcap")
	whole := New(Options{})
	eachRaw(t, "dump", lt, frames, whole.Feed)
	ws := whole.Snapshot()
	if len(ws.Conns) != 1 {
		t.Fatalf("whole capture: %d connections, want 1", len(ws.Conns))
	}
	for side, d := range map[int]Dir{1: DirS2C, 2: DirC2S} {
		tr := New(Options{})
		eachRaw(t, "dump", lt, mutate.Mutation{Kind: mutate.OneWay, N: side}.Apply(frames), tr.Feed)
		s := tr.Snapshot()
		if len(s.Conns) != 1 {
			t.Fatalf("side %d: %d connections, want 1", side, len(s.Conns))
		}
		c, w := &s.Conns[0], &ws.Conns[0]
		if c.Outcome != OutcomeSMCR {
			t.Errorf("side %d: outcome %v, want SMC-R", side, c.Outcome)
		}
		if f, wf := &c.Flow[d], &w.Flow[d]; f.CDCs != wf.CDCs || f.Bytes != wf.Bytes || f.NotShown {
			t.Errorf("side %d, %s: %d CDCs %d bytes (not shown %v), the whole capture's %d and %d", side, d, f.CDCs, f.Bytes, f.NotShown, wf.CDCs, wf.Bytes)
		}
		if !c.Flow[d.Reverse()].NotShown {
			t.Errorf("side %d: the other host's direction %s is not marked not shown", side, d.Reverse())
		}
	}
	for d := range ws.Conns[0].Flow {
		if ws.Conns[0].Flow[d].NotShown {
			t.Errorf("whole capture: %s not shown", Dir(d))
		}
	}
	// A capture on one host sees its TCP both ways (the handshake whole,
	// the link it names never on the wire) and its own dump device.
	for host, d := range map[byte]Dir{1: DirS2C, 2: DirC2S} {
		var vf []rawFrame
		for _, f := range frames {
			// Ethernet, IPv4: the protocol at byte 23, the source's last byte at 29.
			if len(f.Data) < 34 || f.Data[23] != 17 || f.Data[29] == host {
				vf = append(vf, f)
			}
		}
		tr := New(Options{})
		eachRaw(t, "dump", lt, vf, tr.Feed)
		s := tr.Snapshot()
		if len(s.Conns) != 1 || s.Conns[0].Outcome != OutcomeSMCR {
			t.Fatalf("host 10.10.0.%d: connections %+v, want one SMC-R", host, s.Conns)
		}
		c := &s.Conns[0]
		if f := &c.Flow[d]; f.CDCs != ws.Conns[0].Flow[d].CDCs || f.NotShown {
			t.Errorf("host 10.10.0.%d, %s: %d CDCs (not shown %v), the whole capture's %d", host, d, f.CDCs, f.NotShown, ws.Conns[0].Flow[d].CDCs)
		}
		if !c.Flow[d.Reverse()].NotShown {
			t.Errorf("host 10.10.0.%d: the other host's direction %s is not marked not shown", host, d.Reverse())
		}
		// Without the client's Confirm, or with it damaged (its TCP
		// checksum wrong), the handshake is not followed to its end: the
		// host's dumped CDCs make it SMC-R, and the other host's
		// direction is still not shown.
		var noConfirm, badConfirm []rawFrame
		for _, f := range vf {
			if p := tcpPayload(f.Data); len(p) < 5 || p[0] != 0xE2 || p[4] != 3 {
				noConfirm = append(noConfirm, f)
				badConfirm = append(badConfirm, f)
				continue
			}
			f.Data = slices.Clone(f.Data)
			f.Data[len(f.Data)-len(tcpPayload(f.Data))+40] ^= 0x10
			badConfirm = append(badConfirm, f)
		}
		if len(noConfirm) != len(vf)-1 {
			t.Fatalf("host 10.10.0.%d: %d Confirms", host, len(vf)-len(noConfirm))
		}
		for what, vf := range map[string][]rawFrame{"without the Confirm": noConfirm, "with the Confirm damaged": badConfirm} {
			tr = New(Options{})
			eachRaw(t, "dump", lt, vf, tr.Feed)
			s = tr.Snapshot()
			if len(s.Conns) != 1 || !s.Conns[0].Flow[d.Reverse()].NotShown || s.Conns[0].Outcome != OutcomeSMCR {
				t.Errorf("host 10.10.0.%d %s: connections %+v, want one SMC-R, the other host's direction not shown", host, what, s.Conns)
			}
		}
	}
}

// tcpPayload is the TCP payload of an Ethernet/IPv4 frame (nil for any
// other frame).
func tcpPayload(b []byte) []byte {
	if len(b) < 34 || b[12] != 0x08 || b[13] != 0 || b[23] != 6 {
		return nil
	}
	ip := int(b[14]&0x0F) * 4
	if len(b) < 14+ip+20 {
		return nil
	}
	tcp := int(b[14+ip+12]>>4) * 4
	if len(b) < 14+ip+tcp {
		return nil
	}
	return b[14+ip+tcp:]
}

// TestDumpDeviceDamaged: dump-device.pcap with dumped CDCs damaged as a
// capture file damages them, one at a time and all together (the frames
// of crafted.DumpDamages). A dump frame carries no checksum: the CDCs
// around a damaged one show it, and the connection reads as undamaged
// (bytes, consumed, CDC sequence numbers, close), each damaged frame
// counted once as smc.dump.damaged, no abort, no not-captured CDC.
func TestDumpDeviceDamaged(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/dump-device.pcap")
	whole := New(Options{})
	eachRaw(t, "dump", lt, frames, whole.Feed)
	want := whole.Snapshot().Conns[0]
	sets := [][]crafted.DumpDamage{crafted.DumpDamages}
	for _, dm := range crafted.DumpDamages {
		sets = append(sets, []crafted.DumpDamage{dm})
	}
	// The server's first CDC: nothing before it shows it wrong, the two
	// after it agree with each other and not with it.
	sets = append(sets, []crafted.DumpDamage{{Frame: 12, What: "the server's first CDC's consumer wrap 9472 ahead", Off: 18, Xor: 0x25}})
	for _, set := range sets {
		var whats []string
		for _, dm := range set {
			whats = append(whats, fmt.Sprintf("frame %d %s", dm.Frame, dm.What))
		}
		t.Run(strings.Join(whats, ", "), func(t *testing.T) {
			fs := make([]testutil.Packet, len(frames))
			for i, f := range frames {
				fs[i] = f
				fs[i].Data = slices.Clone(f.Data)
			}
			tr := New(Options{})
			eachRaw(t, "dump", lt, crafted.DumpDamaged(t, fs, set...), tr.Feed)
			s := tr.Snapshot()
			if len(s.Conns) != 1 {
				t.Fatalf("%d connections, want 1", len(s.Conns))
			}
			c := s.Conns[0]
			damaged := 0
			for d := DirC2S; d <= DirS2C; d++ {
				f, w := &c.Flow[d], &want.Flow[d]
				damaged += f.DumpDamaged
				if f.Bytes != w.Bytes || f.Consumed != w.Consumed || f.CDCs != w.CDCs || f.LastSeq != w.LastSeq ||
					f.Closed != w.Closed || f.Aborted || f.SeqNotCaptured != 0 || f.SeqDup != 0 || f.CursorErrors != 0 || f.PastRMBE != 0 {
					t.Errorf("%s: bytes %d consumed %d CDCs %d last seq %d closed %v aborted %v not captured %d dup %d cursor errors %d past RMBE %d, want %d %d %d %d %v false 0 0 0 0",
						d, f.Bytes, f.Consumed, f.CDCs, f.LastSeq, f.Closed, f.Aborted, f.SeqNotCaptured, f.SeqDup, f.CursorErrors, f.PastRMBE,
						w.Bytes, w.Consumed, w.CDCs, w.LastSeq, w.Closed)
				}
			}
			if damaged != len(set) {
				t.Errorf("%d frames counted damaged, want %d", damaged, len(set))
			}
			var frames []int
			for _, f := range s.Findings() {
				switch f.ID {
				case expert.DumpDamaged:
					frames = append(frames, f.First, f.Last)
				case expert.ConnAbort, expert.NotCaptured, expert.SeqDup, expert.CursorBackwards, expert.CursorPastRMBE:
					t.Errorf("finding %s, from a damaged copy", f.ID)
				}
			}
			if len(frames) != 2 || frames[0] != set[0].Frame || frames[1] != set[len(set)-1].Frame {
				t.Errorf("smc.dump.damaged on frames %v, want %d..%d", frames, set[0].Frame, set[len(set)-1].Frame)
			}
		})
	}
}

// TestDumpFlagsDamaged: dump-device.pcap with a dumped CDC's producer
// flags damaged into what no sender sends (flagsDamaged): urgent data
// present without pending (frame 130), write-blocked first set on a CDC
// that writes nothing (the client's close CDC, 1540). Each is a damaged
// copy (smc.dump.damaged), not urgent data or a blocked writer.
func TestDumpFlagsDamaged(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/dump-device.pcap")
	for _, dm := range []crafted.DumpDamage{
		{Frame: 130, What: "urgent data present, not pending", Off: 24, Xor: byte(decode.CDCUrgentPresent)},
		{Frame: 1540, What: "write-blocked on the close CDC", Off: 24, Xor: byte(decode.CDCWriteBlocked)},
		{Frame: 130, What: "urgent pending and present with a reserved producer flag", Off: 24,
			Xor: byte(decode.CDCUrgentPending|decode.CDCUrgentPresent) | 0x01},
		{Frame: 130, What: "a reserved connection state flag", Off: 25, Xor: 0x04},
		{Frame: 130, What: "urgent pending with failover validation on a new sequence number", Off: 24,
			Xor: byte(decode.CDCUrgentPending | decode.CDCFailoverValidation)},
	} {
		fs := make([]testutil.Packet, len(frames))
		for i, f := range frames {
			fs[i] = f
			fs[i].Data = slices.Clone(f.Data)
		}
		tr := New(Options{})
		eachRaw(t, "dump", lt, crafted.DumpDamaged(t, fs, dm), tr.Feed)
		s := tr.Snapshot()
		var ids []string
		for _, f := range s.Findings() {
			ids = append(ids, f.ID.String())
		}
		if !slices.Contains(ids, expert.DumpDamaged.String()) || slices.Contains(ids, expert.Urgent.String()) || slices.Contains(ids, expert.WriteBlocked.String()) {
			t.Errorf("frame %d %s: findings %v, want smc.dump.damaged alone", dm.Frame, dm.What, ids)
		}
	}
}

// TestDumpDevicesMerged: the dump devices of both hosts merged, the second
// host's clock 3 ms ahead. Each host's device dumps the CDCs it sends and
// the ones it takes (smc_cdc_msg_send, smc_cdc_msg_recv_action), so each
// CDC is in the capture twice, byte for byte, other CDCs between them: the
// second is the capture's copy (roce.capture.duplicate), followed once;
// not a repeated sequence number, not a damaged copy. (The data a host
// takes is dumped by it alone: the server's dumps add the client's data,
// which dump-device.pcap does not hold.)
func TestDumpDevicesMerged(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/dump-device.pcap")
	whole := New(Options{})
	eachRaw(t, "dump", lt, frames, whole.Feed)
	want := whole.Snapshot().Conns[0]
	merged := slices.Clone(frames)
	for _, f := range frames {
		if len(f.Data) > 23 && f.Data[23] == 17 && f.Data[14+20+8+16] == decode.CDCType { // a dumped CDC
			f.CI.Timestamp = f.CI.Timestamp.Add(3 * time.Millisecond)
			merged = append(merged, f)
		}
	}
	slices.SortStableFunc(merged, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
	tr := New(Options{})
	eachRaw(t, "dump", lt, merged, tr.Feed)
	s := tr.Snapshot()
	if len(s.Conns) != 1 {
		t.Fatalf("%d connections, want 1", len(s.Conns))
	}
	for d := DirC2S; d <= DirS2C; d++ {
		f, w := &s.Conns[0].Flow[d], &want.Flow[d]
		if f.CDCs != w.CDCs || f.Bytes != w.Bytes || f.Consumed != w.Consumed || f.SeqDup != 0 || f.DumpDamaged != 0 || f.Closed != w.Closed {
			t.Errorf("%s: CDCs %d bytes %d consumed %d seq dup %d damaged %d closed %v, want %d %d %d 0 0 %v",
				d, f.CDCs, f.Bytes, f.Consumed, f.SeqDup, f.DumpDamaged, f.Closed, w.CDCs, w.Bytes, w.Consumed, w.Closed)
		}
	}
	if got, cdcs := s.Stats.CaptureDups, want.Flow[DirC2S].CDCs+want.Flow[DirS2C].CDCs; got != cdcs || len(merged)-len(frames) != cdcs {
		t.Errorf("%d frames followed as copies, want the %d CDCs' copies (%d added)", got, cdcs, len(merged)-len(frames))
	}
}

// TestDumpDeviceLateStart: dump-device.pcap begun after the handshake (at
// frame 9, its first dumped CDC, and at frame 800). The dump frames name
// the connection by its 4-tuple: it is joined mid-stream from them (who is
// client not known) at the first CDC that follows the one before it of
// its direction, each direction's first held until then (unattached: a
// damaged frame's 4-tuple names no connection), every CDC after those
// counted, its bytes from each direction's first CDC on, both closes;
// nothing damaged, missed or repeated.
func TestDumpDeviceLateStart(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/dump-device.pcap")
	whole := New(Options{})
	eachRaw(t, "dump", lt, frames, whole.Feed)
	want := whole.Snapshot().Conns[0]
	for _, from := range []int{9, 800} {
		var cdcs [2]int
		var first [2]*Cursor
		made := false
		vf := frames[from-1:]
		eachRaw(t, "dump", lt, vf, func(f *capture.Frame) {
			if f.CDC == nil {
				return
			}
			d := DirC2S
			if f.UDP.SrcPort != layers.UDPPort(want.Client.Port()) {
				d = DirS2C
			}
			if made || first[d] != nil {
				made = true
				cdcs[d]++ // a direction's CDCs held before, not counted
			}
			if first[d] == nil {
				first[d] = &Cursor{Wrap: f.CDC.Prod.Wrap, Count: f.CDC.Prod.Count}
			}
		})
		tr := New(Options{})
		eachRaw(t, "dump", lt, vf, tr.Feed)
		s := tr.Snapshot()
		if len(s.Conns) != 1 || s.Conns[0].Outcome != OutcomeUnknown || !s.Conns[0].RolesUnknown {
			t.Fatalf("from frame %d: connections %+v, want one joined mid-stream, roles unknown", from, s.Conns)
		}
		c := &s.Conns[0]
		for d := DirC2S; d <= DirS2C; d++ {
			// A and B are the directions in the order the capture showed them.
			wd := d
			if c.Client != want.Client {
				wd = d.Reverse()
			}
			f, w := &c.Flow[d], &want.Flow[wd]
			if b := w.Bytes - uint64(first[wd].Count); f.CDCs != cdcs[wd] || f.Bytes != b || !f.Closed || f.DumpDamaged != 0 || f.SeqNotCaptured != 0 || f.SeqDup != 0 {
				t.Errorf("from frame %d, %s: CDCs %d bytes %d closed %v damaged %d not captured %d dup %d, want %d %d true 0 0 0",
					from, d, f.CDCs, f.Bytes, f.Closed, f.DumpDamaged, f.SeqNotCaptured, f.SeqDup, cdcs[wd], b)
			}
		}
	}
}

// TestDumpDeviceLateStartDamaged: dump-device.pcap begun at frame 9, the
// client's first dumped CDC there, its producer wrap damaged to 256. The
// next CDC of the client does not follow it, so the two make no
// connection; the one after follows the second: the connection is made
// there, and the client's bytes count from its second CDC (88 bytes) on.
func TestDumpDeviceLateStartDamaged(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/dump-device.pcap")
	whole := New(Options{})
	eachRaw(t, "dump", lt, frames, whole.Feed)
	want := whole.Snapshot().Conns[0]
	vf := slices.Clone(frames[8:])
	vf[0].Data = slices.Clone(vf[0].Data)
	crafted.DumpDamaged(t, vf, crafted.DumpDamage{Frame: 1, Off: 10, Xor: 0x01})
	tr := New(Options{})
	eachRaw(t, "dump", lt, vf, tr.Feed)
	s := tr.Snapshot()
	if len(s.Conns) != 1 || s.Conns[0].Client != want.Client {
		t.Fatalf("connections %+v, want one, A the client", s.Conns)
	}
	f, w := &s.Conns[0].Flow[DirC2S], &want.Flow[DirC2S]
	if f.Bytes != w.Bytes-88 || f.CursorErrors != 0 || f.SeqNotCaptured != 0 {
		t.Errorf("A->B: bytes %d cursor errors %d not captured %d, want %d 0 0", f.Bytes, f.CursorErrors, f.SeqNotCaptured, w.Bytes-88)
	}
}

// TestDumpDataAfterMissedCDC: dump-device.pcap without a dumped CDC that
// came between two data frames of the same bytes (a ping-pong of one
// message, the next write under a millisecond later). The second data
// frame is the next write, not the capture's copy of the first: nothing
// is followed as a copy, and the stream of that direction lacks only
// what the capture missed (no data frame was dropped: no gap at all).
func TestDumpDataAfterMissedCDC(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/dump-device.pcap")
	type dumped struct {
		cdc     bool
		port    layers.UDPPort
		payload string
		ns      int64
	}
	var ds []dumped
	eachRaw(t, "dump", lt, frames, func(f *capture.Frame) {
		if f.Dump == nil || f.UDP == nil {
			ds = append(ds, dumped{port: 0})
			return
		}
		ds = append(ds, dumped{cdc: f.CDC != nil, port: f.UDP.SrcPort, payload: string(f.Dump.Payload), ns: f.UnixNano()})
	})
	drop := -1
	for i := 1; i+1 < len(ds) && drop < 0; i++ {
		if !ds[i].cdc || ds[i].port == 0 {
			continue
		}
		prev, next := -1, -1
		for j := i - 1; j >= 0 && prev < 0; j-- {
			if ds[j].port == ds[i].port && !ds[j].cdc {
				prev = j
			}
		}
		for j := i + 1; j < len(ds) && next < 0; j++ {
			if ds[j].port == ds[i].port {
				next = j
			}
		}
		if prev >= 0 && next >= 0 && !ds[next].cdc && ds[next].payload == ds[prev].payload && ds[next].ns-ds[prev].ns < int64(time.Millisecond) {
			drop = i
		}
	}
	if drop < 0 {
		t.Fatal("no dumped CDC between two data frames of the same bytes: the test shows nothing")
	}
	vf := append(slices.Clone(frames[:drop]), frames[drop+1:]...)
	rec := newStreamRec()
	tr := New(Options{Stream: rec})
	eachRaw(t, "dump", lt, vf, tr.Feed)
	s := tr.Snapshot()
	if s.Stats.CaptureDups != 0 {
		t.Errorf("%d frames followed as copies, want none", s.Stats.CaptureDups)
	}
	for k, st := range rec.streams {
		for _, g := range st.gaps {
			if g.Cause == GapDumpMissed {
				t.Errorf("conn %d dir %d: a gap of %d bytes %q at %d", k[0], k[1], g.Gap, g.Cause, g.Offset)
			}
		}
	}
}

// TestDumpIdenticalPieces: dump-device.pcap with the first data frame's
// 64 bytes dumped as two pieces of 32 zeros (smc_dump_raw_data splits a
// CDC's data at SMC_DUMP_MAX_DATA_LEN; a transfer of zeros makes the
// pieces alike), then that capture with every frame twice (tcpdump -i any
// of the dump device and the interface, each copy after its original's
// CDC). The second piece is no copy: the CDC after them says 64 bytes,
// and the stream holds them all; the copies of the doubled capture are
// copies still, its stream and counts the capture's once.
func TestDumpIdenticalPieces(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/dump-device.pcap")
	var out []rawFrame
	split := -1
	eachRaw(t, "dump", lt, frames, func(f *capture.Frame) {
		i := f.Number - 1
		if split >= 0 || f.Dump == nil || f.CDC != nil || len(f.Dump.Payload) != 64 {
			out = append(out, frames[i])
			return
		}
		split = i
		// The frame's headers up to its dump header (16 bytes), the
		// lengths made those of 32 bytes of data.
		head := len(frames[i].Data) - 64
		p := append(slices.Clone(frames[i].Data[:head]), make([]byte, 32)...)
		binary.BigEndian.PutUint16(p[16:], uint16(len(p)-14))    // IPv4 total length
		binary.BigEndian.PutUint16(p[38:], uint16(len(p)-34))    // UDP length
		binary.BigEndian.PutUint16(p[head-16+8:], uint16(32+16)) // dump header's length
		piece := frames[i]
		piece.Data, piece.CI.CaptureLength, piece.CI.Length = p, len(p), len(p)
		out = append(out, piece, piece)
	})
	if split < 0 {
		t.Fatal("no data frame of 64 bytes: the test shows nothing")
	}
	var single *streamRec
	var singleFrames int
	for _, double := range []bool{false, true} {
		in := out
		if double {
			// In time order, as mergecap of the two captures puts them:
			// frames of one time (a CDC's data and the CDC) before the
			// copies 2 us later.
			in = slices.Clone(out)
			for _, p := range out {
				cp := p
				cp.CI.Timestamp = p.CI.Timestamp.Add(2 * time.Microsecond)
				in = append(in, cp)
			}
			slices.SortStableFunc(in, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
		}
		rec := newStreamRec()
		tr := New(Options{Stream: rec})
		eachRaw(t, "pieces", lt, in, tr.Feed)
		s := tr.Snapshot()
		if want := len(in) - len(out); s.Stats.CaptureDups != want {
			t.Errorf("doubled %v: %d frames followed as copies, want %d", double, s.Stats.CaptureDups, want)
		}
		key := [2]int{s.Conns[0].ID, int(DirS2C)}
		st := rec.streams[key]
		if st == nil || len(st.data) < 64 || !bytes.Equal(st.data[:64], make([]byte, 64)) {
			t.Fatalf("doubled %v: the server's stream does not start with the 64 zeros dumped", double)
		}
		for _, g := range st.gaps {
			if g.Cause == GapDumpMissed {
				t.Errorf("doubled %v: a gap of %d bytes %q at %d", double, g.Gap, g.Cause, g.Offset)
			}
		}
		if !double {
			single, singleFrames = rec, s.Conns[0].Frames
			continue
		}
		// Each data frame's copy comes after its CDC: the copies of the
		// pieces a CDC took are copies too, not the next CDC's data.
		if !bytes.Equal(st.data, single.streams[key].data) || s.Conns[0].Frames != singleFrames {
			t.Errorf("doubled: %d stream bytes and %d frames, the capture once %d and %d", len(st.data), s.Conns[0].Frames, len(single.streams[key].data), singleFrames)
		}
	}
}

// TestCreditsCutCopyFirst: handshake-credits.pcap with a copy of each
// frame cut 20 us before it, as a second interface with a shorter snap
// length shows it: to 60 bytes (of a RoCE frame the BTH, none of the CDC
// or LLC message; of a SYN its options), or to 80 (of a CDC its cursors,
// not its credits byte; of a CLC message its header). A SEND's credit is
// spent with the cut copy; what its message gives back comes with the
// whole frame, and the handshake's vendor options (the Proposal's, the
// SYN-ACK's SMCO) with its whole segments: the credits of every link are
// the whole capture's.
func TestCreditsCutCopyFirst(t *testing.T) {
	all, _ := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/handshake-credits.pcap")
	whole, _ := feedRaw(t, all)
	for _, cut := range []int{60, 80} {
		frames := mutate.CutCopiesFirst(all, cut)
		s, _ := feedRaw(t, frames)
		if len(s.Links) != len(whole.Links) {
			t.Fatalf("cut to %d: %d links, the whole capture %d", cut, len(s.Links), len(whole.Links))
		}
		known := false
		for i := range s.Links {
			for d := range 2 {
				got, want := s.Links[i].Credits[d], whole.Links[i].Credits[d]
				known = known || want.Known
				if got.Known != want.Known || got.Now != want.Now || got.Returned != want.Returned || got.Spent != want.Spent {
					t.Errorf("cut to %d: link %d dir %d: credits %+v, the whole capture %+v", cut, i, d, got, want)
				}
			}
		}
		if !known {
			t.Fatal("no link counts credits: the test shows nothing")
		}
	}
}

// TestCutFirstPair: once a cut copy came before its packet whole, the
// cut frames wait for theirs (cutWirePath); the pair that teaches it is
// followed from the cut copy, and its whole copy gives what the cut left
// out. handshake-credits.pcap with cut copies 20 us ahead of only some
// frames, so that the first pair is: the first CDC cut inside its credits
// byte (80 bytes: the credits are the whole capture's), the first WRITE
// (80 bytes: the stream is the whole capture's), or the first
// retransmitted DELETE_LINK (60 bytes, its BTH only: smc.llc.retransmitted
// counts it as in the whole capture).
func TestCutFirstPair(t *testing.T) {
	all, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/handshake-credits.pcap")
	type kind struct{ cdc, write, resentLLC bool }
	kinds := make([]kind, len(all))
	seen := map[uint32]bool{}
	eachRaw(t, "kinds", lt, all, func(f *capture.Frame) {
		k := &kinds[f.Number-1]
		if b := f.BTH; b != nil {
			k.cdc = f.CDC != nil
			k.write = b.Opcode == decode.OpWriteOnly
			key := b.DestQP<<24 | b.PSN
			k.resentLLC = f.LLC != nil && seen[key]
			seen[key] = true
		}
	})
	run := func(frames []rawFrame) (Snapshot, *streamRec) {
		rec := newStreamRec()
		tr := New(Options{Stream: rec, Unshared: true})
		eachRaw(t, "pair", lt, frames, tr.Feed)
		tr.EndCapture(time.Time{})
		return tr.Snapshot(), rec
	}
	whole, wholeRec := run(all)
	for _, c := range []struct {
		name string
		cut  int
		pick func(kind) bool
	}{
		{"CDCs", 80, func(k kind) bool { return k.cdc }},
		{"WRITEs", 80, func(k kind) bool { return k.write }},
		{"resent LLC requests", 60, func(k kind) bool { return k.resentLLC }},
	} {
		var frames []rawFrame
		for i, p := range all {
			if c.pick(kinds[i]) {
				frames = append(frames, mutate.CutCopiesFirst([]rawFrame{p}, c.cut)...)
				continue
			}
			frames = append(frames, p)
		}
		if len(frames) == len(all) {
			t.Fatalf("%s: no frame picked: the test shows nothing", c.name)
		}
		s, rec := run(frames)
		for i := range whole.Links {
			for d := range 2 {
				if got, want := s.Links[i].Credits[d], whole.Links[i].Credits[d]; got.Known != want.Known || got.Now != want.Now || got.Returned != want.Returned {
					t.Errorf("%s first: link %d dir %d credits %+v, the whole capture %+v", c.name, i, d, got, want)
				}
			}
		}
		for k, w := range wholeRec.streams {
			if got := rec.streams[k]; got == nil || !bytes.Equal(got.data, w.data) || len(got.gaps) != len(w.gaps) {
				t.Errorf("%s first: conn %d dir %d stream unlike the whole capture's", c.name, k[0], k[1])
			}
		}
		var found, want []string
		for _, f := range s.Findings() {
			if f.ID != expert.CaptureDuplicate {
				found = append(found, fmt.Sprintf("%v x%d", f.ID, f.Count))
			}
		}
		for _, f := range whole.Findings() {
			want = append(want, fmt.Sprintf("%v x%d", f.ID, f.Count))
		}
		slices.Sort(found)
		slices.Sort(want)
		if !slices.Equal(found, want) {
			t.Errorf("%s first: findings %v, the whole capture %v", c.name, found, want)
		}
	}
}
