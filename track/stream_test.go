package track

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
)

// streamRec is a sink that keeps every stream whole, for tests.
type streamRec struct {
	streams map[[2]int]*recStream // by connection ID and direction
	order   []StreamChunk         // every chunk, Data copied
	keys    [][2]int              // each chunk's connection ID and direction
}

type recStream struct {
	data  []byte
	gaps  []StreamChunk
	ended bool
	next  uint64 // offset the next chunk must have
	bad   string // first offset mismatch
}

func newStreamRec() *streamRec { return &streamRec{streams: map[[2]int]*recStream{}} }

func (r *streamRec) StreamChunk(ch *StreamChunk) {
	k := [2]int{ch.Conn.ID, int(ch.Dir)}
	s := r.streams[k]
	if s == nil {
		s = &recStream{}
		r.streams[k] = s
	}
	if ch.Offset != s.next && s.bad == "" {
		s.bad = fmt.Sprintf("frame %d: chunk at offset %d, want %d", ch.Frame, ch.Offset, s.next)
	}
	x := *ch
	x.Conn = nil
	x.Data = bytes.Clone(ch.Data)
	x.Writes = append([]int(nil), ch.Writes...)
	r.order = append(r.order, x)
	r.keys = append(r.keys, k)
	switch {
	case ch.End:
		s.ended = true
	case ch.Cause != GapNone:
		s.gaps = append(s.gaps, x)
		s.next += ch.Gap
	default:
		s.data = append(s.data, ch.Data...)
		s.next += uint64(len(ch.Data))
	}
}

// TestStreamSamples: in every kernel capture of the repository, each
// SMC-R connection's reassembled stream is as long as its producer
// cursors say (Flow.Bytes, which the views show), with no gap where the
// capture holds every frame, and carries the bytes the lab's programs
// write: smcping's messages (a 4-byte big-endian length, then byte i = i
// mod 256; probe/pingpong.go and probe/wire.go) in this lab's samples (the
// reference captures come from an earlier lab's program, a header and
// then the alphabet).
func TestStreamSamples(t *testing.T) {
	root := testutil.Root(t)
	for _, name := range []string{
		"samples/pingpong.pcap", "samples/long.pcap", "samples/multiconn.pcap", "samples/multilink.pcap",
		"samples/lossy.pcap", "samples/slow-reader.pcap", "samples/silent-link.pcap", "samples/teardown.pcap",
		"testdata/reference/pingpong.pcap",
	} {
		t.Run(name, func(t *testing.T) {
			rec := newStreamRec()
			tr := New(Options{Stream: rec})
			eachFrame(t, root+"/"+name, tr.Feed)
			s := tr.Snapshot()
			n := 0
			for i := range s.Conns {
				c := &s.Conns[i]
				if c.Outcome != OutcomeSMCR {
					continue
				}
				for d := range 2 {
					st := rec.streams[[2]int{c.ID, d}]
					if st == nil {
						if c.Flow[d].Bytes != 0 {
							t.Errorf("conn %d %v: no stream, cursors say %d B", c.ID, Dir(d), c.Flow[d].Bytes)
						}
						continue
					}
					n++
					if st.bad != "" {
						t.Errorf("conn %d %v: %s", c.ID, Dir(d), st.bad)
					}
					if got := uint64(len(st.data)); got != c.Flow[d].Bytes || len(st.gaps) != 0 {
						t.Errorf("conn %d %v: reassembled %d B with gaps %v, cursors say %d B", c.ID, Dir(d), got, st.gaps, c.Flow[d].Bytes)
					}
					if err := smcpingMessages(st.data); err != nil && strings.HasPrefix(name, "samples/") {
						t.Errorf("conn %d %v: %v", c.ID, Dir(d), err)
					}
					if c.Closed() && !st.ended {
						t.Errorf("conn %d %v: closed, stream not ended", c.ID, Dir(d))
					}
				}
			}
			if n == 0 {
				t.Fatal("no SMC-R stream")
			}
		})
	}
}

