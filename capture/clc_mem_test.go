package capture

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/testutil"
)

// clcOutcome is what the CLC reassembler decided for one frame.
func clcOutcome(f *Frame) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d smc=%v notclc=%v", f.Number, f.SMCFlow, f.NotCLC)
	for _, m := range f.clcRaw {
		fmt.Fprintf(&b, " msg %x", m)
	}
	for _, e := range f.CLCErr {
		fmt.Fprintf(&b, " err %v", e)
	}
	return b.String()
}

// clcOutcomes reads frames with recycling on (the reader as smcdump runs
// it) or off (keep: the reference, nothing recycled or closed early) and
// returns, for each frame that the reassembler touched, what it decided.
func clcOutcomes(t *testing.T, frames []rawFrame, lt layers.LinkType, keep bool) []string {
	t.Helper()
	r, err := NewReader("diff", &sliceSource{frames: frames}, lt)
	if err != nil {
		t.Fatal(err)
	}
	r.clc.keep = keep
	var out []string
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		if f.SMCFlow || f.NotCLC || len(f.clcRaw) > 0 || len(f.CLCErr) > 0 {
			out = append(out, clcOutcome(f))
		}
	}
	return out
}

// tcpPortsAt returns the offset of the TCP header of an Ethernet frame of
// link type lt, or -1.
func tcpPortsAt(data []byte, lt layers.LinkType) int {
	p := gopacket.NewPacket(data, lt, gopacket.NoCopy)
	tl, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if !ok || len(tl.Contents) < 20 {
		return -1
	}
	off := len(data) - len(tl.Contents) - len(tl.Payload)
	if p.ErrorLayer() != nil || off < 0 {
		return -1
	}
	return off
}

// interleave mixes n copies of frames, each copy's TCP ports moved to
// ports of its own (checksums are not checked) and starting step frames
// after the previous one, so that many handshakes are in flight at once and
// flows are recycled while others go on.
func interleave(frames []rawFrame, lt layers.LinkType, n, step int) []rawFrame {
	var out []rawFrame
	for i := 0; i < len(frames)+n*step; i++ {
		for c := range n {
			j := i - c*step
			if j < 0 || j >= len(frames) {
				continue
			}
			d := append([]byte(nil), frames[j].Data...)
			if off := tcpPortsAt(d, lt); off >= 0 && c > 0 {
				d[off] ^= byte(c)
				d[off+2] ^= byte(c)
			}
			out = append(out, rawFrame{CI: frames[j].CI, Data: d})
		}
	}
	return out
}

// TestCLCRecycleMatchesReference: recycling flows and closing finished
// streams in the assembler at once changes nothing the reader reports, on
// every capture of the repository and on mutations of them (copies
// interleaved on ports of their own, segments duplicated, swapped and
// dropped, time stretched so that stalled handshakes are swept).
func TestCLCRecycleMatchesReference(t *testing.T) {
	touched := 0
	defer func() {
		if touched < 1000 {
			t.Errorf("only %d frames reached the CLC reassembler: the inputs test little", touched)
		}
	}()
	for _, file := range testutil.AllCaptures(t) {
		frames, lt := testutil.ReadFrames(t, file)
		variants := map[string][]rawFrame{"as captured": frames}
		if len(frames) <= 20000 {
			variants["interleaved"] = interleave(frames, lt, 7, 3)
			var dup, swapped, dropped, slow []rawFrame
			for i, f := range frames {
				dup = append(dup, f)
				if i%3 == 0 {
					dup = append(dup, f)
				}
				if i%5 != 4 {
					dropped = append(dropped, f)
				}
				g := f
				g.CI.Timestamp = g.CI.Timestamp.Add(time.Duration(i) * 7 * time.Second)
				slow = append(slow, g)
			}
			swapped = append(swapped, frames...)
			for i := 1; i < len(swapped); i += 4 {
				swapped[i-1], swapped[i] = swapped[i], swapped[i-1]
			}
			variants["duplicated"] = dup
			variants["swapped"] = swapped
			variants["dropped"] = interleave(dropped, lt, 3, 1)
			variants["slow"] = slow
		}
		for name, v := range variants {
			want := clcOutcomes(t, v, lt, true)
			touched += len(want)
			got := clcOutcomes(t, v, lt, false)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Errorf("%s, %s: first difference:\n got %s\nwant %s", filepath.Base(file), name, got[i], want[i])
						break
					}
				}
				t.Errorf("%s, %s: %d frames touched by CLC reassembly, reference %d", filepath.Base(file), name, len(got), len(want))
			}
		}
	}
}

// portFrames returns n copies of frames with client port 1024+i in copy i
// (rewritten in place of the reference captures' client ports).
func portFrames(t *testing.T, frames []rawFrame, n int) [][]rawFrame {
	t.Helper()
	out := make([][]rawFrame, n)
	for i := range out {
		for _, f := range frames {
			d := append([]byte(nil), f.Data...)
			if off := tcpPortsAt(d, layers.LinkTypeEthernet); off >= 0 {
				p := 2 // client -> server: the destination is port 5000
				if d[off] == 5000>>8 && d[off+1] == 5000&0xff {
					p = 0
				}
				port := 1024 + i
				d[off+2-p], d[off+3-p] = byte(port>>8), byte(port)
			}
			out[i] = append(out[i], rawFrame{CI: f.CI, Data: d})
		}
	}
	return out
}

