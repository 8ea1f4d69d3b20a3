package track

import (
	"bytes"
	"slices"
	"testing"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
)

// fillAA overwrites d from offset off on with 0xaa, as editcap -E's
// fill does: whatever headers were there are past reading.
func fillAA(d []byte, off int) {
	for i := off; i < len(d); i++ {
		d[i] = 0xaa
	}
}

// feedDamaged runs capture name through a tracker with damage done to a
// copy of its frames (each frame's bytes its own).
func feedDamaged(t *testing.T, name string, damage func(fs []rawFrame) []rawFrame) (Snapshot, []string) {
	t.Helper()
	fs := readRawFrames(t, name)
	for i := range fs {
		fs[i].Data = bytes.Clone(fs[i].Data)
	}
	return feedRaw(t, damage(fs))
}

// findingOn reports whether finding id is raised on frame n (as its
// first frame or its last) of the snapshot's findings.
func findingOn(s *Snapshot, id expert.ID, n int) bool {
	for _, f := range s.Findings() {
		if f.ID == id && (f.First == n || f.Last == n) {
			return true
		}
	}
	return false
}

// TestUnreadableFrames: bytes or request PSNs a peer acknowledged whose
// frames the capture holds damaged past reading are held damaged
// (smc.capture.unreadable, Flow.TCPUnreadable, RC.Unreadable), not
// missed (roce.rc.not_captured); the same frames left out of the capture
// are missed; a request whose opcode alone was damaged is read as sent.
func TestUnreadableFrames(t *testing.T) {
	const fallbackData = 21 // index of decline-nordma.pcap's frame 22: C>S 64 bytes after the Decline
	const cdc = 26          // index of pingpong.pcap's frame 27: CDC seq 2, C->S
	for _, v := range []struct {
		name, capture string
		damage        func(fs []rawFrame) []rawFrame
		frame         int    // the frame damaged (1-based)
		unreadBytes   uint64 // C>S TCP bytes held past reading
		unreadPSNs    int    // C->S request PSNs held past reading
		notCaptured   bool   // roce.rc.not_captured raised
		copyDamaged   bool   // roce.capture.damaged raised
		asSent        bool   // and the request's content followed as sent
	}{
		{"fallback data filled from its EtherType", "../samples/decline-nordma.pcap", func(fs []rawFrame) []rawFrame {
			fillAA(fs[fallbackData].Data, 12)
			return fs
		}, fallbackData + 1, 64, 0, false, false, false},
		{"fallback data filled from its IPv4 addresses", "../samples/decline-nordma.pcap", func(fs []rawFrame) []rawFrame {
			fillAA(fs[fallbackData].Data, 14+13)
			return fs
		}, fallbackData + 1, 64, 0, false, false, false},
		{"fallback data missed", "../samples/decline-nordma.pcap", func(fs []rawFrame) []rawFrame {
			return slices.Delete(fs, fallbackData, fallbackData+1)
		}, 0, 0, 0, true, false, false},
		{"CDC filled from its EtherType", crafted.Pingpong(t), func(fs []rawFrame) []rawFrame {
			fillAA(fs[cdc].Data, 12)
			return fs
		}, cdc + 1, 0, 1, false, false, false},
		{"CDC's UDP port and ICRC damaged", crafted.Pingpong(t), func(fs []rawFrame) []rawFrame {
			d := fs[cdc].Data
			d[14+20+2] ^= 0x40  // the destination port's high byte: 0x52b7, one byte off 4791
			d[len(d)-1] ^= 0x01 // and the ICRC: no one byte explains it
			return fs
		}, cdc + 1, 0, 1, false, false, false},
		{"WRITE's data and the CDC's PSN damaged", crafted.Pingpong(t), func(fs []rawFrame) []rawFrame {
			fs[cdc-1].Data[len(fs[cdc-1].Data)-8] ^= 0x10 // a byte of the WRITE's data: its ICRC names it
			fs[cdc].Data[14+20+8+9] ^= 0x37               // two bytes of the CDC's PSN: no one byte explains its ICRC
			fs[cdc].Data[14+20+8+10] ^= 0x51
			return fs
		}, 0, 0, 0, false, true, false},
		{"CDC's DestQP and ICRC damaged", crafted.Pingpong(t), func(fs []rawFrame) []rawFrame {
			d := fs[cdc].Data
			d[14+20+8+5] ^= 0x5a // no link's queue pair, its addresses and PSN the link's next
			d[len(d)-2] ^= 0x01  // and the ICRC: no one byte explains it
			return fs
		}, 0, 0, 0, false, true, false},
		{"CDC missed", crafted.Pingpong(t), func(fs []rawFrame) []rawFrame {
			return slices.Delete(fs, cdc, cdc+1)
		}, 0, 0, 0, true, false, false},
		{"CDC's opcode damaged", crafted.Pingpong(t), func(fs []rawFrame) []rawFrame {
			fs[cdc].Data[14+20+8] = 0x24 // UC SEND Only for RC SEND Only: the ICRC names the byte
			return fs
		}, cdc + 1, 0, 0, false, true, true},
		{"WRITE's opcode damaged", crafted.Pingpong(t), func(fs []rawFrame) []rawFrame {
			fs[cdc-1].Data[14+20+8] = 0x0b // RDMA WRITE Only with Immediate for RDMA WRITE Only
			return fs
		}, cdc, 0, 0, false, true, true},
	} {
		t.Run(v.name, func(t *testing.T) {
			base, _ := feedRaw(t, readRawFrames(t, v.capture))
			s, found := feedDamaged(t, v.capture, v.damage)
			if len(s.Conns) != len(base.Conns) {
				t.Fatalf("%d connections, want %d", len(s.Conns), len(base.Conns))
			}
			c, w := &s.Conns[0], &base.Conns[0]
			if c.Outcome != w.Outcome || ConnDetail(c) != ConnDetail(w) || CloseInfo(c) != CloseInfo(w) {
				t.Errorf("%v %q, closed %q; want %v %q, closed %q (findings %v)",
					c.Outcome, ConnDetail(c), CloseInfo(c), w.Outcome, ConnDetail(w), CloseInfo(w), found)
			}
			if got := c.Flow[DirC2S].TCPUnreadable; got != v.unreadBytes {
				t.Errorf("C>S %d TCP bytes held past reading, want %d (findings %v)", got, v.unreadBytes, found)
			}
			psns := 0
			for i := range s.Links {
				psns += s.Links[i].RC[DirC2S].Unreadable + s.Links[i].RC[DirS2C].Unreadable
			}
			if psns != v.unreadPSNs {
				t.Errorf("%d request PSNs held past reading, want %d (findings %v)", psns, v.unreadPSNs, found)
			}
			if v.frame != 0 && !findingOn(&s, expert.CaptureUnreadable, v.frame) != (v.unreadBytes == 0 && v.unreadPSNs == 0) {
				t.Errorf("smc.capture.unreadable on frame %d: %v (findings %v)", v.frame, findingOn(&s, expert.CaptureUnreadable, v.frame), found)
			}
			if got := slices.Contains(found, expert.NotCaptured.String()); got != v.notCaptured {
				t.Errorf("roce.rc.not_captured %v, want %v (findings %v)", got, v.notCaptured, found)
			}
			if got := slices.Contains(found, expert.CaptureCopyDamaged.String()); got != v.copyDamaged {
				t.Errorf("roce.capture.damaged %v, want %v (findings %v)", got, v.copyDamaged, found)
			}
			if cf, wf := &c.Flow[DirC2S], &w.Flow[DirC2S]; v.asSent && (cf.CDCs != wf.CDCs || cf.WriteBytes != wf.WriteBytes || cf.Bytes != wf.Bytes) {
				t.Errorf("C->S %d CDCs, %d bytes written, %d bytes followed; want %d, %d, %d: the request read as sent",
					cf.CDCs, cf.WriteBytes, cf.Bytes, wf.CDCs, wf.WriteBytes, wf.Bytes)
			}
			for _, id := range []expert.ID{expert.SeqGap, expert.RCRetransmission, expert.BadICRC} {
				if slices.Contains(found, id.String()) && !slices.Contains(foundBase(t, base), id.String()) {
					t.Errorf("%s, which the whole capture does not show (findings %v)", id, found)
				}
			}
		})
	}
}

// foundBase is the names of the findings of snapshot s.
func foundBase(t *testing.T, s Snapshot) []string {
	t.Helper()
	var out []string
	for _, f := range s.Findings() {
		out = append(out, f.ID.String())
	}
	return out
}

// TestNearRoCEv2: a datagram to a port one byte off 4791 from a RoCEv2
// sender's port range is a RoCEv2 packet's with its port damaged; not
// 4791 itself, not VXLAN's or VXLAN-GPE's, not one from a lower port.
func TestNearRoCEv2(t *testing.T) {
	for _, v := range []struct {
		src, dst uint16
		want     bool
	}{
		{0xC143, 0x52b7, true},
		{0xC143, 0x12f7, true},
		{0xC143, 4791, false},
		{0xC143, 4789, false},
		{0xC143, 4790, false},
		{0xC143, 0x1300, false},
		{40000, 0x52b7, false},
	} {
		if got := nearRoCEv2(v.src, v.dst); got != v.want {
			t.Errorf("nearRoCEv2(%#x, %#x) = %v, want %v", v.src, v.dst, got, v.want)
		}
	}
}