// smcpingMessages checks that b is whole smcping messages: a 4-byte
// big-endian header whose low 31 bits are the message's length (the top
// bit marks bulk data), then byte i of the message = i mod 256. Any byte
// misplaced by the reassembly (a wrap, a packet of a multi-packet WRITE,
// a retransmitted copy) breaks it.
//
// smcping --digest fills payloads from a seeded generator instead (the lab
// compares those streams with the digests the guests log): a stream whose
// first message lacks the pattern is checked for the headers alone.
func smcpingMessages(b []byte) error {
	pattern := len(b) < 8 || b[4] == 4 && b[5] == 5 && b[6] == 6 && b[7] == 7
	for off := 0; off < len(b); {
		if len(b)-off < 4 {
			return fmt.Errorf("offset %d: %d bytes left, no message header", off, len(b)-off)
		}
		n := int(uint32(b[off])<<24|uint32(b[off+1])<<16|uint32(b[off+2])<<8|uint32(b[off+3])) & 0x7fffffff
		if n < 4 || off+n > len(b) {
			return fmt.Errorf("offset %d: message length %d, %d bytes left", off, n, len(b)-off)
		}
		for i := 4; i < n && pattern; i++ {
			if b[off+i] != byte(i) {
				return fmt.Errorf("offset %d: byte %d of a %d-byte message is %#x, want %#x", off+i, i, n, b[off+i], byte(i))
			}
		}
		off += n
	}
	return nil
}

// placeRelease drives one direction's reassembly directly: WRITE packets
// placed at RMBE offsets, then releases of the producer cursor.
type placeRelease struct {
	place   []placed
	from    uint32 // producer cursor count before the release
	n       uint64 // bytes released
	size    uint32
	want    string // released bytes, a gap of k bytes as "[k]"
	wantSeg int    // WRITE pieces still kept after the release
}

type placed struct {
	at   uint64
	data string
}

// TestStreamPlaceRelease: the RMBE model on crafted WRITE orders.
func TestStreamPlaceRelease(t *testing.T) {
	for _, tc := range []struct {
		name string
		placeRelease
	}{
		{"in order", placeRelease{place: []placed{{0, "abc"}, {3, "def"}}, n: 6, size: 16, want: "abcdef"}},
		{"out of order", placeRelease{place: []placed{{3, "def"}, {0, "abc"}}, n: 6, size: 16, want: "abcdef"}},
		{"same bytes twice (a copy sent again)", placeRelease{place: []placed{{0, "abc"}, {0, "abc"}, {3, "def"}}, n: 6, size: 16, want: "abcdef"}},
		{"overlap: the later WRITE wins", placeRelease{place: []placed{{0, "abcdef"}, {2, "XY"}}, n: 6, size: 16, want: "abXYef"}},
		{"overlap across two", placeRelease{place: []placed{{0, "abc"}, {3, "def"}, {2, "XY"}}, n: 6, size: 16, want: "abXYef"}},
		{"missed WRITE: a gap", placeRelease{place: []placed{{0, "abc"}, {6, "ghi"}}, n: 9, size: 16, want: "abc[3]ghi"}},
		{"nothing placed", placeRelease{n: 4, size: 16, want: "[4]"}},
		{"wrap", placeRelease{place: []placed{{14, "ab"}, {0, "cd"}}, from: 14, n: 4, size: 16, want: "abcd"}},
		{"wrap, second WRITE missed", placeRelease{place: []placed{{14, "ab"}}, from: 14, n: 4, size: 16, want: "ab[2]"}},
		{"partial release keeps the rest", placeRelease{place: []placed{{0, "abcdef"}}, n: 4, size: 16, want: "abcd", wantSeg: 1}},
		{"WRITE past the RMBE end is cut", placeRelease{place: []placed{{14, "abcd"}}, from: 14, n: 4, size: 16, want: "ab[2]"}},
		{"more than an RMBE at once", placeRelease{place: []placed{{0, "abcd"}}, from: 0, n: 8, size: 4, want: "[4]abcd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newStreamRec()
			tr := &Tracker{opts: Options{Stream: rec}}
			c := &Conn{ID: 1}
			s := &c.streamOf().dir[DirC2S]
			for i, p := range tc.place {
				s.place(p.at, []byte(p.data), tc.size, i+1)
			}
			e := streamEmit{t: tr, c: c, d: DirC2S, s: s, in: &input{number: 99}}
			e.release(tc.from, tc.n, tc.size, GapNotCaptured)
			var got strings.Builder
			for _, ch := range rec.order {
				if ch.Cause != GapNone {
					fmt.Fprintf(&got, "[%d]", ch.Gap)
					continue
				}
				got.Write(ch.Data)
			}
			if got.String() != tc.want {
				t.Errorf("released %q, want %q", got.String(), tc.want)
			}
			if len(s.segs) != tc.wantSeg {
				t.Errorf("%d WRITE pieces kept, want %d: %v", len(s.segs), tc.wantSeg, s.segs)
			}
			if st := rec.streams[[2]int{1, 0}]; st.bad != "" {
				t.Error(st.bad)
			}
		})
	}
}

