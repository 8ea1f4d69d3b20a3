package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
)

// handshake holds the real SMC-Rv2 handshake of pingpong.pcap: the SYN and
// SYN-ACK (frames 5, 6), the client's stream (Proposal, frame 8, then
// Confirm, frame 12) and the server's (Accept, frame 10), plus header
// templates to build new segments around those bytes.
type handshake struct {
	syn, synack rawFrame
	c2s, s2c    []byte
	tmpl        [2]gopacket.Packet // c2s, s2c data segments
	isn         [2]uint32
	proposal    []byte
	accept      []byte
	confirm     []byte
}

func loadHandshake(t *testing.T) *handshake {
	t.Helper()
	fr := readRaw(t, pingpong)
	h := &handshake{syn: fr[4], synack: fr[5]}
	pkt := func(i int) gopacket.Packet {
		return gopacket.NewPacket(fr[i].Data, layers.LayerTypeEthernet, gopacket.Default)
	}
	tcp := func(p gopacket.Packet) *layers.TCP { return p.Layer(layers.LayerTypeTCP).(*layers.TCP) }
	h.isn[0], h.isn[1] = tcp(pkt(4)).Seq+1, tcp(pkt(5)).Seq+1
	h.tmpl[0], h.tmpl[1] = pkt(7), pkt(9)
	h.proposal = tcp(pkt(7)).Payload
	h.accept = tcp(pkt(9)).Payload
	h.confirm = tcp(pkt(11)).Payload
	if len(h.proposal) != 156 || len(h.accept) != 160 || len(h.confirm) != 180 {
		t.Fatalf("unexpected handshake sizes %d %d %d", len(h.proposal), len(h.accept), len(h.confirm))
	}
	h.c2s = append(append([]byte(nil), h.proposal...), h.confirm...)
	h.s2c = h.accept
	return h
}

// seg is one segment of a test sequence: bytes [off, off+n) of direction
// dir's stream (0 client->server, 1 server->client).
type seg struct{ dir, off, n int }

func (h *handshake) build(t *testing.T, s seg) rawFrame {
	t.Helper()
	p := h.tmpl[s.dir]
	eth := *p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip := *p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp := *p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	stream := h.c2s
	if s.dir == 1 {
		stream = h.s2c
	}
	tcp.Seq = h.isn[s.dir] + uint32(s.off)
	if err := tcp.SetNetworkLayerForChecksum(&ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, &eth, &ip, &tcp, gopacket.Payload(stream[s.off:s.off+s.n])); err != nil {
		t.Fatal(err)
	}
	d := append([]byte(nil), buf.Bytes()...)
	return rawFrame{CI: gopacket.CaptureInfo{Timestamp: p.Metadata().Timestamp, CaptureLength: len(d), Length: len(d)}, Data: d}
}

// each reads the handshake's SYN and SYN-ACK then segs, and calls fn
// with each frame after the SYNs.
func (h *handshake) each(t *testing.T, fn func(*Frame), segs ...seg) {
	t.Helper()
	frames := []rawFrame{h.syn, h.synack}
	for _, s := range segs {
		frames = append(frames, h.build(t, s))
	}
	r, err := NewReader("built", &sliceSource{frames: frames}, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		f, err := r.Next()
		if err != nil {
			return
		}
		if n >= 2 {
			fn(f)
		}
	}
}