// heapLive is the live heap after a collection.
func heapLive() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestCLCShortConnsRecycled: a capture of short connections (the reference
// declines and fallbacks, each on a port of its own) leaves nothing behind
// in the reassembler or the assembler once each handshake is over, and
// reading it allocates next to nothing per connection: the live heap is
// the same after 2 000 and after 20 000 connections.
func TestCLCShortConnsRecycled(t *testing.T) {
	var conns [][]rawFrame
	const n = 20000
	for _, name := range []string{declineRDM, fallback, noUEID} {
		conns = append(conns, portFrames(t, readRaw(t, name), 64)...)
	}
	src := &lazySource{next: func(i int) []rawFrame {
		if i >= n {
			return nil
		}
		return conns[i%len(conns)]
	}}
	r, err := NewReader("short", src, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	var base, at2k uint64
	var mallocs [2]uint64
	held := -1
	for {
		if src.conn == n && held < 0 {
			// The last connection is being read: the assembler holds it
			// and none of the others (it counts each connection once per
			// direction). Asked here, not after EOF: reading to the end
			// flushes them all.
			_, held = r.clc.asm.FlushCloseOlderThan(time.Unix(1<<40, 0))
		}
		if src.conn == 1000 && base == 0 {
			base = heapLive()
		}
		if src.conn == 2000 && at2k == 0 {
			at2k = heapLive()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			mallocs[0] = m.Mallocs
		}
		if _, err := r.Next(); err != nil {
			break
		}
		if len(r.clc.flows) > 2 {
			t.Fatalf("connection %d: %d flows followed, want the one in flight", src.conn, len(r.clc.flows))
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	mallocs[1] = m.Mallocs
	end := heapLive()
	if held > 2 {
		t.Errorf("the assembler held %d connections at the last one; want every finished handshake let go", held)
	}
	perConn := float64(mallocs[1]-mallocs[0]) / (n - 2000)
	t.Logf("live heap %d B after 1000 connections, %d after 2000, %d after %d; %.3f allocations per connection", base, at2k, end, n, perConn)
	if end > at2k+64<<10 {
		t.Errorf("live heap grew from %d to %d bytes between 2000 and %d connections", at2k, end, n)
	}
	if perConn > 0.1 {
		t.Errorf("%.2f allocations per connection, want none once flows are recycled", perConn)
	}
}

// lazySource replays connections one after the other, as next returns them
// (nil: the end), with timestamps moving on by a millisecond per
// connection.
type lazySource struct {
	next   func(i int) []rawFrame
	conn   int
	frames []rawFrame
	i      int
	at     time.Duration
}

func (s *lazySource) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	for s.i >= len(s.frames) {
		fs := s.next(s.conn)
		if fs == nil {
			return nil, gopacket.CaptureInfo{}, io.EOF
		}
		s.conn++
		s.frames, s.i = fs, 0
		s.at += time.Millisecond
	}
	f := s.frames[s.i]
	s.i++
	ci := f.CI
	ci.Timestamp = ci.Timestamp.Add(s.at)
	return f.Data, ci, nil
}

// TestCLCFlowsBounded: a flood of SMC SYNs whose handshakes never go on
// holds at most maxCLCFlows flows, in the reassembler and in the assembler,
// with a flat heap; a real handshake after it is still reassembled.
func TestCLCFlowsBounded(t *testing.T) {
	raw := readRaw(t, pingpong)
	const n = 20 * maxCLCFlows
	syns := portFrames(t, raw[4:5], 60000)
	src := &lazySource{next: func(i int) []rawFrame {
		switch {
		case i < n:
			f := syns[i%len(syns)][0]
			d := append([]byte(nil), f.Data...)
			if off := tcpPortsAt(d, layers.LinkTypeEthernet); off >= 0 {
				d[off-8] ^= byte(i / len(syns)) // a source address of its own per round of ports
			}
			return []rawFrame{{CI: f.CI, Data: d}}
		case i == n:
			return raw[4:12] // pingpong's handshake
		}
		return nil
	}}
	r, err := NewReader("flood", src, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	var types []int
	var heap0, heapTwo, end uint64
	for {
		if src.conn == 1 && heap0 == 0 {
			heap0 = heapLive()
		}
		if src.conn == 2*maxCLCFlows && heapTwo == 0 {
			heapTwo = heapLive()
		}
		if src.conn == n && end == 0 {
			end = heapLive()
			// Before the handshake: the assembler holds no more of the
			// flood than the reassembler follows (it counts each
			// connection once per direction).
			if _, held := r.clc.asm.FlushCloseOlderThan(time.Unix(1<<40, 0)); held/2 > maxCLCFlows {
				t.Errorf("after %d SYNs the assembler held %d connections, want at most %d", n, held/2, maxCLCFlows)
			}
		}
		f, err := r.Next()
		if err != nil {
			break
		}
		if len(r.clc.flows) > maxCLCFlows {
			t.Fatalf("SYN %d: %d flows followed, want at most %d", src.conn, len(r.clc.flows), maxCLCFlows)
		}
		for _, m := range f.clcRaw {
			types = append(types, int(m[4]))
		}
	}
	runtime.KeepAlive(syns) // in both measures
	// Signed: a heap that shrank between the readings is no growth.
	two, all := int64(heapTwo)-int64(heap0), int64(end)-int64(heap0)
	t.Logf("reader state %d B after %d SYNs, %d after %d", two, 2*maxCLCFlows, all, n)
	// The lookup tables (Go maps) keep their largest size, and churn
	// grows them once more: the state may double, not grow with the SYNs.
	if all > 2*max(two, 0) {
		t.Errorf("reader state grew from %d to %d bytes between %d and %d SYNs", two, all, 2*maxCLCFlows, n)
	}
	if fmt.Sprint(types) != "[1 2 3]" {
		t.Errorf("CLC types after the flood %v, want pingpong's Proposal, Accept, Confirm", types)
	}
}