// streamsOf reassembles the capture frames (read from path, possibly
// changed) and returns the tracker's snapshot and the streams.
func streamsOf(t *testing.T, path string, frames []rawFrame) (Snapshot, *streamRec) {
	t.Helper()
	_, lt := testutil.ReadFrames(t, path)
	rec := newStreamRec()
	tr := New(Options{Stream: rec})
	eachRaw(t, path, lt, frames, tr.Feed)
	return tr.Snapshot(), rec
}

// TestStreamCrafted changes kernel traffic the way networks and capture
// points do and checks the reassembled streams: a retransmitted copy and
// two requests swapped change nothing; a packet the capture missed is a
// gap of exactly its bytes, with its cause, and every other byte stays.
// long.pcap's bulk connection has multi-packet WRITEs (FIRST, MIDDLE,
// LAST) that wrap its RMBE.
func TestStreamCrafted(t *testing.T) {
	path := testutil.Root(t) + "/samples/long.pcap"
	frames, _ := testutil.ReadFrames(t, path)
	base, baseRec := streamsOf(t, path, frames)
	// The bulk direction: the longest stream.
	var key [2]int
	for k, s := range baseRec.streams {
		if b := baseRec.streams[key]; b == nil || len(s.data) > len(b.data) {
			key = k
		}
	}
	want := baseRec.streams[key].data
	// A MIDDLE packet in the middle of the bulk, and its frame index.
	var mid []int
	var midLen []int
	_, lt := testutil.ReadFrames(t, path)
	eachRaw(t, path, lt, frames, func(f *capture.Frame) {
		if f.BTH != nil && f.BTH.Opcode == 0x07 { // RC RDMA WRITE Middle
			mid = append(mid, f.Number-1)
			midLen = append(midLen, len(f.BTH.Data()))
		}
	})
	if len(mid) < 10 {
		t.Fatalf("%d WRITE MIDDLE packets in %s", len(mid), path)
	}
	m := len(mid) / 2
	i := mid[m]
	edit := func(fn func(out []rawFrame) []rawFrame) []rawFrame {
		return fn(append([]rawFrame(nil), frames...))
	}
	for _, tc := range []struct {
		name   string
		frames []rawFrame
		gap    uint64
		gapWhy GapCause
	}{
		{name: "retransmitted copy", frames: edit(func(o []rawFrame) []rawFrame {
			return slices.Insert(o, i+1, rawFrame{CI: o[i].CI, Data: bytes.Clone(o[i].Data)})
		})},
		{name: "two requests swapped", frames: edit(func(o []rawFrame) []rawFrame {
			o[i], o[i+1] = o[i+1], o[i]
			return o
		})},
		{name: "MIDDLE not captured", frames: edit(func(o []rawFrame) []rawFrame {
			return slices.Delete(o, i, i+1)
		}), gap: uint64(midLen[m]), gapWhy: GapNotCaptured},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, rec := streamsOf(t, path, tc.frames)
			st := rec.streams[key]
			if st == nil {
				t.Fatal("no stream")
			}
			if st.bad != "" {
				t.Error(st.bad)
			}
			if tc.gap == 0 {
				if len(st.gaps) != 0 || !bytes.Equal(st.data, want) {
					t.Errorf("stream %d B with gaps %v, want the %d B of the capture as it was", len(st.data), st.gaps, len(want))
				}
			} else {
				if len(st.gaps) != 1 || st.gaps[0].Gap != tc.gap || st.gaps[0].Cause != tc.gapWhy {
					t.Fatalf("gaps %+v, want one of %d B (%v)", st.gaps, tc.gap, tc.gapWhy)
				}
				at := st.gaps[0].Offset
				got := append(append([]byte(nil), st.data[:at]...), want[at:at+tc.gap]...)
				got = append(got, st.data[at:]...)
				if !bytes.Equal(got, want) {
					t.Errorf("the bytes around the gap differ from the capture's")
				}
			}
			// The cursors count the same bytes: the gap is in the stream.
			if c, b := findConn(s, key[0]), findConn(base, key[0]); c == nil || c.Flow[key[1]].Bytes != b.Flow[key[1]].Bytes {
				t.Errorf("conn %d: cursors count other bytes than in the capture as it was", key[0])
			}
		})
	}
}