func TestCLCResegmentation(t *testing.T) {
	h := loadHandshake(t)
	P, A, C := len(h.proposal), len(h.accept), len(h.confirm)
	// want maps a 0-based index in the sequence (after SYN, SYN-ACK when
	// present) to the messages that frame completes.
	tests := []struct {
		name  string
		noSYN bool
		segs  []seg
		want  map[int][]string
	}{
		{"as captured", false,
			[]seg{{0, 0, P}, {1, 0, A}, {0, P, C}},
			map[int][]string{0: {"P"}, 1: {"A"}, 2: {"C"}}},
		{"proposal in three segments", false,
			[]seg{{0, 0, 5}, {0, 5, 95}, {0, 100, P - 100}, {1, 0, A}, {0, P, C}},
			map[int][]string{2: {"P"}, 3: {"A"}, 4: {"C"}}},
		{"header split before the length", false,
			[]seg{{0, 0, 6}, {0, 6, P - 6}, {1, 0, A}, {0, P, C}},
			map[int][]string{1: {"P"}, 2: {"A"}, 3: {"C"}}},
		{"accept then proposal and confirm merged", false,
			[]seg{{1, 0, A}, {0, 0, P + C}},
			map[int][]string{0: {"A"}, 1: {"P", "C"}}},
		{"retransmitted proposal", false,
			[]seg{{0, 0, P}, {0, 0, P}, {1, 0, A}, {1, 0, A}, {0, P, C}},
			map[int][]string{0: {"P"}, 2: {"A"}, 4: {"C"}}},
		{"overlapping retransmission", false,
			[]seg{{0, 0, 100}, {0, 50, P - 50}, {1, 0, A}, {0, P, C}},
			map[int][]string{1: {"P"}, 2: {"A"}, 3: {"C"}}},
		{"out of order", false,
			[]seg{{0, 80, P - 80}, {0, 0, 80}, {1, 100, A - 100}, {1, 0, 100}, {0, P + 90, C - 90}, {0, P, 90}},
			map[int][]string{1: {"P"}, 3: {"A"}, 5: {"C"}}},
		{"proposal tail carries the confirm head", false,
			[]seg{{0, 0, P - 10}, {1, 0, A}, {0, P - 10, 30}, {0, P + 20, C - 20}},
			map[int][]string{1: {"A"}, 2: {"P"}, 3: {"C"}}},
		{"capture starts after the handshake", true,
			[]seg{{0, 0, P}, {1, 0, A}, {0, P, C}},
			map[int][]string{0: {"P"}, 1: {"A"}, 2: {"C"}}},
	}
	msgs := map[string][]byte{"P": h.proposal, "A": h.accept, "C": h.confirm}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var frames []rawFrame
			if !tt.noSYN {
				frames = append(frames, h.syn, h.synack)
			}
			for _, s := range tt.segs {
				frames = append(frames, h.build(t, s))
			}
			r, err := NewReader("seq", &sliceSource{frames: frames}, layers.LinkTypeEthernet)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := collect(t, r)
			if err != nil {
				t.Fatal(err)
			}
			base := 2
			if tt.noSYN {
				base = 0
			}
			for i, f := range fs[base:] {
				want := tt.want[i]
				if len(f.clc) != len(want) {
					t.Errorf("segment %d: %d CLC messages, want %v", i, len(f.clc), want)
					continue
				}
				for j, name := range want {
					if !bytes.Equal(f.clc[j], msgs[name]) {
						t.Errorf("segment %d message %d is not the real %s", i, j, name)
					}
				}
			}
			if n := len(r.clc.flows); n != 0 {
				t.Errorf("%d flows still tracked after Confirm", n)
			}
		})
	}
}

// TestCLCStreamsEnd checks which streams are followed at all, on whole
// real captures: a fallback stream is dropped at its first application
// byte, the negative controls (TCP option 254 but not SMC) are never
// followed, and nothing stays tracked at the end.
func TestCLCStreamsEnd(t *testing.T) {
	tests := []struct {
		file string
		want []string // frame:type:length of each CLC message, in order
	}{
		{pingpong, []string{"8:1:156", "10:2:160", "12:3:180"}},
		{declineRDM, []string{"8:1:156", "10:4:44"}},
		{noUEID, []string{"8:4:28"}},
		{fallback, nil},
		{negTFO, nil},
		{"../testdata/public/tcpdump_tests_negative_controls/accecn_handshake.pcap", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := Open(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var got []string
			maxFlows := 0
			for {
				f, err := r.Next()
				if err != nil {
					break
				}
				for _, m := range f.clcRaw {
					got = append(got, fmt.Sprintf("%d:%d:%d", f.Number, m[4], len(m)))
				}
				maxFlows = max(maxFlows, len(r.clc.flows))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("CLC messages %v, want %v", got, tt.want)
			}
			if len(r.clc.flows) != 0 {
				t.Errorf("%d flows tracked at the end", len(r.clc.flows))
			}
			if tt.want == nil && tt.file != fallback && maxFlows != 0 {
				t.Errorf("a non-SMC stream was tracked")
			}
		})
	}
}

