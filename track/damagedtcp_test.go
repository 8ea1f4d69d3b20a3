package track

import (
	"slices"
	"testing"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
)

// Frames (1-based) of decline-nordma.pcap, a fallback whose TCP carries
// the application's data after the Decline: the server's data segments
// and its FIN, each acknowledged by the client's next segment.
const (
	nordmaServerData = 17
	nordmaServerNext = 19
	nordmaServerFIN  = 75
	tcpOff           = 14 + 20 // Ethernet, IPv4 without options
)

// TestDamagedAfterHandshake: segments of a fallback's TCP after its
// handshake that the capture damaged have their checksums judged as the
// handshake's are (tcp.checksum.bad), and the bytes the peer's ACK covers
// that the capture shows only damaged (sequence numbers damaged, a header
// length damaged into the payload, a FIN's flags or sequence number) are
// damaged copies, not bytes the capture missed; sent again whole, the
// damaged one was dropped.
func TestDamagedAfterHandshake(t *testing.T) {
	clean := readRawFrames(t, testutil.Root(t)+"/testdata/reference/decline-nordma.pcap")
	base, found := feedRaw(t, clean)
	if slices.Contains(found, expert.BadTCPSum.String()) || slices.Contains(found, expert.NotCaptured.String()) {
		t.Fatalf("whole capture: findings %v", found)
	}
	seq := func(d []byte) { d[tcpOff+5] ^= 0x40 }
	for _, tc := range []struct {
		name   string
		frames []int
		damage func([]byte)
		resent bool
		want   [2]int // S>C sent again, acknowledged damaged
	}{
		{"sequence number", []int{nordmaServerData}, seq, false, [2]int{0, 1}},
		{"two sequence numbers", []int{nordmaServerData, nordmaServerNext}, seq, false, [2]int{0, 2}},
		{"data offset", []int{nordmaServerData}, func(d []byte) { d[tcpOff+12] += 0x10 }, false, [2]int{0, 1}},
		{"sequence number and data offset", []int{nordmaServerData}, func(d []byte) { seq(d); d[tcpOff+12] += 0x20 }, false, [2]int{0, 1}},
		{"sequence number and flags", []int{nordmaServerData}, func(d []byte) { seq(d); d[tcpOff+13] = 0x02 }, false, [2]int{0, 1}},
		{"FIN sequence number", []int{nordmaServerFIN}, seq, false, [2]int{0, 1}},
		{"FIN flags", []int{nordmaServerFIN}, func(d []byte) { d[tcpOff+13] = 0x02 }, false, [2]int{0, 1}},
		{"sequence number, sent again", []int{nordmaServerData}, seq, true, [2]int{1, 0}},
	} {
		fs := slices.Clone(clean)
		for _, n := range tc.frames {
			if tc.resent {
				fs = crafted.Resent(fs, n, tc.damage)
				continue
			}
			fs[n-1].Data = slices.Clone(fs[n-1].Data)
			tc.damage(fs[n-1].Data)
		}
		s, found := feedRaw(t, fs)
		if !slices.Contains(found, expert.BadTCPSum.String()) || slices.Contains(found, expert.NotCaptured.String()) {
			t.Errorf("%s: findings %v, want tcp.checksum.bad and no roce.rc.not_captured", tc.name, found)
		}
		if len(s.Conns) != 1 {
			t.Fatalf("%s: %d connections", tc.name, len(s.Conns))
		}
		c, w := s.Conns[0], base.Conns[0]
		f := c.Flow[DirS2C]
		if got := [2]int{f.SumResent, f.SumCopyDamaged}; got != tc.want {
			t.Errorf("%s: S>C sent again, acknowledged damaged %v, want %v", tc.name, got, tc.want)
		}
		if f.TCPNotCaptured != 0 || f.FINNotCaptured || c.Outcome != w.Outcome || c.Closed() != w.Closed() {
			t.Errorf("%s: not captured %d (FIN %v), outcome %v closed %v; want 0, %v %v", tc.name, f.TCPNotCaptured, f.FINNotCaptured,
				c.Outcome, c.Closed(), w.Outcome, w.Closed())
		}
	}
}

// TestDamagedGap: which bytes a peer's ACK covers past tcpNext the
// damaged copies explain: away copies by their lengths (one seen before
// tcpNext last moved does not), a copy whose flags were damage the FIN's
// sequence number, and the payload a damaged header length hid, exactly
// where a whole segment told the header's length, in 4-byte words up to
// 40 where none did.
func TestDamagedGap(t *testing.T) {
	away := func(n uint32, frame int) seqSpan { return seqSpan{seq: 1000, end: 1000 + n, away: true, frame: frame} }
	for _, tc := range []struct {
		name     string
		pend     []seqSpan
		hid      int32
		missed   uint32
		rest     uint32
		fin      bool
		copies   int
		leftPend int
	}{
		{"two away copies and a hidden 4", []seqSpan{away(64, 12), away(64, 13)}, 4, 132, 0, false, 2, 0},
		{"one of two fits", []seqSpan{away(64, 12), away(100, 13)}, 0, 70, 6, false, 1, 1},
		{"seen before tcpNext moved", []seqSpan{away(64, 9)}, 0, 64, 64, false, 0, 1},
		{"FIN flags lost", []seqSpan{{seq: 5, end: 5, away: true, frame: 12, finLost: true}}, 0, 1, 0, true, 1, 0},
		{"data and FIN flags lost", []seqSpan{{seq: 5, end: 69, away: true, frame: 12, finLost: true}}, 0, 65, 0, true, 1, 0},
		{"flags lost, data too long", []seqSpan{{seq: 5, end: 69, away: true, frame: 12, finLost: true}}, 0, 10, 10, false, 0, 1},
		{"header length unknown, 8", nil, hidUnknown, 8, 0, false, 0, 0},
		{"header length unknown, 6", nil, hidUnknown, 6, 6, false, 0, 0},
		{"header length unknown, 44", nil, hidUnknown, 44, 44, false, 0, 0},
	} {
		f := Flow{flowTCP: flowTCP{tcpNext: 500, tcpNextFrame: 10, damagedHid: tc.hid, sumPend: slices.Clone(tc.pend)}}
		rest, fin := f.damagedGap(tc.missed)
		if rest != tc.rest || fin != tc.fin || f.SumCopyDamaged != tc.copies || len(f.sumPend) != tc.leftPend {
			t.Errorf("%s: rest %d, FIN %v, %d copies settled, %d left; want %d, %v, %d, %d", tc.name,
				rest, fin, f.SumCopyDamaged, len(f.sumPend), tc.rest, tc.fin, tc.copies, tc.leftPend)
		}
	}
}