func findConn(s Snapshot, id int) *Conn {
	for i := range s.Conns {
		if s.Conns[i].ID == id {
			return &s.Conns[i]
		}
	}
	return nil
}

// TestStreamMidStream: a capture that joins connections mid-stream says
// so first (a gap of unknown length before the capture), and marks the
// bytes it cannot place (no CLC told the RMB's address) as gaps of their
// length: nothing is made up.
func TestStreamMidStream(t *testing.T) {
	rec := newStreamRec()
	tr := New(Options{Stream: rec})
	eachFrame(t, testutil.Root(t)+"/samples/pingpong.pcap", func(f *capture.Frame) {
		if f.Number > 1000 {
			tr.Feed(f)
		}
	})
	if len(rec.streams) != 2 {
		t.Fatalf("%d streams, want 2", len(rec.streams))
	}
	for k, st := range rec.streams {
		if len(st.gaps) == 0 || st.gaps[0].Cause != GapBefore || st.gaps[0].Gap != 0 {
			t.Fatalf("%v: first gap %+v, want one of unknown length before the capture", k, st.gaps)
		}
		for _, g := range st.gaps[1:] {
			if g.Cause != GapNoAddress || g.Gap == 0 {
				t.Errorf("%v: gap %+v, want RMB address unknown with a length", k, g)
			}
		}
		if len(st.data) != 0 || st.bad != "" {
			t.Errorf("%v: %d B placed without an RMB address (%s)", k, len(st.data), st.bad)
		}
	}
}