// TestCLCMemoryFlat replays the fallback handshake (SMC SYN, then plain
// data) on many distinct connections: tracked state must not grow.
func TestCLCMemoryFlat(t *testing.T) {
	fr := readRaw(t, fallback)
	var frames []rawFrame
	for port := 0; port < 200; port++ {
		for _, f := range fr[:20] {
			d := append([]byte(nil), f.Data...)
			// Give every copy its own client port (TCP checksum is not checked).
			p := gopacket.NewPacket(d, layers.LayerTypeEthernet, gopacket.NoCopy)
			if tl, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP); ok {
				off := len(d) - len(tl.Contents) - len(tl.Payload)
				if tl.SrcPort == 5000 {
					d[off+2], d[off+3] = byte(port>>8)|0x80, byte(port)
				} else {
					d[off], d[off+1] = byte(port>>8)|0x80, byte(port)
				}
			}
			frames = append(frames, rawFrame{CI: f.CI, Data: d})
		}
	}
	r, err := NewReader("flat", &sliceSource{frames: frames}, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	maxFlows := 0
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		maxFlows = max(maxFlows, len(r.clc.flows))
	}
	if maxFlows > 2 {
		t.Errorf("up to %d flows tracked at once; each fallback stream should be dropped at its first data byte", maxFlows)
	}
}