// TestStreamFields: on every kernel sample, each WRITE packet's
// smc.stream.offset and smc.stream.len name the bytes of the reassembled
// stream that its smc.stream holds, whether the fast path or the general
// one followed it (the fields are computed without Options.Stream, the
// stream with it); and every byte of every stream is named by some WRITE.
func TestStreamFields(t *testing.T) {
	root := testutil.Root(t)
	for _, name := range []string{"samples/pingpong.pcap", "samples/long.pcap", "samples/multiconn.pcap", "samples/multilink.pcap", "samples/lossy.pcap"} {
		t.Run(name, func(t *testing.T) {
			path := root + "/" + name
			rec := newStreamRec()
			eachFrame(t, path, New(Options{Stream: rec}).Feed)
			covered := map[[2]int]uint64{}
			n := 0
			fieldRun(t, path, 0, func(f *capture.Frame, r *decode.Record) {
				var id, dir, off, ln uint64
				var data []byte
				has := 0
				for i, fid := range r.IDs {
					switch decode.Def(fid).Name {
					case "smc.conn.id":
						id = r.Vals[i].U
					case "smc.conn.dir":
						if r.Vals[i].S == "S->C" {
							dir = 1
						}
					case "smc.stream.offset":
						off, has = r.Vals[i].U, has+1
					case "smc.stream.len":
						ln, has = r.Vals[i].U, has+1
					case "smc.stream":
						data, has = r.Vals[i].B, has+1
					}
				}
				if has == 0 {
					return
				}
				n++
				st := rec.streams[[2]int{int(id), int(dir)}]
				if has != 3 || st == nil || uint64(len(data)) != ln || off+ln > uint64(len(st.data)) || !bytes.Equal(st.data[off:off+ln], data) {
					t.Fatalf("frame %d: conn %d dir %d offset %d len %d (%d fields): not the stream's bytes", f.Number, id, dir, off, ln, has)
				}
				k := [2]int{int(id), int(dir)}
				covered[k] = max(covered[k], off+ln)
			})
			if n == 0 {
				t.Fatal("no WRITE with smc.stream fields")
			}
			for k, st := range rec.streams {
				if covered[k] != uint64(len(st.data)) {
					t.Errorf("conn %d dir %d: WRITEs name bytes up to %d of %d", k[0], k[1], covered[k], len(st.data))
				}
			}
		})
	}
}

// TestDumpDeviceStream: a connection seen through ANCK's dump device (the
// client host's: the data it received, its CDCs both ways) has the same
// server-to-client stream as the RoCE capture it shows, placed from the
// data frames and released by the CDCs; the client's own data, which the
// host does not dump, is a gap of exactly its length with its cause.
func TestDumpDeviceStream(t *testing.T) {
	streams := func(file string) (*streamRec, Snapshot) {
		rec := newStreamRec()
		tr := New(Options{Stream: rec})
		eachFrame(t, file, tr.Feed)
		return rec, tr.Snapshot()
	}
	roce, _ := streams(testutil.Root(t) + "/testdata/anck/handshake-credits.pcap")
	dump, s := streams(testutil.Root(t) + "/testdata/anck/dump-device.pcap")
	if len(s.Conns) != 1 {
		t.Fatalf("%d connections in the dump", len(s.Conns))
	}
	id := s.Conns[0].ID
	want, got := roce.streams[[2]int{1, int(DirS2C)}], dump.streams[[2]int{id, int(DirS2C)}]
	if want == nil || got == nil || len(want.data) == 0 || !bytes.Equal(got.data, want.data) || len(got.gaps) != 0 || got.bad != "" {
		t.Fatalf("server to client: dump %+v, RoCE %+v", got, want)
	}
	c2s := dump.streams[[2]int{id, int(DirC2S)}]
	var gap uint64
	for _, g := range c2s.gaps {
		if g.Cause != GapNotDumped {
			t.Errorf("client to server gap %+v: want %v", g, GapNotDumped)
		}
		gap += g.Gap
	}
	if sent := uint64(len(roce.streams[[2]int{1, int(DirC2S)}].data)); len(c2s.data) != 0 || gap != sent || !c2s.ended {
		t.Errorf("client to server: %d bytes, gaps of %d (want %d), ended %v", len(c2s.data), gap, sent, c2s.ended)
	}
	// A data frame the capture missed (frame 14, the server's second 64
	// bytes) is a gap of its own cause, not the host's choice.
	frames, lt := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/anck/dump-device.pcap")
	if n := len(frames[13].Data); n != 14+20+8+16+64 {
		t.Fatalf("frame 14 is %d bytes: not the dump's 64-byte data frame", n)
	}
	dropped := testutil.WriteFrames(t, "dropped.pcap", lt, append(frames[:13:13], frames[14:]...))
	missed, _ := streams(dropped)
	s2c := missed.streams[[2]int{id, int(DirS2C)}]
	if len(s2c.gaps) != 1 || s2c.gaps[0].Cause != GapDumpMissed || s2c.gaps[0].Gap != 64 || len(s2c.data) != len(want.data)-64 {
		t.Errorf("a data frame dropped: gaps %+v, %d bytes (want one gap of 64, %s)", s2c.gaps, len(s2c.data), GapDumpMissed)
	}
}

// TestStreamMendedWrite: WRITEs of pingpong.pcap whose copies in the
// capture have one payload byte changed (their ICRC fails, the responder's
// ACK says it took them), or one byte of the RETH (the address the bytes
// go to), carry the bytes as sent: the ICRC names the byte and its value,
// and the stream is the clean capture's, with no gap. Two
// bytes changed in one WRITE leave its bytes a gap of their length.
func TestStreamMendedWrite(t *testing.T) {
	path := crafted.Pingpong(t)
	clean := readRawFrames(t, path)
	_, want := streamsOf(t, path, clean)
	const bth = crafted.RoCESMCOff - 12
	fs := slices.Clone(clean)
	n := 0
	var two int
	for i := range fs {
		d := fs[i].Data
		if len(d) > crafted.RoCESMCOff+16+20 && d[bth] == 0x0a && i > 40 && n < 6 { // RDMA WRITE Only: RETH, then data
			fs[i].Data = bytes.Clone(d)
			if n == 5 {
				fs[i].Data[crafted.RoCESMCOff+6] ^= 0x04 // the RETH's VA: where the bytes go
			} else {
				fs[i].Data[crafted.RoCESMCOff+16+7] ^= 0x21
			}
			n++
			if n == 5 {
				two = i
			}
		}
	}
	if n != 6 {
		t.Fatalf("%d WRITEs damaged", n)
	}
	_, got := streamsOf(t, path, fs)
	for k, w := range want.streams {
		g := got.streams[k]
		if g == nil || !bytes.Equal(g.data, w.data) || len(g.gaps) != len(w.gaps) {
			t.Errorf("stream %v: %d bytes, %d gaps; want the clean capture's %d, %d", k, len(g.data), len(g.gaps), len(w.data), len(w.gaps))
		}
	}
	fs[two].Data[crafted.RoCESMCOff+16+9] ^= 0x01
	_, got = streamsOf(t, path, fs)
	gaps := 0
	for _, g := range got.streams {
		gaps += len(g.gaps)
	}
	if gaps != 1 {
		t.Errorf("%d gaps with two bytes of a WRITE damaged, want 1", gaps)
	}
}

// TestStreamSnapLen: long.pcap (WRITEs of 1 KiB packets, FIRST, MIDDLE
// and LAST, and WRITE ONLYs of 64 bytes) taken with a snap length that
// cuts every WRITE packet's data. A MIDDLE's place follows from the path
// MTU its FIRST carried on the wire, not from what the capture kept of
// it: every byte the capture holds is where the whole capture has it,
// what it cut is a gap "cut by the snap length" (or, at 100 bytes, where
// the CLC messages were cut, "RMB address unknown"), and the stream is as
// long as the producer cursors say.
func TestStreamSnapLen(t *testing.T) {
	all, lt := testutil.ReadFrames(t, testutil.SamplesDir(t)+"/long.pcap")
	run := func(frames []rawFrame) (*streamRec, Snapshot) {
		rec := newStreamRec()
		tr := New(Options{Stream: rec})
		eachRaw(t, "long", lt, frames, tr.Feed)
		return rec, tr.Snapshot()
	}
	whole, ws := run(all)
	for _, snap := range []int{100, 200, 1000} {
		frames := withSnapLen(all, snap)
		rec, s := run(frames)
		if got, want := flowTotalsOf(s), flowTotalsOf(ws); got != want {
			t.Fatalf("snap length %d: CDCs and bytes %v, the whole capture %v", snap, got, want)
		}
		for k, w := range whole.streams {
			// At 100 bytes the CLC messages that tell the RMBs' addresses
			// are cut too.
			held, cut := rec.against(t, fmt.Sprintf("snap length %d", snap), k, w, func(c GapCause) bool {
				return c == GapSnapCut || snap == 100 && c == GapNoAddress
			})
			if bulk := len(w.data) > 1<<20; held+cut != uint64(len(w.data)) || bulk && snap < 1000 && cut == 0 || bulk && snap > 100 && held == 0 {
				t.Errorf("snap length %d, conn %d dir %d: %d bytes held and %d cut, the whole capture %d", snap, k[0], k[1], held, cut, len(w.data))
			}
		}
	}
}