// TestCLCCorruptedBytes flips each byte of the real Proposal in turn: the
// reader must not panic, and must report either a decoded message, a
// decode error, or (for a broken eyecatcher or length) no CLC at all.
func TestCLCCorruptedBytes(t *testing.T) {
	h := loadHandshake(t)
	P := len(h.proposal)
	orig := append([]byte(nil), h.c2s...)
	outcomes := map[string]int{}
	for j := 0; j < P; j++ {
		h.c2s = append(h.c2s[:0:0], orig...)
		h.c2s[j] ^= 0xff
		frames := []rawFrame{h.syn, h.synack, h.build(t, seg{0, 0, P})}
		r, err := NewReader("c", &sliceSource{frames: frames}, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		var last *Frame
		for {
			f, err := r.Next()
			if err != nil {
				break
			}
			last = f
		}
		switch {
		case len(last.CLC) == 1:
			outcomes["decoded"]++
		case len(last.CLCErr) == 1:
			outcomes["error"]++
			if !strings.Contains(last.CLCErr[0].Error(), "CLC") {
				t.Errorf("byte %d: error without layer context: %v", j, last.CLCErr[0])
			}
			if j == 5 && !errors.Is(last.CLCErr[0], decode.ErrBadLength) {
				t.Errorf("byte 5 (length high byte): %v, want a bad length", last.CLCErr[0])
			}
		default:
			outcomes["not CLC"]++
		}
	}
	// Bytes 0-3 (eyecatcher) stop the framing; a length beyond any CLC
	// (byte 5), a flipped type or version byte fail the decode; most
	// payload bytes still decode.
	if outcomes["not CLC"] != 4 || outcomes["error"] == 0 || outcomes["decoded"] == 0 {
		t.Errorf("outcomes %v", outcomes)
	}
}

// TestCLCPortReuse replays the real handshake twice on the same 4-tuple
// (a client reusing its port): both must be reassembled.
func TestCLCPortReuse(t *testing.T) {
	raw := readRaw(t, pingpong)
	frames := append(append([]rawFrame(nil), raw[4:12]...), raw[4:12]...)
	r, err := NewReader("reuse", &sliceSource{frames: frames}, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := collect(t, r)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, f := range fs {
		for _, m := range f.clc {
			got = append(got, int(m[4]))
		}
	}
	if fmt.Sprint(got) != "[1 2 3 1 2 3]" {
		t.Errorf("CLC types %v, want two handshakes", got)
	}
}

// TestCLCCutByFIN: the client sends the first 100 bytes of its real
// Proposal and then closes; the FIN frame reports the incomplete message.
func TestCLCCutByFIN(t *testing.T) {
	h := loadHandshake(t)
	part := h.build(t, seg{0, 0, 100})
	// The FIN right after those 100 bytes: same template, no payload.
	fin := h.build(t, seg{0, 100, 0})
	p := gopacket.NewPacket(fin.Data, layers.LayerTypeEthernet, gopacket.Default)
	eth := *p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip := *p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp := *p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	tcp.FIN = true
	tcp.SetNetworkLayerForChecksum(&ip)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, &eth, &ip, &tcp); err != nil {
		t.Fatal(err)
	}
	fin.Data = buf.Bytes()
	fin.CI.CaptureLength, fin.CI.Length = len(fin.Data), len(fin.Data)

	r, err := NewReader("fin", &sliceSource{frames: []rawFrame{h.syn, h.synack, part, fin}}, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		for _, e := range f.CLCErr {
			errs = append(errs, fmt.Sprintf("%d: %v", f.Number, e))
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "4: CLC: offset 100 (length): truncated: stream ended after 100 of 156 bytes") {
		t.Errorf("errors %q", errs)
	}
}

// TestCLCNotCLC: NotCLC marks the segment with which the stream reached
// application data where a CLC message would start, judged on the
// reassembled stream: a Proposal cut into segments shorter than its
// eyecatcher, or sent second half first, never sets it; data sent after
// both SYNs carried the option does, on the segment that put it in order.
func TestCLCNotCLC(t *testing.T) {
	h := loadHandshake(t)
	P := len(h.proposal)
	run := func(segs ...seg) []bool {
		var got []bool
		h.each(t, func(f *Frame) { got = append(got, f.NotCLC) }, segs...)
		return got
	}
	if got := run(seg{0, 0, 3}, seg{0, 3, 17}, seg{0, 20, P - 20}); slices.Contains(got, true) {
		t.Errorf("Proposal in 3+17+rest: NotCLC %v", got)
	}
	if got := run(seg{0, 78, P - 78}, seg{0, 0, 78}); slices.Contains(got, true) {
		t.Errorf("Proposal halves out of order: NotCLC %v", got)
	}
	h.c2s = []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := run(seg{0, 10, len(h.c2s) - 10}, seg{0, 0, 10}); !slices.Equal(got, []bool{false, true}) {
		t.Errorf("application data, out of order: NotCLC %v, want on the second segment", got)
	}
}

// TestCLCBadLengthNeedsSMCSYN: an eyecatcher followed by an impossible
// length is a malformed CLC after SYNs that carried the SMC option, but a
// stream picked up mid-connection on those 4 bytes alone is simply not
// CLC: no error.
func TestCLCBadLengthNeedsSMCSYN(t *testing.T) {
	h := loadHandshake(t)
	P := len(h.proposal)
	h.c2s = bytes.Clone(h.c2s)
	h.c2s[5], h.c2s[6] = 0xff, 0xff
	for _, withSYN := range []bool{true, false} {
		var frames []rawFrame
		if withSYN {
			frames = append(frames, h.syn, h.synack)
		}
		frames = append(frames, h.build(t, seg{0, 0, P}))
		r, err := NewReader("badlen", &sliceSource{frames: frames}, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		var last *Frame
		for {
			f, err := r.Next()
			if err != nil {
				break
			}
			last = f
		}
		gotErr := len(last.CLCErr) == 1 && errors.Is(last.CLCErr[0], decode.ErrBadLength)
		if gotErr != withSYN || len(last.CLC) != 0 {
			t.Errorf("with SMC SYNs %v: CLC errors %v, %d messages", withSYN, last.CLCErr, len(last.CLC))
		}
	}
}

// TestCLCSwallow: a Proposal whose length field claims the client's next
// message (the Confirm) and maybe more: the segment that completes the
// whole Proposal its contents make carries the length error, framing
// resumes at the Proposal's real end, and the Confirm is decoded on its
// own segment with a note that it lies inside the Proposal
// (SwallowedError, CLCInside), however the stream is cut into segments.
func TestCLCSwallow(t *testing.T) {
	h := loadHandshake(t)
	P, A, C := len(h.proposal), len(h.accept), len(h.confirm)
	orig := bytes.Clone(h.c2s)
	for _, extra := range []int{0, 100} {
		for _, tc := range []struct {
			name           string
			segs           []seg
			propAt, confAt int // segment indexes (after SYN, SYN-ACK)
		}{
			{"as captured", []seg{{0, 0, P}, {1, 0, A}, {0, P, C}}, 0, 2},
			{"proposal in three segments", []seg{{0, 0, 5}, {0, 5, 95}, {0, 100, P - 100}, {1, 0, A}, {0, P, C}}, 2, 4},
			{"proposal and confirm merged", []seg{{1, 0, A}, {0, 0, P + C}}, 1, 1},
			{"proposal tail carries the confirm head", []seg{{0, 0, P - 10}, {1, 0, A}, {0, P - 10, 30}, {0, P + 20, C - 20}}, 2, 3},
		} {
			t.Run(fmt.Sprintf("%s/+%d", tc.name, extra), func(t *testing.T) {
				h.c2s = bytes.Clone(orig)
				l := P + C + extra
				h.c2s[5], h.c2s[6] = byte(l>>8), byte(l)
				frames := []rawFrame{h.syn, h.synack}
				for _, s := range tc.segs {
					frames = append(frames, h.build(t, s))
				}
				r, err := NewReader("seq", &sliceSource{frames: frames}, layers.LinkTypeEthernet)
				if err != nil {
					t.Fatal(err)
				}
				for i := -2; ; i++ {
					f, err := r.Next()
					if err != nil {
						break
					}
					var errs []string
					for _, e := range f.CLCErr {
						errs = append(errs, e.Error())
					}
					var types []string
					for _, c := range f.CLC {
						types = append(types, c.Type.String())
					}
					var want []string
					if i == tc.propAt {
						want = append(want, fmt.Sprintf("CLC Proposal: offset 5 (length): bad length: length %d, but a whole CLC Proposal ends at %d (its trailer at %d): the length takes in the next %d bytes of the stream", l, P, P-4, l-P))
					}
					if i == tc.confAt {
						want = append(want, fmt.Sprintf("CLC Confirm: lies inside the CLC Proposal of frame %d (its bytes %d-%d of the %d its length says): a receiver reads it as part of that message", tc.propAt+3, P, P+C-1, l))
						if len(f.CLC) != len(f.CLCInside) || !slices.Contains(types, "Confirm") || !f.CLCInside[len(f.CLC)-1] {
							t.Errorf("segment %d: CLC %v inside %v, want the Confirm, inside", i, types, f.CLCInside)
						}
						var se *SwallowedError
						if !errors.As(f.CLCErr[len(f.CLCErr)-1], &se) || !errors.Is(se, ErrSwallowed) {
							t.Errorf("segment %d: no SwallowedError", i)
						}
					}
					if !slices.Equal(errs, want) {
						t.Errorf("segment %d: errors %q, want %q", i, errs, want)
					}
					if i >= 0 && slices.Contains(types, "Proposal") {
						t.Errorf("segment %d: the swallowing Proposal was decoded", i)
					}
				}
			})
		}
	}
	h.c2s = orig
}

// TestCLCAfterAckedGap: a segment whose stream's earlier bytes the capture
// missed, and the receiver's ACK of them there: no copy of them will
// come, so the segment is read at once on its own frame, as Wireshark
// reads it ("ACKed unseen segment"), not held for a gap that never fills.
// A Confirm is read at once without the ACK too: the client sends it for
// the Accept, which the server sends for the Proposal, so the bytes
// before it reached the server. Other bytes after a gap nobody
// acknowledged may still come (a retransmission): they wait.
func TestCLCAfterAckedGap(t *testing.T) {
	h := loadHandshake(t)
	P, C := len(h.proposal), len(h.confirm)
	run := func(segs ...seg) []string {
		var got []string
		h.each(t, func(f *Frame) {
			var types []string
			for _, m := range f.CLC {
				types = append(types, m.Type.String())
			}
			got = append(got, strings.Join(types, "+"))
		}, segs...)
		return got
	}
	if got := run(seg{1, 0, 0}, seg{0, P, C}); !slices.Equal(got, []string{"", "Confirm"}) {
		t.Errorf("ACK of the missed Proposal, then the Confirm: CLC per frame %q, want the Confirm on its frame", got)
	}
	if got := run(seg{0, P, C}, seg{0, 0, P}); !slices.Equal(got, []string{"Confirm", "Proposal"}) {
		t.Errorf("Confirm, then the Proposal the capture showed late: CLC per frame %q, want each on its frame", got)
	}
	// A Proposal's second half before its first: it waits for them.
	if got := run(seg{0, P / 2, P - P/2}, seg{0, 0, P / 2}); !slices.Equal(got, []string{"", "Proposal"}) {
		t.Errorf("the Proposal's second segment, then its first: CLC per frame %q, want the Proposal once whole", got)
	}
	// The server's stream goes on after the client's is over past the
	// gap: its Accept is still read.
	A := len(h.accept)
	h.c2s = append(append([]byte(nil), h.proposal...), "GET / HTTP/1.1\r\n\r\n"...)
	if got := run(seg{1, 0, 0}, seg{0, P, len(h.c2s) - P}, seg{1, 0, A}); !slices.Equal(got, []string{"", "", "Accept"}) {
		t.Errorf("application data past the acknowledged gap, then the Accept: CLC per frame %q", got)
	}
}

// TestCLCWholeAfterCutCopy: a mirror that truncates its copies (ERSPAN's
// T bit) and brings them to a capture point that sees the segments too,
// each copy before its segment: the stream takes the cut copy's bytes
// (zeros where the cut was), and the segment whole after it, which the
// assembler takes for a retransmission, still carries its messages
// whole, as in the capture without copies.
func TestCLCWholeAfterCutCopy(t *testing.T) {
	// handshake-credits: ANCK's, whose Accept and Confirm are read as
	// ANCK's by the Proposal before them.
	for _, name := range []string{"reference/pingpong", "reference/decline-nordma", "anck/handshake-credits"} {
		frames, _, err := mutate.ReadFile("../testdata/" + name + ".pcap")
		if err != nil {
			t.Fatal(err)
		}
		want := clcLines(t, frames, false)
		for _, cut := range []int{80, 100} {
			var both []mutate.Frame
			for i, p := range frames {
				cp := p
				d := p.Data[:min(len(p.Data), cut)]
				cp.Data = mutate.Carry("erspan2", d, uint32(i), len(d) < len(p.Data))
				cp.CI.CaptureLength, cp.CI.Length = len(cp.Data), len(cp.Data)
				cp.CI.Timestamp = p.CI.Timestamp.Add(-time.Millisecond)
				both = append(both, cp, p)
			}
			if got := clcLines(t, both, true); !slices.Equal(got, want) {
				t.Errorf("%s, copies cut to %d bytes before each frame: the frames' CLC messages\n%q\nwant\n%q", name, cut, got, want)
			}
		}
	}
}

// clcLines lists the CLC messages the reader decodes in frames, each as
// its type and length; bare: only of frames no tunnel carried.
func clcLines(t *testing.T, frames []mutate.Frame, bare bool) []string {
	t.Helper()
	r, err := NewReader("clc", mutate.NewSource(frames), layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if bare && f.Tunnel != nil {
			continue
		}
		for _, c := range f.CLC {
			out = append(out, fmt.Sprintf("%v %d whole=%v anck=%v", c.Type, c.Length, c.StepCaptured(), c.ANCK))
		}
	}
}

// TestCLCLengthMended: pingpong.pcap's Accept with its length field
// damaged (160 to 8352, the segment's checksum failing) is read as sent,
// at its own length, and its frame carries a note naming both lengths
// (ErrLengthMended), not an error of the message. So is one with a byte
// of its leading eyecatcher damaged, its trailer intact
// (ErrEyecatcherMended); the same damage in a segment whose checksum
// verifies (the sender's bytes) is no CLC.
func TestCLCLengthMended(t *testing.T) {
	frames, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/pingpong.pcap")
	const accept = 6 // frame 7
	for _, v := range []struct {
		at           int
		mask         byte
		note, detail string
		sumFixed     bool
	}{
		{66 + 5, 0x20, "length", "length 8352", false},
		{66 + 1, 0x96, "eyecatcher", "eyecatcher e2 42 c3 d9", false},
		{66 + 1, 0x96, "", "", true},
	} {
		fs := slices.Clone(frames)
		fs[accept].Data = bytes.Clone(fs[accept].Data)
		fs[accept].Data[v.at] ^= v.mask
		if v.sumFixed {
			sumAsSent(fs[accept].Data, frames[accept].Data, v.at)
		}
		if f := frameOf(t, fs, accept+1); f != nil {
			if v.sumFixed {
				if f.TCPSum.Damaged() || len(f.CLC) != 0 {
					t.Errorf("%s damaged, checksum fixed: checksum damaged %v, CLC %v; want a whole segment of no CLC", v.note, f.TCPSum.Damaged(), f.CLC)
				}
				continue
			}
			if n := len(frames[accept].Data) - 66; len(f.CLC) != 1 || f.CLC[0].Type != decode.CLCTypeAccept || int(f.CLC[0].Length) != n {
				t.Fatalf("%s damaged: frame 7: CLC %v, want the Accept of %d bytes", v.note, f.CLC, n)
			}
			if len(f.CLCErr) != 1 || !errors.Is(f.CLCErr[0], ErrMended) || !strings.Contains(f.CLCErr[0].Error(), v.detail) {
				t.Errorf("%s damaged: frame 7: errors %v, want one note of the %s mended", v.note, f.CLCErr, v.note)
			}
		}
	}
}

// sumAsSent makes the TCP checksum of data (an Ethernet frame of IPv4
// without options: the TCP header at 34) verify again after its byte at
// was changed from the one orig holds there, as the segment's sender
// would have made it. The checksum is a one's complement sum of 16-bit
// words: a byte at an even offset from the header's start is a word's
// high byte.
func sumAsSent(data, orig []byte, at int) {
	const tcp = 14 + 20
	word := func(b []byte) uint32 { i := at - (at-tcp)%2; return uint32(b[i])<<8 | uint32(b[i+1]) }
	sum := binary.BigEndian.Uint16(data[tcp+16:])
	diff := uint32(^sum) + uint32(^uint16(word(orig))) + word(data)
	for diff > 0xffff {
		diff = diff&0xffff + diff>>16
	}
	binary.BigEndian.PutUint16(data[tcp+16:], ^uint16(diff))
}

// frameOf reads fs through a Reader (CLC reassembly included) up to frame
// number, and returns it; nil, with the test failed, where there is none.
func frameOf(t *testing.T, fs []rawFrame, number int) *Frame {
	t.Helper()
	r, err := NewReader("mended", mutate.NewSource(fs), layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := r.Next()
		if err != nil {
			t.Errorf("no frame %d: %v", number, err)
			return nil
		}
		if f.Number == number {
			return f
		}
	}
}

// TestDeclineDiagnosisMended: no-ueid.pcap's Decline (0x03030000) with one
// byte of its diagnosis damaged, the segment's checksum failing, is read
// with the code sent, the one byte change the checksums' difference
// allows that gives a code with a name, and its frame carries a note
// (ErrDiagnosisMended); a word's high byte or its low one. The same
// damage in a segment whose checksum verifies (the sender's bytes), or a
// byte of the peer ID damaged (the code as held has a name), is read as
// held.
func TestDeclineDiagnosisMended(t *testing.T) {
	frames, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/no-ueid.pcap")
	const decline = 4 // frame 5
	d := frames[decline].Data
	clc := 14 + 20 + int(d[14+20+12]>>4)*4
	if !bytes.Equal(d[clc:clc+4], decode.EyecatcherSMCR[:]) || binary.BigEndian.Uint32(d[clc+16:]) != 0x03030000 {
		t.Fatalf("frame 5: no Decline 0x03030000 at %d", clc)
	}
	for _, v := range []struct {
		name     string
		at       int
		mask     byte
		sumFixed bool
		want     decode.DeclineCode
		mended   bool
	}{
		{"low byte", clc + 17, 0x40, false, 0x03030000, true},
		{"high byte", clc + 16, 0x10, false, 0x03030000, true},
		{"checksum fixed", clc + 17, 0x40, true, 0x03430000, false},
		{"peer ID", clc + 9, 0x40, false, 0x03030000, false},
	} {
		fs := slices.Clone(frames)
		fs[decline].Data = bytes.Clone(d)
		fs[decline].Data[v.at] ^= v.mask
		if v.sumFixed {
			sumAsSent(fs[decline].Data, d, v.at)
		}
		if f := frameOf(t, fs, decline+1); f != nil {
			if f.TCPSum.Damaged() == v.sumFixed {
				t.Errorf("%s: checksum damaged %v", v.name, f.TCPSum.Damaged())
			}
			if len(f.CLC) != 1 || f.CLC[0].Type != decode.CLCTypeDecline || f.CLC[0].Decline.Diagnosis != v.want {
				t.Fatalf("%s: CLC %v, want the Decline with %#08x", v.name, f.CLC, uint32(v.want))
			}
			noted := len(f.CLCErr) == 1 && errors.Is(f.CLCErr[0], ErrDiagnosisMended)
			if noted != v.mended || len(f.CLCErr) > 1 {
				t.Errorf("%s: errors %v, want the diagnosis noted mended: %v", v.name, f.CLCErr, v.mended)
			}
		}
	}
}

// TestDeclineEyecatcherAndDiagnosisMended: no-ueid.pcap's Decline with one
// byte of its eyecatcher and one of its diagnosis damaged is read as sent
// (the eyecatcher one byte off, eyecatcherMended; the diagnosis by what
// the checksums differ less the eyecatcher's byte), with both notes; a
// word's high byte or its low one each.
func TestDeclineEyecatcherAndDiagnosisMended(t *testing.T) {
	frames, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/no-ueid.pcap")
	const decline = 4 // frame 5
	d := frames[decline].Data
	clc := 14 + 20 + int(d[14+20+12]>>4)*4
	for _, v := range []struct {
		name     string
		eye, dia int // offsets in the message
	}{
		{"high bytes", 0, 16},
		{"low bytes", 1, 17},
		{"high and low", 2, 17},
		{"low and high", 3, 16},
	} {
		fs := slices.Clone(frames)
		fs[decline].Data = bytes.Clone(d)
		fs[decline].Data[clc+v.eye] ^= 0x21
		fs[decline].Data[clc+v.dia] ^= 0x40
		f := frameOf(t, fs, decline+1)
		if f == nil {
			continue
		}
		if len(f.CLC) != 1 || f.CLC[0].Type != decode.CLCTypeDecline || f.CLC[0].Decline.Diagnosis != 0x03030000 {
			t.Errorf("%s: CLC %v, want the Decline with 0x03030000", v.name, f.CLC)
			continue
		}
		if len(f.CLCErr) != 2 || !errors.Is(f.CLCErr[0], ErrEyecatcherMended) || !errors.Is(f.CLCErr[1], ErrDiagnosisMended) {
			t.Errorf("%s: errors %v, want the eyecatcher and the diagnosis noted mended", v.name, f.CLCErr)
		}
	}
}

// TestCLCBareSkipLeavesCopyAway: four frames of multiconn.pcap's fourth
// connection (client port 36954) as a fuzzer damaged them (TestHeavyDamage,
// seed 403, copy 5): the SYN's checksums fail, the Proposal's sequence
// number is damaged (+0x3e00), the server's ACK after the Confirm has its
// acknowledgement number damaged (far past everything sent); the client's
// FIN, which that ACK covers, asks the assembler past the gap before it.
// The Proposal's copy lies further ahead than a handshake's messages
// reach, so it is left out as it comes; with its sequence number nearer
// (+0x2000) the stream queues it, and the bytes queued at or past the
// FIN's sequence number are no bytes its sender sent before it (an ACK or
// FIN carries the next sequence number). Either way no CLC message is
// read on the FIN's frame.
func TestCLCBareSkipLeavesCopyAway(t *testing.T) {
	all := readRaw(t, testutil.Root(t)+"/samples/multiconn.pcap")
	damage := []struct {
		frame int
		at    []int
		to    []byte
	}{
		{689, []int{24, 45}, []byte{0xfe, 0xaa}},
		{695, []int{6, 40, 56, 76, 106, 117}, []byte{0x29, 0xee, 0x22, 0xfb, 0x29, 0x9d}},
		{790, []int{42, 43, 59}, []byte{0xcd, 0x44, 0x60}},
		{5171, nil, nil},
	}
	for _, seqHigh := range []byte{0xee, 0xd0} { // +0x3e00, +0x2000
		damage[1].to[1] = seqHigh
		var fs []rawFrame
		for _, d := range damage {
			f := all[d.frame-1]
			f.Data = bytes.Clone(f.Data)
			for j, at := range d.at {
				f.Data[at] = d.to[j]
			}
			fs = append(fs, f)
		}
		if got := clcLines(t, fs, false); len(got) != 0 {
			t.Errorf("sequence number's byte 0x%02x: CLC messages %q, want none (none on the FIN, frame 5171)", seqHigh, got)
		}
	}
}

// TestCLCFarCopyShown: pingpong.pcap's handshake with no checksum judged
// (the windows of every segment before the Accept damaged) and the Accept's
// sequence number damaged (+0x1000000), its checksum failing as held:
// further from where the server's stream goes on than a handshake's
// messages reach, it is a damaged copy left out of the stream, its whole
// Accept read on its own frame, as for a copy whose checksum was judged.
func TestCLCFarCopyShown(t *testing.T) {
	fs := readRaw(t, pingpong)
	const accept = 9 // frame 10
	for i := 4; i <= accept; i++ {
		fs[i].Data = bytes.Clone(fs[i].Data)
		if i < accept {
			fs[i].Data[14+20+14] ^= 0x04 // the TCP window
		}
	}
	fs[accept].Data[14+20+4] ^= 0x01 // the sequence number's high byte
	if f := frameOf(t, fs, accept+1); f != nil {
		if len(f.CLC) != 1 || f.CLC[0].Type != decode.CLCTypeAccept {
			t.Errorf("frame %d: CLC %v, want the Accept", accept+1, f.CLC)
		}
	}
}