// TestStreamCutCopiesFirst: captures with every frame's copy cut 20 us
// before it (two interfaces captured with two snap lengths). Once one cut
// copy came before its packet whole, the cut frames wait for theirs
// (cutWirePath): the packet whole places its bytes, and the CDC after it
// releases them, whole. Only a CDC the snap length kept whole, whose
// copy comes before the WRITE's packets, releases the bytes its cut
// copies kept (long.pcap's bulk connection, a few packets of its MiB).
func TestStreamCutCopiesFirst(t *testing.T) {
	for _, c := range []struct {
		path    string
		cut     int
		gapsMax int // per 1000 bytes
	}{
		{testutil.SamplesDir(t) + "/long.pcap", 200, 20},
		{testutil.Root(t) + "/testdata/reference/pingpong.pcap", 80, 0},
		{testutil.Root(t) + "/testdata/anck/handshake-credits.pcap", 80, 0},
		{testutil.Root(t) + "/testdata/anck/handshake-credits.pcap", 60, 0},
	} {
		all, lt := testutil.ReadFrames(t, c.path)
		run := func(frames []rawFrame) *streamRec {
			rec := newStreamRec()
			tr := New(Options{Stream: rec})
			eachRaw(t, "copies", lt, frames, tr.Feed)
			return rec
		}
		whole := run(all)
		rec := run(mutate.CutCopiesFirst(all, c.cut))
		what := fmt.Sprintf("%s, copies cut to %d first", c.path, c.cut)
		for k, w := range whole.streams {
			held, gaps := rec.against(t, what, k, w, func(c GapCause) bool { return c == GapSnapCut })
			if held+gaps != uint64(len(w.data)) || gaps*1000 > uint64(c.gapsMax*len(w.data)) {
				t.Errorf("%s: conn %d dir %d: %d bytes held and %d cut, the whole capture %d", what, k[0], k[1], held, gaps, len(w.data))
			}
		}
	}
}

// against compares the chunks rec holds of stream k with w, the whole
// capture's: each kept chunk's bytes are w's at its offset, each gap's
// cause one ok allows. It returns the bytes held and those in gaps.
func (rec *streamRec) against(t *testing.T, what string, k [2]int, w *recStream, ok func(GapCause) bool) (held, gaps uint64) {
	t.Helper()
	for i, ch := range rec.order {
		if rec.keys[i] != k || ch.End {
			continue
		}
		if ch.Cause != GapNone {
			if !ok(ch.Cause) {
				t.Errorf("%s, conn %d dir %d: a gap of %d bytes %q at %d", what, k[0], k[1], ch.Gap, ch.Cause, ch.Offset)
			}
			gaps += ch.Gap
			continue
		}
		if end := ch.Offset + uint64(len(ch.Data)); end > uint64(len(w.data)) || !bytes.Equal(ch.Data, w.data[ch.Offset:end]) {
			t.Fatalf("%s, conn %d dir %d: %d bytes at %d (frame %d) unlike the whole capture's", what, k[0], k[1], len(ch.Data), ch.Offset, ch.Frame)
		}
		held += uint64(len(ch.Data))
	}
	return held, gaps
}
